package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// reading is one NVML getter whose value becomes one data point. The tables
// below list them in the order they are read; the readers that need more
// than one call (samples, fallbacks, state sets) live next to their area.
type reading struct {
	metric string
	call   string   // NVML call: the name in the unsupported-call memory, telemetry and errors
	get    getter   // reads the raw value
	scale  scale    // raw value → double metric value (int metrics take the raw value)
	attrs  []string // attribute key/value pairs of the point
	double bool     // the metric's value type, from metricDefs (see typed)
}

// getter reads one raw value from a device; known is false when a successful
// call reported "no value" (an unknown performance state).
type getter func(d nvml.Device) (v uint64, known bool, ret nvml.Return)

// scale converts a raw NVML value to the metric's unit: float64(v)*mul/div.
type scale struct{ mul, div float64 }

var (
	asIs    = scale{1, 1}
	percent = scale{1, 100}  // % → fraction
	milli   = scale{1, 1000} // mW → W, mJ → J
	mega    = scale{1e6, 1}  // MHz → Hz
	kibi    = scale{1024, 1} // KiB/s → By/s
)

func (s scale) of(v uint64) float64 { return float64(v) * s.mul / s.div }

// engineReadings are the encoder and decoder utilization.
var engineReadings = typed([]reading{
	{metric: mGPUUtilization, call: "GetEncoderUtilization", get: value(encoderUtilization), scale: percent, attrs: []string{"hw.gpu.task", "encoder"}},
	{metric: mGPUUtilization, call: "GetDecoderUtilization", get: value(decoderUtilization), scale: percent, attrs: []string{"hw.gpu.task", "decoder"}},
})

// powerReadings follow the sampled power draw.
var powerReadings = typed([]reading{
	{metric: mPowerLimit, call: "GetEnforcedPowerLimit", get: value(nvml.Device.GetEnforcedPowerLimit), scale: milli},
	{metric: mEnergy, call: "GetTotalEnergyConsumption", get: value(nvml.Device.GetTotalEnergyConsumption), scale: milli, attrs: []string{"hw.type", "gpu"}},
})

// thermalReadings are temperature, fan, performance state and clocks.
var thermalReadings = typed([]reading{
	{metric: mTemperature, call: "GetTemperature", get: valueOf(nvml.Device.GetTemperature, nvml.TEMPERATURE_GPU), scale: asIs, attrs: []string{"hw.sensor_location", "gpu"}},
	{metric: mFanSpeed, call: "GetFanSpeed", get: value(nvml.Device.GetFanSpeed), scale: percent},
	{metric: mPerformanceState, call: "GetPerformanceState", get: performanceState, scale: asIs},
	{metric: mClockFrequency, call: "GetClockInfo(sm)", get: valueOf(nvml.Device.GetClockInfo, nvml.CLOCK_SM), scale: mega, attrs: []string{"nvidia.gpu.clock.domain", "sm"}},
	{metric: mClockFrequency, call: "GetClockInfo(memory)", get: valueOf(nvml.Device.GetClockInfo, nvml.CLOCK_MEM), scale: mega, attrs: []string{"nvidia.gpu.clock.domain", "memory"}},
})

// pcieReadings are the replay counter and the (opt-in, blocking) throughput.
var pcieReadings = typed([]reading{
	{metric: mPCIeReplays, call: "GetPcieReplayCounter", get: value(nvml.Device.GetPcieReplayCounter), scale: asIs},
	{metric: mPCIeThroughput, call: "GetPcieThroughput(tx)", get: valueOf(nvml.Device.GetPcieThroughput, nvml.PCIE_UTIL_TX_BYTES), scale: kibi, attrs: []string{"network.io.direction", "transmit"}},
	{metric: mPCIeThroughput, call: "GetPcieThroughput(rx)", get: valueOf(nvml.Device.GetPcieThroughput, nvml.PCIE_UTIL_RX_BYTES), scale: kibi, attrs: []string{"network.io.direction", "receive"}},
})

// eccReadings are the lifetime (aggregate) ECC error counters.
var eccReadings = typed([]reading{
	{metric: mErrors, call: "GetTotalEccErrors(corrected)", get: valueOf(aggregateECCErrors, nvml.MEMORY_ERROR_TYPE_CORRECTED), scale: asIs, attrs: []string{"hw.type", "gpu", "error.type", "corrected"}},
	{metric: mErrors, call: "GetTotalEccErrors(uncorrected)", get: valueOf(aggregateECCErrors, nvml.MEMORY_ERROR_TYPE_UNCORRECTED), scale: asIs, attrs: []string{"hw.type", "gpu", "error.type", "uncorrected"}},
})

// typed sets each reading's value type from its metric's definition.
func typed(table []reading) []reading {
	for i := range table {
		table[i].double = metricDefsByName[table[i].metric].double
	}
	return table
}

// readAll takes each enabled reading the GPU supports, in table order.
func (r *gpuRead) readAll(table []reading) {
	for i := range table {
		e := &table[i]
		if !r.b.on(e.metric) || !r.can(e.call) {
			continue
		}
		v, known, ret := e.get(r.g.dev)
		if !r.ok(e.call, ret) || !known {
			continue
		}
		if e.double {
			r.b.double(e.metric, e.scale.of(v), e.attrs...)
		} else {
			r.b.int(e.metric, int64(v), e.attrs...)
		}
	}
}

// rawValue is what the NVML getters of the tables return.
type rawValue interface {
	~uint32 | ~uint64 | ~int | ~int32
}

// value adapts a getter without arguments.
func value[T rawValue](f func(nvml.Device) (T, nvml.Return)) getter {
	return func(d nvml.Device) (uint64, bool, nvml.Return) {
		v, ret := f(d)
		return uint64(v), true, ret
	}
}

// valueOf adapts a getter with one argument, bound to arg.
func valueOf[A any, T rawValue](f func(nvml.Device, A) (T, nvml.Return), arg A) getter {
	return func(d nvml.Device) (uint64, bool, nvml.Return) {
		v, ret := f(d, arg)
		return uint64(v), true, ret
	}
}

func encoderUtilization(d nvml.Device) (uint32, nvml.Return) {
	v, _, ret := d.GetEncoderUtilization()
	return v, ret
}

func decoderUtilization(d nvml.Device) (uint32, nvml.Return) {
	v, _, ret := d.GetDecoderUtilization()
	return v, ret
}

func aggregateECCErrors(d nvml.Device, et nvml.MemoryErrorType) (uint64, nvml.Return) {
	return d.GetTotalEccErrors(et, nvml.AGGREGATE_ECC)
}

// performanceState reads the P-state; PSTATE_UNKNOWN is no value.
func performanceState(d nvml.Device) (uint64, bool, nvml.Return) {
	v, ret := d.GetPerformanceState()
	return uint64(v), v != nvml.PSTATE_UNKNOWN, ret
}
