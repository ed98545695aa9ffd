package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"sort"
)

// instrument is the OpenTelemetry instrument a metric is reported as.
type instrument int

const (
	gauge         instrument = iota // pmetric Gauge
	counter                         // cumulative monotonic Sum
	upDownCounter                   // cumulative non-monotonic Sum
)

func (i instrument) String() string {
	switch i {
	case counter:
		return "Counter"
	case upDownCounter:
		return "UpDownCounter"
	default:
		return "Gauge"
	}
}

// Metric names. hw.* names and units follow the OpenTelemetry hardware
// semantic conventions; everything NVIDIA-specific lives under nvidia.gpu.*.
const (
	mGPUUtilization       = "hw.gpu.utilization"
	mGPUMemoryUsage       = "hw.gpu.memory.usage"
	mGPUMemoryLimit       = "hw.gpu.memory.limit"
	mGPUMemoryUtilization = "hw.gpu.memory.utilization"
	mGPUIO                = "hw.gpu.io"
	mPower                = "hw.power"
	mEnergy               = "hw.energy"
	mTemperature          = "hw.temperature"
	mErrors               = "hw.errors"
	mStatus               = "hw.status"

	mUtilizationMax       = "nvidia.gpu.utilization.max"
	mMemoryActivity       = "nvidia.gpu.memory.activity"
	mPowerMax             = "nvidia.gpu.power.max"
	mPowerLimit           = "nvidia.gpu.power.limit"
	mClockFrequency       = "nvidia.gpu.clock.frequency"
	mClockEventReason     = "nvidia.gpu.clock.event_reason"
	mPCIeReplays          = "nvidia.gpu.pcie.replays"
	mPCIeThroughput       = "nvidia.gpu.pcie.throughput"
	mNVLinkIO             = "nvidia.gpu.nvlink.io"
	mNVLinkErrors         = "nvidia.gpu.nvlink.errors"
	mFanSpeed             = "nvidia.gpu.fan.speed"
	mPerformanceState     = "nvidia.gpu.performance_state"
	mXIDErrors            = "nvidia.gpu.xid.errors"
	mEvents               = "nvidia.gpu.events"
	mRemappedRows         = "nvidia.gpu.memory.remapped_rows"
	mProcessMemoryUsage   = "nvidia.gpu.process.memory.usage"
	mProcessUtilization   = "nvidia.gpu.process.utilization"
	mMIGMemoryUsage       = "nvidia.gpu.mig.memory.usage"
	mMIGMemoryLimit       = "nvidia.gpu.mig.memory.limit"
	mMIGMemoryUtilization = "nvidia.gpu.mig.memory.utilization"
)

// metricDef describes one metric the receiver can emit. The table below is the
// single source for the metric's unit, instrument, description, attributes and
// whether it is on by default; the README's metric table is checked against it.
type metricDef struct {
	name        string
	unit        string
	inst        instrument
	double      bool // value type: double (true) or int
	enabled     bool // on by default
	expensive   bool // needs a blocking or costly NVML call; opt-in
	attributes  []string
	description string
}

