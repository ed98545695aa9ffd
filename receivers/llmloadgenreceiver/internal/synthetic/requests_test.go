package synthetic

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// TestRequestsCounterByScenarioAndOutcome: otelcol_llm_loadgen_requests
// counts each emitted request once under its scenario and outcome, as the
// root spans of the emitted traces show them.
func TestRequestsCounterByScenarioAndOutcome(t *testing.T) {
	cfg := afapConfig(400)
	cfg.BatchSize = 9
	cfg.Scenarios = nil
	for _, sc := range config.Scenarios {
		cfg.Scenarios = append(cfg.Scenarios, config.ScenarioConfig{Type: sc, Weight: 1})
	}
	cfg.Faults = []config.FaultConfig{{Type: config.FaultOverloaded, Probability: 0.2}, {Type: config.FaultMidStream, Probability: 0.1}}
	sink := &consumertest.TracesSink{}
	_, tel := runWithTelemetry(t, cfg, sink)

	want := map[[2]string]int64{}
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(0).Spans()
			for j := 0; j < spans.Len(); j++ {
				sp := spans.At(j)
				if !sp.ParentSpanID().IsEmpty() {
					continue
				}
				sc, ok := sp.Attributes().Get(attrScenario)
				require.True(t, ok)
				outcome := "ok"
				if _, failed := sp.Attributes().Get(genai.AttrErrorType); failed {
					outcome = "error"
				}
				want[[2]string{sc.Str(), outcome}]++
			}
		}
	}
	var total int64
	for _, sc := range config.Scenarios {
		for _, outcome := range []string{"ok", "error"} {
			got := metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_requests", attribute.String("scenario", sc), attribute.String("outcome", outcome))
			assert.Equal(t, want[[2]string{sc, outcome}], got, "%s/%s", sc, outcome)
			total += got
		}
		assert.Positive(t, want[[2]string{sc, "ok"}], sc)
	}
	assert.EqualValues(t, 400, total)
	assert.Positive(t, want[[2]string{config.ScenarioChat, "error"}])
}
