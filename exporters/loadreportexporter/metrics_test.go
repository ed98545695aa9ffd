package loadreportexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// genaiMetrics builds what llm_metrics flushes for one model: the duration
// and TTFT histograms with the advised buckets, llm.requests by outcome and
// llm.output_tokens. scale multiplies every count (a later cumulative flush).
func genaiMetrics(temporality pmetric.AggregationTemporality, scale uint64, at time.Duration) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	attrs := func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "chat")
		m.PutStr("gen_ai.request.model", "llama")
		m.PutStr("server.address", "vllm")
		m.PutInt("server.port", 8000)
	}
	start := pcommon.NewTimestampFromTime(t0)
	ts := pcommon.NewTimestampFromTime(t0.Add(at))
	hist := func(name string, counts []uint64) {
		m := ms.AppendEmpty()
		m.SetName(name)
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(temporality)
		dp := h.DataPoints().AppendEmpty()
		attrs(dp.Attributes())
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.ExplicitBounds().FromRaw(genai.DurationBuckets)
		var n uint64
		for i := range counts {
			counts[i] *= scale
			n += counts[i]
		}
		dp.BucketCounts().FromRaw(counts)
		dp.SetCount(n)
	}
	// 15 buckets for 14 bounds: 90 requests in (0.64, 1.28], 10 in (1.28, 2.56].
	hist("gen_ai.client.operation.duration", []uint64{0, 0, 0, 0, 0, 0, 0, 90, 10, 0, 0, 0, 0, 0, 0})
	// TTFT: 95 in (0.16, 0.32], 5 in (2.56, 5.12].
	hist("gen_ai.client.operation.time_to_first_chunk", []uint64{0, 0, 0, 0, 0, 95, 0, 0, 0, 5, 0, 0, 0, 0, 0})
	sum := func(name string, v int64, kv ...string) {
		m := ms.AppendEmpty()
		m.SetName(name)
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(temporality)
		dp := s.DataPoints().AppendEmpty()
		attrs(dp.Attributes())
		for i := 0; i < len(kv); i += 2 {
			dp.Attributes().PutStr(kv[i], kv[i+1])
		}
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetIntValue(v * int64(scale))
	}
	sum("llm.requests", 100, "outcome", "success")
	sum("llm.requests", 2, "outcome", "error", "error.type", "503")
	sum("llm.requests", 1, "outcome", "error", "error.type", "context_canceled")
	sum("llm.output_tokens", 5000)
	sum("llm.goodput.requests", 95)
	return md
}

func TestMetricsOnlyRows(t *testing.T) {
	for _, tc := range []struct {
		name        string
		temporality pmetric.AggregationTemporality
	}{
		{"cumulative", pmetric.AggregationTemporalityCumulative},
		{"delta", pmetric.AggregationTemporalityDelta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestState(testConfig(t))
			// Two flushes: cumulative repeats the totals (×2 at 100 s),
			// delta sends each interval's share.
			if tc.temporality == pmetric.AggregationTemporalityCumulative {
				st.consumeMetrics(genaiMetrics(tc.temporality, 1, 50*time.Second))
				st.consumeMetrics(genaiMetrics(tc.temporality, 2, 100*time.Second))
			} else {
				st.consumeMetrics(genaiMetrics(tc.temporality, 1, 50*time.Second))
				st.consumeMetrics(genaiMetrics(tc.temporality, 1, 100*time.Second))
			}
			r := st.build(true)
			assert.Equal(t, "metrics", r.Run.Source)
			require.Len(t, r.Rows, 1)
			row := r.Rows[0]
			assert.Equal(t, "vllm:8000", row.Target)
			assert.EqualValues(t, 206, row.Requests)
			assert.EqualValues(t, 200, row.Successes)
			assert.EqualValues(t, 2, row.Cancelled)
			assert.InDelta(t, 4.0/206, row.ErrorRate, 1e-6)
			assert.InDelta(t, 10000.0/100, row.OutputTokenPS, 1e-6)
			assert.InDelta(t, 190.0/206, row.GoodputRatio, 1e-6)
			require.NotNil(t, row.E2E)
			assert.EqualValues(t, 200, row.E2E.Count)
			// p50 falls in (0.64, 1.28]: the bucket midpoint within the sketch accuracy.
			assert.InEpsilon(t, 0.96, row.E2E.P50, 0.011)
			assert.InEpsilon(t, 1.92, row.E2E.P95, 0.011)
			assert.InEpsilon(t, 0.24, row.TTFT.P90, 0.011)
			assert.InEpsilon(t, 3.84, row.TTFT.P99, 0.011)
			assert.Equal(t, r.Total.Requests, row.Requests)
			// error_rate 1.9 % → FAIL; TTFT p95 in the 2.56–5.12 bucket midpoint 3.84 > 3.8 → FAIL.
			assert.Equal(t, VerdictFail, r.Verdict)
		})
	}
}

