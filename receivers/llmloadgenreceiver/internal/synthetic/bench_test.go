package synthetic

import (
	"context"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// cpuTime is the process's user+system CPU time.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchScenario generates b.N requests of one scenario in
// as_fast_as_possible mode into a no-op consumer and reports spans per
// wall-clock second and spans per CPU-second of the whole process (the
// generator runs on one goroutine; the rest is GC), so the figure is the
// per-core throughput even on a busy machine.
func benchScenario(b *testing.B, scenario string) {
	cfg := afapConfig(int64(b.N))
	cfg.Scenarios = []config.ScenarioConfig{{Type: scenario, Weight: 1}}
	cfg.BatchSize = 1000
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	s := runSync(b, cfg, consumertest.NewNop(), nil, nil)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(s.totals.spans)/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(s.totals.spans)/cpu.Seconds(), "spans/cpu-s")
	b.ReportMetric(float64(s.totals.spans)/float64(b.N), "spans/req")
}

func BenchmarkChatSpansAFAP(b *testing.B)       { benchScenario(b, config.ScenarioChat) }
func BenchmarkRAGSpansAFAP(b *testing.B)        { benchScenario(b, config.ScenarioRAG) }
func BenchmarkAgentSpansAFAP(b *testing.B)      { benchScenario(b, config.ScenarioAgent) }
func BenchmarkEmbeddingsSpansAFAP(b *testing.B) { benchScenario(b, config.ScenarioEmbeddings) }

// BenchmarkChatPdataFloor copies the two spans of one rendered chat request
// b.N times into batches of 1000 requests, and does nothing else: no
// sampling, no generation, no rendering logic. What remains is the cost of
// allocating the pdata objects of a chat request (and collecting them), the
// ceiling BenchmarkChatSpansAFAP can approach. Reported as spans per
// CPU-second of the whole process, like benchScenario.
func BenchmarkChatPdataFloor(b *testing.B) {
	cfg := afapConfig(1)
	cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
	sink := &consumertest.TracesSink{}
	runSync(b, cfg, sink, nil, nil)
	src := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if src.Len() != 2 {
		b.Fatalf("a chat request has %d spans, want 2", src.Len())
	}
	next := consumertest.NewNop()
	var (
		td    ptrace.Traces
		dst   ptrace.SpanSlice
		spans int
	)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := range b.N {
		if i%1000 == 0 {
			if spans > 0 {
				_ = next.ConsumeTraces(context.Background(), td)
			}
			td = ptrace.NewTraces()
			dst = td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			dst.EnsureCapacity(2000)
		}
		for j := range src.Len() {
			src.At(j).CopyTo(dst.AppendEmpty())
			spans++
		}
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(spans)/cpu.Seconds(), "spans/cpu-s")
}

// BenchmarkRateAccuracy10k runs the whole generator for one simulated
// minute at a 10 000 req/s target (as_fast_as_possible, chat) and reports
// the requests emitted per simulated second and the error against the
// target, for each open-loop arrival process.
func BenchmarkRateAccuracy10k(b *testing.B) {
	for _, typ := range []string{config.ArrivalConstant, config.ArrivalPoisson, config.ArrivalGamma} {
		b.Run(typ, func(b *testing.B) {
			var errPct, achieved float64
			for i := 0; i < b.N; i++ {
				cfg := afapConfig(0)
				cfg.Seed = uint64(i + 1)
				cfg.Duration = time.Minute
				cfg.Arrival = config.ArrivalConfig{Type: typ, Rate: 10000, Burstiness: 0.5}
				cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
				cfg.BatchSize = 1000
				s := runSync(b, cfg, consumertest.NewNop(), nil, nil)
				achieved = float64(s.totals.requests) / 60
				errPct = max(errPct, 100*math.Abs(achieved-10000)/10000)
			}
			b.ReportMetric(achieved, "req/sim-s")
			b.ReportMetric(errPct, "max-err-%")
		})
	}
}
