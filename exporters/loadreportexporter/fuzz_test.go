package loadreportexporter

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
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
		sum.SetName(summarySpanName)
		sum.Attributes().PutInt(summaryReceived, in)
		sum.Attributes().PutStr(summaryDropped, out)

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
