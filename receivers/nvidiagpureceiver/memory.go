package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// framebufferMemory reads the GPU's memory in use and its size.
func (r *gpuRead) framebufferMemory() {
	b := r.b
	if !(b.on(mGPUMemoryUsage) || b.on(mGPUMemoryLimit) || b.on(mGPUMemoryUtilization)) || !r.can("GetMemoryInfo") {
		return
	}
	if used, total, good := r.sc.memory(r.g, &r.g.calls, r.g.dev, r.errs, &r.lost); good {
		b.int(mGPUMemoryUsage, int64(used))
		b.int(mGPUMemoryLimit, int64(total))
		if total > 0 {
			b.double(mGPUMemoryUtilization, float64(used)/float64(total))
		}
	}
}

// memory reads used and total framebuffer memory, preferring the v2 call
// (which separates reserved memory) and falling back to v1.
func (sc *gpuScraper) memory(g *gpu, guard *callGuard, dev nvml.Device, errs *scrapeErrors, lost *bool) (used, total uint64, good bool) {
	if !guard.skip("GetMemoryInfo_v2") {
		m, ret := dev.GetMemoryInfo_v2()
		if sc.ok(g, guard, "GetMemoryInfo_v2", ret, errs, lost) {
			return m.Used, m.Total, true
		}
		if !unsupported(ret) {
			return 0, 0, false
		}
	}
	if guard.skip("GetMemoryInfo") {
		return 0, 0, false
	}
	m, ret := dev.GetMemoryInfo()
	if sc.ok(g, guard, "GetMemoryInfo", ret, errs, lost) {
		return m.Used, m.Total, true
	}
	return 0, 0, false
}
