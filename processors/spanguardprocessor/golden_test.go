package spanguardprocessor

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestGoldenLadder runs a small trace through every rung of the ladder and
// compares the output with testdata/golden/ladder.json: a streaming call
// whose chunk spans are compressed, an agent loop whose steps are dropped
// past the budget (shallow spans first; the failing tool call kept and
// re-parented to the loop when its step is dropped), a huge
// prompt truncated, and the summary span. Regenerate with -update.
func TestGoldenLadder(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxSpans = 12
		c.SpanLimits.MaxAttributeBytes = 64
	})
	b := newTraceBuilder(0x42, "golden-agent")
	ms := time.Millisecond
	root, call, loop := b.id(), b.id(), b.id()
	var specs []spanSpec
	for i := 0; i < 6; i++ {
		specs = append(specs, spanSpec{id: b.id(), parent: call, name: "gen_ai.chunk", start: 100*ms + time.Duration(i)*20*ms, dur: 15 * ms})
	}
	specs = append(specs, spanSpec{id: call, parent: root, name: "chat gpt-test", start: 50 * ms, dur: 300 * ms,
		attrs: map[string]any{"gen_ai.input.messages": strings.Repeat("You are a helpful agent. ", 20)}})
	for i := 0; i < 8; i++ {
		step := b.id()
		at := 400*ms + time.Duration(i)*time.Second
		specs = append(specs,
			spanSpec{id: b.id(), parent: step, name: "execute_tool search", start: at, dur: 700 * ms, err: i == 7},
			spanSpec{id: step, parent: loop, name: "invoke_agent step", start: at, dur: time.Second})
	}
	specs = append(specs,
		spanSpec{id: loop, parent: root, name: "agent.loop", start: 400 * ms, dur: 8 * time.Second},
		spanSpec{id: root, name: "POST /v1/agent", dur: 9 * time.Second})
	b.send(t, h.g, specs, len(specs))
	h.shutdown()

	require.Len(t, h.sink.AllTraces(), 1)
	td := h.sink.AllTraces()[0]
	forEachSpan([]ptrace.Traces{td}, func(_ pcommon.Resource, s ptrace.Span) {
		if s.Name() == summarySpanName {
			s.SetSpanID(pcommon.SpanID{0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a}) // random in production
		}
	})
	raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	var got bytes.Buffer
	require.NoError(t, json.Indent(&got, raw, "", "  "))
	got.WriteByte('\n')

	path := filepath.Join("testdata", "golden", "ladder.json")
	goldentest.Bytes(t, path, got.Bytes())
}
