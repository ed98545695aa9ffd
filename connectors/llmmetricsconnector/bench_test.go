package llmmetricsconnector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/spanmetricsconnector"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// benchSpans is a batch of realistic GenAI client spans: 4 services, 6
// models, 2 providers, streaming with TTFT, a few errors, 20 attributes each.
func benchSpans(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	models := []string{"gpt-4o-mini", "gpt-4o", "claude-sonnet-4", "llama-3.1-8b", "mistral-large", "gemini-2.5-flash"}
	for r := 0; r < 4; r++ {
		rs := td.ResourceSpans().AppendEmpty()
		ra := rs.Resource().Attributes()
		ra.PutStr("service.name", fmt.Sprintf("chat-svc-%d", r))
		ra.PutStr("service.instance.id", fmt.Sprintf("inst-%d", r))
		ra.PutStr("deployment.environment.name", "prod")
		ra.PutStr("host.name", fmt.Sprintf("node-%d", r))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("opentelemetry.instrumentation.openai_v2")
		start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		for i := 0; i < n/4; i++ {
			s := ss.Spans().AppendEmpty()
			model := models[i%len(models)]
			s.SetName("chat " + model)
			s.SetKind(ptrace.SpanKindClient)
			s.SetTraceID(pcommon.TraceID([16]byte{byte(r), byte(i), byte(i >> 8), 1}))
			s.SetSpanID(pcommon.SpanID([8]byte{byte(r), byte(i), byte(i >> 8), 2}))
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(200+i%3000) * time.Millisecond)))
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.provider.name", []string{"openai", "anthropic"}[i%2])
			a.PutStr("gen_ai.request.model", model)
			a.PutStr("gen_ai.response.model", model+"-2026-01-01")
			a.PutStr("server.address", "api.example.com")
			a.PutInt("server.port", 443)
			a.PutBool("gen_ai.request.stream", true)
			a.PutDouble("gen_ai.request.temperature", 0.7)
			a.PutInt("gen_ai.request.max_tokens", 512)
			a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d", i))
			a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
			a.PutInt("gen_ai.usage.input_tokens", int64(100+i%900))
			a.PutInt("gen_ai.usage.output_tokens", int64(20+i%400))
			a.PutDouble("gen_ai.response.time_to_first_chunk", 0.05+float64(i%100)/100)
			a.PutStr("gen_ai.conversation.id", fmt.Sprintf("conv-%d", i%50))
			a.PutStr("http.request.method", "POST")
			a.PutStr("url.full", "https://api.example.com/v1/chat/completions")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("user.id", fmt.Sprintf("u-%d", i%20))
			if i%50 == 0 {
				a.PutStr("error.type", "timeout")
				s.Status().SetCode(ptrace.StatusCodeError)
			}
		}
	}
	return td
}

func newBenchLLM(b *testing.B) connector.Traces {
	cfg := createDefaultConfig().(*Config)
	cfg.SLO = SLOConfig{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 5 * time.Second}
	c, err := NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(component.MustNewType("llm_metrics")), cfg, consumertest.NewNop())
	require.NoError(b, err)
	return c
}

func newBenchSpanMetrics(b *testing.B) connector.Traces {
	f := spanmetricsconnector.NewFactory()
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(b, err)
	return c
}

const benchBatch = 1000

func benchConsume(b *testing.B, c connector.Traces) {
	td := benchSpans(benchBatch)
	ctx := context.Background()
	require.NoError(b, c.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(b, c.Shutdown(ctx)) }()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/span")
}

// BenchmarkConsumeTraces measures ConsumeTraces on the same 1000-span batch
// for llm_metrics (GenAI client metrics + golden signals with SLOs) and for
// contrib's span_metrics connector (default configuration).
func BenchmarkConsumeTraces(b *testing.B) {
	b.Run("llm_metrics", func(b *testing.B) { benchConsume(b, newBenchLLM(b)) })
	b.Run("span_metrics", func(b *testing.B) { benchConsume(b, newBenchSpanMetrics(b)) })
}

// BenchmarkVsSpanMetrics alternates the two connectors on the same batch in
// each iteration and reports both costs and their ratio (llm_metrics /
// span_metrics); a ratio ≤ 1 meets the target.
func BenchmarkVsSpanMetrics(b *testing.B) {
	td := benchSpans(benchBatch)
	ctx := context.Background()
	llm, sm := newBenchLLM(b), newBenchSpanMetrics(b)
	for _, c := range []connector.Traces{llm, sm} {
		require.NoError(b, c.Start(ctx, componenttest.NewNopHost()))
	}
	defer func() {
		require.NoError(b, llm.Shutdown(ctx))
		require.NoError(b, sm.Shutdown(ctx))
	}()
	var llmNs, smNs time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		_ = llm.ConsumeTraces(ctx, td)
		llmNs += time.Since(t)
		t = time.Now()
		_ = sm.ConsumeTraces(ctx, td)
		smNs += time.Since(t)
	}
	b.StopTimer()
	spans := float64(b.N * benchBatch)
	b.ReportMetric(float64(llmNs.Nanoseconds())/spans, "llm_ns/span")
	b.ReportMetric(float64(smNs.Nanoseconds())/spans, "spanmetrics_ns/span")
	b.ReportMetric(float64(llmNs)/float64(smNs), "ratio")
}
