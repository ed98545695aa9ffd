package nvidiagpureceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
)

// BenchmarkScrapePerGPU measures one scrape of one GPU against the go-nvml
// mock: the receiver's own cost (NVML call dispatch, summaries, pdata
// building, attribution) without the driver's. Default metric set; the
// "all" variant also enables the opt-in per-process utilization and PCIe
// throughput. Reported per GPU on an 8-GPU H100-like node.
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
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(gpus)), "ns/gpu")
			b.ReportMetric(float64(points)/float64(len(gpus)), "points/gpu")
		})
	}
}
