package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The sampled readings: utilization and power are averaged (and their peak
// taken) over the NVML samples buffered since the previous scrape, with a
// single read as the fallback when the GPU keeps no samples.

var samplingCalls = [...]string{
	nvml.TOTAL_POWER_SAMPLES:        "GetSamples(total_power)",
	nvml.GPU_UTILIZATION_SAMPLES:    "GetSamples(gpu_utilization)",
	nvml.MEMORY_UTILIZATION_SAMPLES: "GetSamples(memory_utilization)",
}

// summarize reads the NVML samples of one type buffered since the previous
// scrape and returns their average and maximum; n is 0 when there were none.
func (r *gpuRead) summarize(st nvml.SamplingType) (avg, peak float64, n int) {
	g := r.g
	call := samplingCalls[st]
	if g.calls.skip(call) {
		return 0, 0, 0
	}
	vt, samples, ret := g.dev.GetSamples(st, g.lastSeen[st])
	if ret == nvml.ERROR_NOT_FOUND {
		return 0, 0, 0 // no sample since the previous scrape
	}
	if !r.ok(call, ret) {
		return 0, 0, 0
	}
	var sum float64
	for _, smp := range samples {
		if smp.TimeStamp <= g.lastSeen[st] {
			continue
		}
		v := numericValue(vt, smp.SampleValue)
		if v != v { // NaN: unknown value type
			continue
		}
		sum += v
		if n == 0 || v > peak {
			peak = v
		}
		n++
	}
	for _, smp := range samples {
		if smp.TimeStamp > g.lastSeen[st] {
			g.lastSeen[st] = smp.TimeStamp
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return sum / float64(n), peak, n
}

// readRates is the fallback of the utilization samples, read at most once
// per scrape; false when it cannot be read.
func (r *gpuRead) readRates() (nvml.Utilization, bool) {
	if !r.haveRates && r.can("GetUtilizationRates") {
		if u, ret := r.g.dev.GetUtilizationRates(); r.ok("GetUtilizationRates", ret) {
			r.rates, r.haveRates = u, true
		}
	}
	return r.rates, r.haveRates
}

// utilization reads how busy the GPU's engines and memory controller were.
func (r *gpuRead) utilization() {
	b := r.b
	if b.on(mGPUUtilization) || b.on(mUtilizationMax) {
		avg, peak, n := r.summarize(nvml.GPU_UTILIZATION_SAMPLES)
		if n == 0 {
			if u, ok := r.readRates(); ok {
				avg, peak, n = float64(u.Gpu), float64(u.Gpu), 1
			}
		}
		if n > 0 {
			b.double(mGPUUtilization, avg/100, "hw.gpu.task", "general")
			b.double(mUtilizationMax, peak/100, "hw.gpu.task", "general")
		}
	}
	r.readAll(engineReadings)
	if b.on(mMemoryActivity) {
		avg, _, n := r.summarize(nvml.MEMORY_UTILIZATION_SAMPLES)
		if n == 0 {
			if u, ok := r.readRates(); ok {
				avg, n = float64(u.Memory), 1
			}
		}
		if n > 0 {
			b.double(mMemoryActivity, avg/100)
		}
	}
}

// power reads the power draw, its limit and the energy counter.
func (r *gpuRead) power() {
	b := r.b
	if b.on(mPower) || b.on(mPowerMax) {
		avg, peak, n := r.summarize(nvml.TOTAL_POWER_SAMPLES)
		if n == 0 && r.can("GetPowerUsage") {
			if v, ret := r.g.dev.GetPowerUsage(); r.ok("GetPowerUsage", ret) {
				avg, peak, n = float64(v), float64(v), 1
			}
		}
		if n > 0 {
			b.double(mPower, avg/1000, "hw.type", "gpu")
			b.double(mPowerMax, peak/1000)
		}
	}
	r.readAll(powerReadings)
}