func TestExponentialHistogramAndIgnoredPoints(t *testing.T) {
	st := newTestState(testConfig(t))
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	m := ms.AppendEmpty()
	m.SetName("gen_ai.client.inference.duration")
	h := m.SetEmptyExponentialHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	dp := h.DataPoints().AppendEmpty()
	dp.SetScale(0) // buckets (2^i, 2^(i+1)]
	dp.Positive().SetOffset(-1)
	dp.Positive().BucketCounts().FromRaw([]uint64{10, 30}) // (0.5,1] and (1,2]
	dp.SetCount(40)
	dp.Attributes().PutStr("gen_ai.operation.name", "chat")
	other := ms.AppendEmpty()
	other.SetName("http.server.request.duration")
	other.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1)
	unspecified := ms.AppendEmpty()
	unspecified.SetName("llm.requests")
	unspecified.SetEmptySum().DataPoints().AppendEmpty().SetIntValue(3)
	out := st.consumeMetrics(md)
	assert.Equal(t, map[string]int64{pointUsed: 1, pointNotUsed: 1, pointNoTemporality: 1}, out)
	r := st.build(true)
	require.NotNil(t, r.Total.E2E)
	assert.EqualValues(t, 40, r.Total.E2E.Count)
	assert.EqualValues(t, 40, r.Total.Requests, "without llm.requests the duration histogram counts requests")
	assert.InEpsilon(t, 1.5, r.Total.E2E.P50, 0.011)
}

func TestSummarySpansGiveSpanLoss(t *testing.T) {
	st := newTestState(testConfig(t))
	st.consumeTraces(knownRun())
	r := st.build(true)
	require.NotNil(t, r.SpanLoss)
	assert.Equal(t, "summary_spans", r.SpanLoss.Source)
	// 52 spans seen here (model calls, tool, HTTP) + 6 dropped.
	assert.EqualValues(t, 58, r.SpanLoss.Received)
	assert.EqualValues(t, 6, r.SpanLoss.Dropped)
	assert.Equal(t, map[string]int64{"span_budget": 6}, r.SpanLoss.ByReason)
}

func TestScenarioInheritedFromRootSpan(t *testing.T) {
	td := knownRun()
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	// The model call carries no scenario; its trace's HTTP root span does.
	call := spans.At(0)
	call.Attributes().Remove("llm_loadgen.scenario")
	tid := pcommon.TraceID([16]byte{1})
	call.SetTraceID(tid)
	root := spans.AppendEmpty()
	root.SetTraceID(tid)
	root.SetName("POST /v1/chat/completions")
	root.Attributes().PutStr("llm_loadgen.scenario", "agent")
	st := newTestState(testConfig(t))
	st.consumeTraces(td)
	_, ok := st.groups[groupKey{"vllm-a:8000", "llama-3.1-8b", "agent"}]
	assert.True(t, ok)
}

func TestLimitsFoldIntoOther(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxGroups = 1
	cfg.Limits.MaxErrorTypes = 1
	st := newTestState(cfg)
	out := st.consumeTraces(knownRun())
	assert.EqualValues(t, 10, out[spanGroupOverflow], "the second row's requests go to _OTHER")
	assert.EqualValues(t, 2, st.tel.errorTypesFolded, "cancelled and timeout fold behind 429")
	r := st.build(true)
	require.Len(t, r.Rows, 2)
	assert.Equal(t, overflowValue, r.Rows[1].Target)
	assert.EqualValues(t, 50, r.Total.Requests, "nothing is lost")
}

func TestBadSpansAreCounted(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	server := ss.AppendEmpty()
	server.SetKind(ptrace.SpanKindServer)
	server.Attributes().PutStr("gen_ai.operation.name", "chat")
	backwards := ss.AppendEmpty()
	backwards.Attributes().PutStr("gen_ai.operation.name", "chat")
	backwards.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Second)))
	backwards.SetEndTimestamp(pcommon.NewTimestampFromTime(t0))
	addReq(ss, req{dur: time.Second, ttft: 5 * time.Second, out: 10, target: "a", model: "m", scenario: "s"})
	st := newTestState(testConfig(t))
	out := st.consumeTraces(td)
	assert.Equal(t, map[string]int64{spanServer: 1, spanBadTimestamps: 1, spanRequest: 1}, out)
	assert.EqualValues(t, 1, st.tel.ignored[[2]string{genai.AttrTimeToFirstChunk, ignoredTTFTOutside}])
}

// TestSpansWinOverMetrics: GenAI metrics of a target and model that spans
// also describe (llm_metrics output in the same pipeline) do not add a row;
// metrics of a target no span came from do.
func TestSpansWinOverMetrics(t *testing.T) {
	st := newTestState(testConfig(t))
	st.consumeTraces(knownRun())
	st.consumeMetrics(genaiMetrics(pmetric.AggregationTemporalityCumulative, 1, 50*time.Second))
	r := st.build(true)
	assert.Equal(t, "spans+metrics", r.Run.Source)
	require.Len(t, r.Rows, 3)
	assert.Equal(t, "metrics", r.Rows[2].Source)
	assert.Equal(t, "vllm:8000", r.Rows[2].Target)

	st = newTestState(testConfig(t))
	td := knownRun()
	st.consumeTraces(td)
	md := genaiMetrics(pmetric.AggregationTemporalityCumulative, 1, 50*time.Second)
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		var attrs []pcommon.Map
		switch m.Type() {
		case pmetric.MetricTypeHistogram:
			attrs = append(attrs, m.Histogram().DataPoints().At(0).Attributes())
		case pmetric.MetricTypeSum:
			attrs = append(attrs, m.Sum().DataPoints().At(0).Attributes())
		}
		for _, a := range attrs {
			a.PutStr("server.address", "vllm-a")
			a.PutStr("gen_ai.request.model", "llama-3.1-8b")
		}
	}
	st.consumeMetrics(md)
	r = st.build(true)
	assert.Equal(t, "spans", r.Run.Source)
	assert.Len(t, r.Rows, 2)
	assert.EqualValues(t, 50, r.Total.Requests)
}
