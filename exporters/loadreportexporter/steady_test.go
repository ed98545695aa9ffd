package loadreportexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// closedLoopRun is 30 s of 1 s requests under a bound of 4 in flight: one
// at a time for 5 s (ramp up, TTFT 100 ms), four at a time for 20 s (TTFT
// 500 ms), one at a time for 5 s (drain, 100 ms).
func closedLoopRun(capAttr bool) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for sec := 0; sec < 30; sec++ {
		n, ttft := 1, 100*time.Millisecond
		if sec >= 5 && sec < 25 {
			n, ttft = 4, 500*time.Millisecond
		}
		for i := 0; i < n; i++ {
			addReq(ss, req{at: time.Duration(sec) * time.Second, dur: time.Second, ttft: ttft, out: 10, target: "t", model: "m", scenario: "s"})
			if capAttr {
				ss.At(ss.Len()-1).Attributes().PutInt(genai.AttrLoadgenConcurrencyCap, 4)
			}
		}
	}
	return td
}

func TestSteadyStateOfAClosedLoop(t *testing.T) {
	st := newTestState(testConfig(t))
	st.consumeTraces(closedLoopRun(true))
	r := st.build(true)
	ss := r.SteadyState
	require.NotNil(t, ss)
	require.NotNil(t, ss.StartS, ss.Note)
	assert.Equal(t, 4.0, ss.Cap)
	assert.Equal(t, 5.0, *ss.StartS)
	assert.Equal(t, 25.0, *ss.EndS)
	assert.EqualValues(t, 80, ss.Requests)
	require.NotNil(t, ss.TTFT)
	assert.InDelta(t, 0.5, ss.TTFT.P50, 0.01, "the steady state's TTFT, not the ramp's")
	assert.InDelta(t, 0.5, ss.TTFT.P99, 0.01)
	assert.Less(t, r.Total.TTFT.Mean, 0.5, "the whole run's mean has the ramp and the drain in it")

	rd, err := newRenderer(nil)
	require.NoError(t, err)
	md, err := rd.render(FormatMarkdown, r)
	require.NoError(t, err)
	assert.Contains(t, string(md), "**Steady state** (in flight ≥ 95.0 % of the bound of 4.00), 5.00 s to 25.0 s, 80 requests: TTFT p50 500")
}

func TestSteadyStateNeedsABound(t *testing.T) {
	st := newTestState(testConfig(t))
	st.consumeTraces(closedLoopRun(false))
	assert.Nil(t, st.build(true).SteadyState, "no bound on the spans: no steady state to find")

	st = newTestState(testConfig(t))
	td := closedLoopRun(true)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		spans.At(i).Attributes().PutInt(genai.AttrLoadgenConcurrencyCap, 64) // never near 64 in flight
	}
	st.consumeTraces(td)
	ss := st.build(true).SteadyState
	require.NotNil(t, ss)
	assert.Nil(t, ss.StartS)
	assert.Contains(t, ss.Note, "never stayed at 95 % of the bound (peak 4 of 64)")
}
