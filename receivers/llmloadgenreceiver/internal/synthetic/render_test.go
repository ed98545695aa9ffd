package synthetic

import (
	"testing"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// TestRenderSizesAttributesExactly runs every scenario in every dialect,
// with every fault kind, content, all chunk events and chunk spans, with the
// renderer checking that each span's attribute map was sized for exactly the
// attributes it received: the counts in countAttrs must follow the span
// writers.
func TestRenderSizesAttributesExactly(t *testing.T) {
	sizeCheck = true
	defer func() { sizeCheck = false }()
	faultMixes := [][]config.FaultConfig{
		nil,
		{{Type: config.FaultRateLimit, Probability: 0.3, MaxRetries: 1}, {Type: config.FaultOverloaded, Probability: 0.1}, {Type: config.FaultContextLength, Probability: 0.1}},
		{{Type: config.FaultMidStream, Probability: 0.2}, {Type: config.FaultCancel, Probability: 0.2}, {Type: config.FaultTimeout, Probability: 0.2}},
	}
	for _, dialect := range dialectNames {
		for fi, faults := range faultMixes {
			for _, content := range []bool{false, true} {
				cfg := afapConfig(60)
				cfg.Semconv = dialect
				cfg.Faults = faults
				cfg.Content = config.ContentConfig{Enabled: content, PromptBytes: 64, CompletionBytes: 32}
				cfg.Stream.ChunkEvents = config.ChunkEventsAll
				cfg.Stream.SpanPerChunk = fi == 1
				cfg.Stream.MaxChunkSpans = 5
				cfg.BatchSize = 7
				cfg.Scenarios = nil
				for _, sc := range config.Scenarios {
					cfg.Scenarios = append(cfg.Scenarios, config.ScenarioConfig{Type: sc, Weight: 1})
				}
				require.NoError(t, cfg.Validate())
				sink := &consumertest.TracesSink{}
				require.NotPanics(t, func() { runSync(t, cfg, sink, nil, nil) }, "%s faults=%d content=%v", dialect, fi, content)
				require.Positive(t, sink.SpanCount())
			}
		}
	}
}

// TestIDArenaStrings: ids carved from the arena keep their values when
// later ids fill the same buffer and when a new buffer starts.
func TestIDArenaStrings(t *testing.T) {
	var a idArena
	var got []string
	var want []string
	for i := range 2000 {
		id := [8]byte{byte(i), byte(i >> 8), 0xab, 0xcd, 0, 1, 2, 3}
		got = append(got, a.hex("chatcmpl-", id))
		want = append(want, "chatcmpl-"+hexString(id))
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "call_0001000000000000", a.hex("call_", [8]byte{0, 1}))
}

func hexString(id [8]byte) string {
	const digits = "0123456789abcdef"
	var b []byte
	for _, v := range id {
		b = append(b, digits[v>>4], digits[v&15])
	}
	return string(b)
}

// TestSpanSliceSizing: a batch's span slices are sized from the previous
// batch and still receive every span.
func TestSpanSliceSizing(t *testing.T) {
	cfg := afapConfig(500)
	cfg.BatchSize = 50
	sink := &consumertest.TracesSink{}
	s := runSync(t, cfg, sink, nil, nil)
	total := 0
	for _, td := range sink.AllTraces() {
		total += td.SpanCount()
		seen := map[[16]byte]bool{}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(0).Spans()
			for j := 0; j < spans.Len(); j++ {
				seen[spans.At(j).TraceID()] = true
			}
		}
		assert.Len(t, seen, 50)
	}
	assert.EqualValues(t, s.totals.spans, total)
}

// The configuration's list of dialects is exactly the dialects this mode
// renders, in the same order.
func TestDialectsMatchConfig(t *testing.T) {
	assert.Equal(t, config.SemconvDialects, dialectNames)
}
