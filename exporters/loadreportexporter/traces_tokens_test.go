package loadreportexporter

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// TestITLSplitsChunksOfSeveralTokens: chunk events that say they carried k
// tokens (llm_loadgen.chunk.tokens) end a gap of k inter-token latencies;
// events that say nothing count one each.
func TestITLSplitsChunksOfSeveralTokens(t *testing.T) {
	st := newTestState(testConfig(t))
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	// Four chunks of 4 tokens, 40 ms apart: 12 latencies of 10 ms.
	addReq(ss, req{dur: time.Second, ttft: 100 * time.Millisecond, out: 16, target: "t", model: "m", scenario: "s"})
	sp := ss.At(0)
	start := sp.StartTimestamp().AsTime()
	for i := 0; i < 4; i++ {
		ev := sp.Events().AppendEmpty()
		ev.SetName(genai.EventLoadgenLiveChunk)
		ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(100*time.Millisecond + time.Duration(i)*40*time.Millisecond)))
		ev.Attributes().PutInt(genai.AttrLoadgenChunkTokens, 4)
	}
	// Three chunks without a count, 30 ms apart: two latencies of 30 ms.
	addReq(ss, req{at: time.Second, dur: time.Second, ttft: 100 * time.Millisecond, out: 3, target: "t", model: "m", scenario: "s",
		chunks: []time.Duration{100 * time.Millisecond, 130 * time.Millisecond, 160 * time.Millisecond}})
	st.consumeTraces(td)
	r := st.build(true)
	require.NotNil(t, r.Total.ITL)
	assert.EqualValues(t, 14, r.Total.ITL.Count, "12 from the 3 gaps of 4 tokens, 2 from the plain gaps")
	assert.InDelta(t, (12*0.010+2*0.030)/14, r.Total.ITL.Mean, 1e-6, "the report keeps six digits")
	assert.InDelta(t, 0.010, r.Total.ITL.P50, 0.010*0.02)
}

// TestTimeToFirstAnswer: a reasoning model's time to its first answer
// token gets its own latency row next to TTFT; a value beyond the request
// is not used.
func TestTimeToFirstAnswer(t *testing.T) {
	st := newTestState(testConfig(t))
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 10; i++ {
		addReq(ss, req{at: time.Duration(i) * time.Second, dur: 3 * time.Second, ttft: 100 * time.Millisecond, out: 50, target: "t", model: "m", scenario: "s"})
		ss.At(i).Attributes().PutDouble(genai.AttrLoadgenTimeToFirstAnswer, 1.5)
	}
	addReq(ss, req{at: 10 * time.Second, dur: time.Second, ttft: 100 * time.Millisecond, out: 5, target: "t", model: "m", scenario: "s"})
	ss.At(10).Attributes().PutDouble(genai.AttrLoadgenTimeToFirstAnswer, 9) // after the request ended
	st.consumeTraces(td)
	r := st.build(true)
	require.NotNil(t, r.Total.TimeToFirstAnswer)
	assert.EqualValues(t, 10, r.Total.TimeToFirstAnswer.Count)
	assert.InDelta(t, 1.5, r.Total.TimeToFirstAnswer.P50, 0.02)
	assert.InDelta(t, 0.1, r.Total.TTFT.P50, 0.002, "TTFT stays the first token, thinking included")
	rd, err := newRenderer(nil)
	require.NoError(t, err)
	md, err := rd.render(FormatMarkdown, r)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| all | all | all | first answer | 10 | 1,500 |")
}

// TestClientDelay: the generator's own delay at the first token (kernel
// timestamps) gets a latency row, and a large one flags the run as
// client-bound in the summary; a small one does not.
func TestClientDelay(t *testing.T) {
	run := func(delay float64) *Report { return reportWith(t, genai.AttrLoadgenClientDelayFirst, delay) }
	busy := run(0.030)
	require.NotNil(t, busy.Total.ClientDelay)
	assert.EqualValues(t, 20, busy.Total.ClientDelay.Count)
	assert.InDelta(t, 0.030, busy.Total.ClientDelay.P99, 0.001)
	assert.True(t, busy.Summary.ClientBound)
	assert.Contains(t, strings.Join(busy.Summary.Notes, "\n"), "client-bound")
	rd, err := newRenderer(nil)
	require.NoError(t, err)
	md, err := rd.render(FormatMarkdown, busy)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| all | all | all | client delay | 20 | 30.0 | 30.0 |")

	idle := run(0.0002)
	require.NotNil(t, idle.Total.ClientDelay)
	assert.False(t, idle.Summary.ClientBound, "0.2 ms is below 5 ms and 10 % of a 100 ms TTFT")
	assert.NotContains(t, strings.Join(idle.Summary.Notes, "\n"), "client-bound")
}

// TestGeneratorCPU: a generator whose process used 90 % of its CPUs or more
// for the median request flags the run as client-bound even without kernel
// timestamps; one at 40 % does not.
func TestGeneratorCPU(t *testing.T) {
	run := func(cpu float64) *Report { return reportWith(t, genai.AttrLoadgenProcessCPU, cpu) }
	busy := run(0.97)
	require.NotNil(t, busy.Total.GeneratorCPU)
	assert.EqualValues(t, 20, busy.Total.GeneratorCPU.Count)
	assert.InDelta(t, 0.97, busy.Total.GeneratorCPU.P50, 0.01)
	assert.True(t, busy.Summary.ClientBound)
	assert.Contains(t, strings.Join(busy.Summary.Notes, "\n"), "used 97")

	idle := run(0.4)
	assert.False(t, idle.Summary.ClientBound)
	assert.NotContains(t, strings.Join(idle.Summary.Notes, "\n"), "client-bound")
	assert.Nil(t, run(0.4).Total.ClientDelay, "no kernel times, no client delay row")
}

// reportWith is the report of 20 successful requests (TTFT 100 ms), each
// span carrying attribute key = v.
func reportWith(t *testing.T, key string, v float64) *Report {
	st := newTestState(testConfig(t))
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 20; i++ {
		addReq(ss, req{at: time.Duration(i) * time.Second, dur: 2 * time.Second, ttft: 100 * time.Millisecond, out: 50, target: "t", model: "m", scenario: "s"})
		ss.At(i).Attributes().PutDouble(key, v)
	}
	st.consumeTraces(td)
	return st.build(true)
}
