package loadreportexporter

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzConsumeSpans feeds spans whose GenAI attributes carry arbitrary values
// and types (strings where numbers belong, NaN, negatives, huge counts, end
// before start, chunk events out of order) and checks that every span gets
// exactly one outcome, that the report builds, and that its JSON and
// Markdown renderings succeed and the JSON is valid.
func FuzzConsumeSpans(f *testing.F) {
	f.Add("chat", "gpt-4o", int64(120), "80", 0.25, int64(2e9), "", int64(3), int64(4e8), false, 2.0)
	f.Add("embeddings", "", int64(-1), "x", math.NaN(), int64(-5), "timeout", int64(0), int64(0), true, -1.0)
	f.Add("execute_tool", "m", int64(math.MaxInt64), "9223372036854775807", math.Inf(1), int64(0), "429", int64(50), int64(-1e9), false, math.Inf(1))
	f.Add("text_completion", "m\x00\xff", int64(0), "1e309", -0.5, int64(1), "cancelled", int64(1), int64(1), false, 0.0)
	rd, err := newRenderer(createDefaultConfig().CancelledErrorTypes)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, op, model string, in int64, out string, ttft float64, dur int64, errType string,
		chunks, chunkStep int64, server bool, rate float64,
	) {
		cfg := testConfig(t)
		cfg.Limits.MaxGroups = 3
		st := newTestState(cfg)
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", model)
		ss := rs.ScopeSpans().AppendEmpty().Spans()
		const n = 4
		for i := 0; i < n; i++ {
			sp := ss.AppendEmpty()
			sp.SetName(op + " " + model)
			if server && i%2 == 1 {
				sp.SetKind(ptrace.SpanKindServer)
			} else {
				sp.SetKind(ptrace.SpanKindClient)
			}
			start := t0.Add(time.Duration(i) * time.Second)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.Timestamp(int64(pcommon.NewTimestampFromTime(start)) + dur))
			a := sp.Attributes()
			if op != "" {
				a.PutStr("gen_ai.operation.name", op)
			}
			a.PutStr("gen_ai.request.model", model+string(rune('a'+i)))
			a.PutStr("server.address", model)
			a.PutInt("gen_ai.usage.input_tokens", in)
			a.PutStr("gen_ai.usage.output_tokens", out)
			if i%2 == 0 {
				a.PutDouble("gen_ai.response.time_to_first_chunk", ttft)
			} else {
				a.PutStr("gen_ai.response.time_to_first_chunk", out)
			}
			a.PutDouble("llm_loadgen.target_rate", rate)
			if errType != "" && i%2 == 0 {
				a.PutStr("error.type", errType)
				sp.Status().SetCode(ptrace.StatusCodeError)
			}
			for c := int64(0); c < min(max(chunks, 0), 64); c++ {
				ev := sp.Events().AppendEmpty()
				ev.SetName("gen_ai.response.chunk")
				ev.SetTimestamp(pcommon.Timestamp(int64(pcommon.NewTimestampFromTime(start)) + c*chunkStep))
			}
		}
		sum := ss.AppendEmpty()
		sum.SetName(genai.SpanGuardSummarySpanName)
		sum.Attributes().PutInt(genai.SpanGuardAttrSpansReceived, in)
		sum.Attributes().PutStr(genai.SpanGuardAttrSpansDropped, out)

		outcomes := st.consumeTraces(td)
		var total int64
		for _, c := range outcomes {
			total += c
		}
		require.Equal(t, int64(n+1), total, "every span gets one outcome: %v", outcomes)

		r := st.build(true)
		js, err := rd.render(FormatJSON, r)
		require.NoError(t, err)
		require.True(t, json.Valid(js), "report JSON is invalid")
		_, err = rd.render(FormatMarkdown, r)
		require.NoError(t, err)
	})
}

