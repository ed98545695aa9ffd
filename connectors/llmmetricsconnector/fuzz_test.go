package llmmetricsconnector

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// FuzzConsumeSpan feeds spans with arbitrary GenAI attribute values and
// checks that every span is accounted for exactly once in the connector's
// own telemetry and that a flush succeeds.
func FuzzConsumeSpan(f *testing.F) {
	f.Add("chat", int64(10), "20", 0.3, int64(1e9), false, "relevance", 0.4, int64(443))
	f.Add("", int64(-1), "x", math.NaN(), int64(-5), true, "", math.Inf(1), int64(-1))
	f.Add("invoke_agent", int64(math.MaxInt64), "9223372036854775807", -1.0, int64(0), false, "h", -0.5, int64(0))
	f.Fuzz(func(t *testing.T, op string, in int64, out string, ttft float64, dur int64, failed bool, evalName string, score float64, port int64) {
		cfg := createDefaultConfig().(*Config)
		cfg.Target = "latest"
		cfg.AggregationCardinalityLimit = 2
		cfg.SLO = SLOConfig{TTFT: time.Second, TPOT: 10 * time.Millisecond, E2E: time.Second}
		cfg.Exemplars = ExemplarsConfig{Enabled: true, MaxPerDataPoint: 2}
		sink := new(consumertest.MetricsSink)
		c, clk, tel := newTestConnector(t, cfg, sink)

		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for i := 0; i < 3; i++ {
			s := spans.AppendEmpty()
			s.SetKind(ptrace.SpanKind(i % 3))
			s.SetStartTimestamp(pcommon.Timestamp(1e9))
			s.SetEndTimestamp(pcommon.Timestamp(1e9 + dur))
			a := s.Attributes()
			if op != "" {
				a.PutStr("gen_ai.operation.name", op)
			}
			a.PutInt("gen_ai.usage.input_tokens", in)
			a.PutStr("gen_ai.usage.output_tokens", out)
			a.PutDouble("gen_ai.response.time_to_first_chunk", ttft)
			a.PutInt("server.port", port+int64(i))
			a.PutInt("gen_ai.usage.text.input_tokens", in/2)
			if evalName != "" {
				ev := s.Events().AppendEmpty()
				ev.SetName("gen_ai.evaluation.result")
				ev.Attributes().PutStr("gen_ai.evaluation.name", evalName)
				ev.Attributes().PutDouble("gen_ai.evaluation.score.value", score)
			}
			if failed {
				s.Status().SetCode(ptrace.StatusCodeError)
			}
		}
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		clk.t = clk.t.Add(time.Second)
		c.flush(context.Background())

		m, err := tel.GetMetric("otelcol_llm_metrics_spans")
		require.NoError(t, err)
		var total int64
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			total += dp.Value
		}
		require.Equal(t, int64(3), total)
	})
}
