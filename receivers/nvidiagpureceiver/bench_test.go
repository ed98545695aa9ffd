package nvidiagpureceiver

import (
	"context"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
)

// BenchmarkScrapePerGPU measures one scrape of one GPU against the go-nvml
// mock: the receiver's own cost (NVML call dispatch, summaries, pdata
// building, attribution) without the driver's. Default metric set; the
// "all" variant also enables the opt-in per-process utilization and PCIe
// throughput. Reported per GPU on an 8-GPU H100-like node, as wall time
// (ns/gpu) and as process CPU time (cpu-ns/gpu, user+system, GC included),
// which a loaded machine distorts less.
func BenchmarkScrapePerGPU(b *testing.B) {
	for _, bc := range []struct {
		name string
		all  bool
	}{{"default", false}, {"all", true}} {
		b.Run(bc.name, func(b *testing.B) {
			gpus := make([]*fakeGPU, 8)
			for i := range gpus {
				gpus[i] = withProcUtil(h100(i))
			}
			sc, _ := testSession(b, newFakeNVML(gpus...), componenttest.NewNopTelemetrySettings(), func(c *Config) {
				c.Events.Enabled = false
				if bc.all {
					for _, d := range metricDefs {
						c.Metrics[d.name] = MetricConfig{Enabled: true}
					}
				}
			})
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			points := 0
			for i := 0; i < b.N; i++ {
				md, err := sc.scrape(ctx)
				if err != nil {
					b.Fatal(err)
				}
				points = md.DataPointCount()
			}
			b.StopTimer()
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(gpus)), "cpu-ns/gpu")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(gpus)), "ns/gpu")
			b.ReportMetric(float64(points)/float64(len(gpus)), "points/gpu")
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
