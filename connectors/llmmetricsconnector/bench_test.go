package llmmetricsconnector

import (
	"context"
	"fmt"
	"syscall"
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

// BenchmarkVsSpanMetrics runs the two connectors on the same batch in
// alternating blocks of 20 batches (the order flips every iteration) and
// reports, per span, each one's wall time and process CPU time (getrusage:
// includes the garbage collector's work on other cores) and the ratios
// llm_metrics / span_metrics. A ratio ≤ 1 meets the target. Blocks rather
// than single batches keep one connector's garbage collection from being
// charged to the other.
func BenchmarkVsSpanMetrics(b *testing.B) {
	const blockBatches = 20
	td := benchSpans(benchBatch)
	ctx := context.Background()
	type side struct {
		c         connector.Traces
		wall, cpu time.Duration
	}
	sides := []*side{{c: newBenchLLM(b)}, {c: newBenchSpanMetrics(b)}}
	for _, s := range sides {
		require.NoError(b, s.c.Start(ctx, componenttest.NewNopHost()))
	}
	defer func() {
		for _, s := range sides {
			require.NoError(b, s.c.Shutdown(ctx))
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range sides {
			s := sides[(i+k)%2]
			w0, c0 := time.Now(), cpuTime(b)
			for j := 0; j < blockBatches; j++ {
				_ = s.c.ConsumeTraces(ctx, td)
			}
			s.wall += time.Since(w0)
			s.cpu += cpuTime(b) - c0
		}
	}
	b.StopTimer()
	spans := float64(b.N * blockBatches * benchBatch)
	llm, sm := sides[0], sides[1]
	b.ReportMetric(float64(llm.wall.Nanoseconds())/spans, "llm_ns/span")
	b.ReportMetric(float64(sm.wall.Nanoseconds())/spans, "spanmetrics_ns/span")
	b.ReportMetric(float64(llm.wall)/float64(sm.wall), "ratio")
	b.ReportMetric(float64(llm.cpu.Nanoseconds())/spans, "llm_cpu_ns/span")
	b.ReportMetric(float64(sm.cpu.Nanoseconds())/spans, "spanmetrics_cpu_ns/span")
	b.ReportMetric(float64(llm.cpu)/float64(sm.cpu), "cpu_ratio")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFlush measures building one flush from a full state: 5000 series
// (the default aggregation_cardinality_limit) of streaming chat spans.
func BenchmarkFlush(b *testing.B) {
	for _, target := range []string{"v1.41", "latest"} {
		b.Run(target, func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.Target = target
			cfg.Dimensions = []Dimension{{Name: "user.id"}}
			cfg.SLO = SLOConfig{TTFT: 500 * time.Millisecond, E2E: 5 * time.Second}
			set := connectortest.NewNopSettings(component.MustNewType("llm_metrics"))
			c, err := newConnector(set, cfg, consumertest.NewNop())
			require.NoError(b, err)
			td := benchSpans(4000)
			rss := td.ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				spans := rss.At(i).ScopeSpans().At(0).Spans()
				for j := 0; j < spans.Len(); j++ {
					spans.At(j).Attributes().PutStr("user.id", fmt.Sprintf("u-%d", j))
				}
			}
			for i := 0; i < 2; i++ {
				require.NoError(b, c.ConsumeTraces(context.Background(), td))
			}
			series := c.agg.len()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.flush(context.Background())
			}
			b.ReportMetric(float64(series), "series")
		})
	}
}
