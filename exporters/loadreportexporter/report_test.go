package loadreportexporter

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func knownReport(t *testing.T) *Report {
	cfg := testConfig(t)
	st := newTestState(cfg)
	out := st.consumeTraces(knownRun())
	assert.Equal(t, map[string]int64{spanRequest: 50, spanNotModelCall: 1, spanNotGenAI: 1, spanGuardSummary: 1}, out)
	pts := st.consumeMetrics(knownMetrics())
	assert.Equal(t, map[string]int64{pointUsed: 37}, pts)
	return st.build(true)
}

func TestGoldenJSONAndMarkdown(t *testing.T) {
	r := knownReport(t)
	rd, err := newRenderer(createDefaultConfig().CancelledErrorTypes)
	require.NoError(t, err)
	js, err := rd.render(FormatJSON, r)
	require.NoError(t, err)
	golden(t, "report.json", js)
	md, err := rd.render(FormatMarkdown, r)
	require.NoError(t, err)
	golden(t, "report.md", md)

	// The JSON reads back into the same report.
	var back Report
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, r.Verdict, back.Verdict)
}

func TestKnownRunValues(t *testing.T) {
	r := knownReport(t)
	require.Len(t, r.Rows, 2)
	a := r.Rows[0]
	assert.Equal(t, groupKey{"vllm-a:8000", "llama-3.1-8b", "chat"}, groupKey{a.Target, a.Model, a.Scenario})
	assert.EqualValues(t, 40, a.Requests)
	assert.EqualValues(t, 37, a.Successes)
	assert.EqualValues(t, 3, a.Errors)
	assert.EqualValues(t, 1, a.Cancelled)
	// Cancelled requests are not errors of the service: 2 of 40.
	assert.InDelta(t, 0.05, a.ErrorRate, 1e-9)
	assert.InDelta(t, 0.025, a.CancelledRate, 1e-9)
	require.NotNil(t, a.TTFT)
	assert.EqualValues(t, 37, a.TTFT.Count)
	// TTFT = 100 ms + 10 ms·i over the successful i: max 490 ms (i = 39), exact.
	assert.InDelta(t, 0.49, a.TTFT.Max, 1e-9)
	// Goodput: all successful vllm-a requests have TTFT ≤ 2.1 s.
	assert.EqualValues(t, 37, a.GoodRequests)
	b := r.Rows[1]
	assert.EqualValues(t, 0, b.GoodRequests, "TTFT 2.5 s misses the 2.1 s goodput objective")
	assert.InDelta(t, 2.5, b.TTFT.P95, 2.5*0.01)

	// Span loss from the span_guard counters (metrics win over summary spans).
	require.NotNil(t, r.SpanLoss)
	assert.Equal(t, "metrics", r.SpanLoss.Source)
	assert.InDelta(t, 0.045, r.SpanLoss.Ratio, 1e-9)
	assert.Equal(t, map[string]int64{"span_budget": 30, "byte_budget": 10, "refused:memory_limit": 5}, r.SpanLoss.ByReason)

	require.Len(t, r.GPUs, 1)
	g := r.GPUs[0]
	require.NotNil(t, g.GrowthMiBPerMin)
	assert.InDelta(t, 60, *g.GrowthMiBPerMin, 1e-6)
	assert.InDelta(t, float64(40<<30+10<<20), g.PeakMemoryBytes, 0)

	// Overall: TTFT p95 is over 2.1 s (the rag rows) but under 3.8 s → WARN;
	// the error rate (2/50 = 4 %) is a FAIL.
	byName := map[string]SLOResult{}
	for _, s := range r.SLOs {
		byName[s.Name] = s
	}
	assert.Equal(t, VerdictWarn, byName["ttft_p95"].Verdict)
	assert.Equal(t, VerdictFail, byName["error_rate"].Verdict)
	assert.Equal(t, VerdictPass, byName["span_loss"].Verdict)
	assert.Equal(t, VerdictFail, r.Verdict)
}