var metricDefs = []metricDef{
	{mGPUUtilization, "1", gauge, true, true, false, []string{"hw.gpu.task"},
		"Fraction of time the GPU's engines were busy, averaged over the collection interval from NVML samples (task general, encoder, decoder)."},
	{mGPUMemoryUsage, "By", upDownCounter, false, true, false, nil,
		"GPU framebuffer memory in use."},
	{mGPUMemoryLimit, "By", upDownCounter, false, true, false, nil,
		"Total GPU framebuffer memory."},
	{mGPUMemoryUtilization, "1", gauge, true, true, false, nil,
		"Fraction of GPU framebuffer memory in use (usage / limit)."},
	{mGPUIO, "By", counter, false, true, false, []string{"network.io.direction"},
		"Bytes moved over PCIe since the driver loaded (NVML field counters)."},
	{mPower, "W", gauge, true, true, false, []string{"hw.type"},
		"Power drawn by the GPU, averaged over the collection interval from NVML samples."},
	{mEnergy, "J", counter, true, true, false, []string{"hw.type"},
		"Energy consumed by the GPU since the driver loaded."},
	{mTemperature, "Cel", gauge, true, true, false, []string{"hw.sensor_location"},
		"GPU core temperature."},
	{mErrors, "{error}", counter, false, true, false, []string{"hw.type", "error.type"},
		"ECC memory errors over the GPU's lifetime (aggregate counters), corrected and uncorrected."},
	{mStatus, "1", upDownCounter, false, true, false, []string{"hw.type", "hw.state"},
		"GPU health as a state set: 1 for the current state (ok, degraded, failed), 0 for the others."},

	{mUtilizationMax, "1", gauge, true, true, false, []string{"hw.gpu.task"},
		"Highest GPU utilization sample within the collection interval."},
	{mMemoryActivity, "1", gauge, true, true, false, nil,
		"Fraction of time the memory controller was busy reading or writing, averaged over the interval."},
	{mPowerMax, "W", gauge, true, true, false, nil,
		"Highest power sample within the collection interval."},
	{mPowerLimit, "W", gauge, true, true, false, nil,
		"Power limit the driver enforces."},
	{mClockFrequency, "Hz", gauge, true, true, false, []string{"nvidia.gpu.clock.domain"},
		"Current clock frequency of the SM and memory clock domains."},
	{mClockEventReason, "1", gauge, false, true, false, []string{"nvidia.gpu.clock.event_reason"},
		"1 while a clock-event (throttle) reason is active, 0 otherwise."},
	{mPCIeReplays, "{replay}", counter, false, true, false, nil,
		"PCIe replay counter."},
	{mPCIeThroughput, "By/s", gauge, true, false, true, []string{"network.io.direction"},
		"PCIe throughput over a 20 ms window per direction; each read blocks the driver, so it is opt-in."},
	{mNVLinkIO, "By", counter, false, true, false, []string{"network.io.direction"},
		"Data moved over all NVLinks of the GPU since the driver loaded."},
	{mNVLinkErrors, "{error}", counter, false, true, false, []string{"nvidia.gpu.nvlink.error_type"},
		"NVLink errors summed over all links (CRC flit, CRC data, replay, recovery)."},
	{mFanSpeed, "1", gauge, true, true, false, nil,
		"Fan speed as a fraction of its maximum (boards without a fan report nothing)."},
	{mPerformanceState, "{state}", gauge, false, true, false, nil,
		"Performance state, 0 (P0, highest) to 15 (P15, lowest)."},
	{mXIDErrors, "{error}", counter, false, true, false, []string{"nvidia.gpu.xid.code"},
		"XID errors received from the NVML event set since the receiver started, by XID code."},
	{mEvents, "{event}", counter, false, true, false, []string{"nvidia.gpu.event.type"},
		"Critical NVML events received since the receiver started, by event type."},
	{mRemappedRows, "{row}", counter, false, true, false, []string{"nvidia.gpu.memory.remap_cause"},
		"Memory rows remapped because of correctable or uncorrectable errors."},
	{mProcessMemoryUsage, "By", upDownCounter, false, true, false,
		[]string{"process.pid", "process.executable.name", "container.id", "k8s.pod.uid", "k8s.pod.name", "k8s.namespace.name", "k8s.container.name", "nvidia.gpu.mig.gpu_instance_id"},
		"GPU memory used by a compute process, attributed to its container and pod."},
	{mProcessUtilization, "1", gauge, true, false, true,
		[]string{"process.pid", "process.executable.name", "container.id", "k8s.pod.uid", "k8s.pod.name", "k8s.namespace.name", "k8s.container.name", "hw.gpu.task"},
		"Per-process SM, encoder and decoder utilization averaged over the interval (not available on MIG); opt-in."},
	{mMIGMemoryUsage, "By", upDownCounter, false, true, false, nil,
		"Memory in use in a MIG instance (resource: the MIG device)."},
	{mMIGMemoryLimit, "By", upDownCounter, false, true, false, nil,
		"Memory of a MIG instance (resource: the MIG device)."},
	{mMIGMemoryUtilization, "1", gauge, true, true, false, nil,
		"Fraction of a MIG instance's memory in use."},
}

var metricDefsByName = func() map[string]*metricDef {
	m := make(map[string]*metricDef, len(metricDefs))
	for i := range metricDefs {
		m[metricDefs[i].name] = &metricDefs[i]
	}
	return m
}()

// metricNames lists every metric name, sorted, for error messages.
func metricNames() []string {
	names := make([]string, 0, len(metricDefs))
	for _, d := range metricDefs {
		names = append(names, d.name)
	}
	sort.Strings(names)
	return names
}
