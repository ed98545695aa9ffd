package loadreportexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// TestWorkloadBreakdown: TTFT by session turn and by the cacheable share of
// the prompt, from llm_loadgen's span attributes; spans without them take
// no part, failed requests neither.
func TestWorkloadBreakdown(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	at := time.Duration(0)
	add := func(turn, history int64, ttft time.Duration, errType string) {
		at += 100 * time.Millisecond
		addReq(ss, req{at: at, dur: time.Second, ttft: ttft, out: 10, in: 1000, target: "t", model: "m", scenario: "s", errType: errType})
		a := ss.At(ss.Len() - 1).Attributes()
		if turn > 0 {
			a.PutInt(genai.AttrLoadgenSessionTurn, turn)
			a.PutInt(genai.AttrLoadgenHistoryTokens, history)
		}
	}
	for i := 0; i < 10; i++ {
		add(1, 0, 400*time.Millisecond, "")
		add(2, 600, 100*time.Millisecond, "")
		add(40, 950, 50*time.Millisecond, "") // beyond the last turn row
	}
	add(2, 600, 0, "timeout")    // failed: no TTFT to count
	add(0, 0, time.Second/2, "") // no session
	sp := ss.AppendEmpty()       // a shared-prefix request
	addReq(ss, req{at: at, dur: time.Second, ttft: 300 * time.Millisecond, out: 10, in: 400, target: "t", model: "m", scenario: "s"})
	ss.At(ss.Len()-1).Attributes().PutInt(genai.AttrLoadgenCacheableTokens, 200)
	sp.SetName("not a model call")

	st := newTestState(testConfig(t))
	st.consumeTraces(td)
	w := st.build(true).Workload
	require.NotNil(t, w)
	require.Len(t, w.ByTurn, 3)
	assert.Equal(t, "1", w.ByTurn[0].Label)
	assert.EqualValues(t, 10, w.ByTurn[0].TTFT.Count)
	assert.InDelta(t, 0.4, w.ByTurn[0].TTFT.P50, 0.01)
	assert.Equal(t, "2", w.ByTurn[1].Label)
	assert.EqualValues(t, 10, w.ByTurn[1].TTFT.Count, "the failed turn is not counted")
	assert.InDelta(t, 0.1, w.ByTurn[1].TTFT.P50, 0.01)
	assert.Equal(t, "32+", w.ByTurn[2].Label)

	shares := map[string]int64{}
	for _, r := range w.ByCacheableShare {
		shares[r.Label] = r.TTFT.Count
	}
	assert.Equal(t, map[string]int64{"0 %": 10, "50–75 %": 10, "75–100 %": 10, "25–50 %": 1}, shares,
		"history 0 of 1000, 600 of 1000, 950 of 1000; the shared prefix 200 of 400")

	empty := newTestState(testConfig(t))
	empty.consumeTraces(knownRun())
	assert.Nil(t, empty.build(true).Workload, "no workload attributes, no section")
}
