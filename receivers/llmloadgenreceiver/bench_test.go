package llmloadgenreceiver

import (
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
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
	cfg.Scenarios = []ScenarioConfig{{Type: scenario, Weight: 1}}
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

func BenchmarkChatSpansAFAP(b *testing.B)       { benchScenario(b, scenarioChat) }
func BenchmarkRAGSpansAFAP(b *testing.B)        { benchScenario(b, scenarioRAG) }
func BenchmarkAgentSpansAFAP(b *testing.B)      { benchScenario(b, scenarioAgent) }
func BenchmarkEmbeddingsSpansAFAP(b *testing.B) { benchScenario(b, scenarioEmbeddings) }