// FuzzConsumeMetrics feeds the histograms and counters the report reads with
// arbitrary shapes: bucket counts that disagree with the bounds, unsorted or
// NaN bounds, negative and huge values, either temporality, explicit and
// exponential histograms, and series that restart. Every point gets exactly
// one outcome and the report still builds and renders.
func FuzzConsumeMetrics(f *testing.F) {
	f.Add("gen_ai.client.operation.duration", true, []byte{1, 2, 3, 4}, 0.5, 1.0, int32(0), int8(2), int64(10), 2.5)
	f.Add("gen_ai.client.operation.time_to_first_chunk", false, []byte{}, math.NaN(), -1.0, int32(-3), int8(-2), int64(-1), math.Inf(1))
	f.Add("llm.requests", true, []byte{255}, 1e308, 1e-308, int32(20), int8(20), int64(math.MaxInt64), -0.0)
	f.Add("hw.gpu.memory.usage", false, []byte{0, 0}, 2.0, 1.0, int32(1), int8(0), int64(1<<40), 0.7)
	rd, err := newRenderer(createDefaultConfig().CancelledErrorTypes)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, name string, delta bool, counts []byte, b0, b1 float64, offset int32, scale int8, iv int64, dv float64) {
		if len(counts) > 64 {
			counts = counts[:64]
		}
		st := newTestState(testConfig(t))
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "llm-loadgen")
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		temporality := pmetric.AggregationTemporalityCumulative
		if delta {
			temporality = pmetric.AggregationTemporalityDelta
		}
		ts := func(i int) pcommon.Timestamp {
			return pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
		}

		h := ms.AppendEmpty()
		h.SetName(name)
		hist := h.SetEmptyHistogram()
		hist.SetAggregationTemporality(temporality)
		e := ms.AppendEmpty()
		e.SetName(name)
		exp := e.SetEmptyExponentialHistogram()
		exp.SetAggregationTemporality(temporality)
		s := ms.AppendEmpty()
		s.SetName(name)
		sum := s.SetEmptySum()
		sum.SetAggregationTemporality(temporality)
		g := ms.AppendEmpty()
		g.SetName(name)
		gauge := g.SetEmptyGauge()
		for i := 0; i < 3; i++ {
			dp := hist.DataPoints().AppendEmpty()
			dp.SetTimestamp(ts(i))
			dp.Attributes().PutStr("gen_ai.request.model", "m")
			dp.ExplicitBounds().FromRaw([]float64{b0, b1})
			var total uint64
			for _, c := range counts {
				dp.BucketCounts().Append(uint64(c) * uint64(i+1))
				total += uint64(c) * uint64(i+1)
			}
			dp.SetCount(total)
			dp.SetSum(dv * float64(i))
			ep := exp.DataPoints().AppendEmpty()
			ep.SetTimestamp(ts(i))
			ep.SetScale(int32(scale))
			ep.Positive().SetOffset(offset)
			for _, c := range counts {
				ep.Positive().BucketCounts().Append(uint64(c))
			}
			ep.SetZeroCount(uint64(len(counts)))
			ep.SetCount(uint64(len(counts)) + total)
			np := sum.DataPoints().AppendEmpty()
			np.SetTimestamp(ts(i))
			np.SetIntValue(iv - int64(i))
			np.Attributes().PutStr("hw.id", "GPU-0")
			gp := gauge.DataPoints().AppendEmpty()
			gp.SetTimestamp(ts(i))
			gp.SetDoubleValue(dv)
			gp.Attributes().PutStr("hw.id", "GPU-0")
		}
		want := int64(md.DataPointCount())
		outcomes := st.consumeMetrics(md)
		var total int64
		for _, c := range outcomes {
			total += c
		}
		require.Equal(t, want, total, "every point gets one outcome: %v", outcomes)
		r := st.build(true)
		js, err := rd.render(FormatJSON, r)
		require.NoError(t, err)
		require.True(t, json.Valid(js), "report JSON is invalid")
		_, err = rd.render(FormatMarkdown, r)
		require.NoError(t, err)
	})
}
