package nvidiagpureceiver

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// fakeMIG is one MIG device of a fake GPU.
type fakeMIG struct {
	uuid, name        string
	gi, ci            int
	memTotal, memUsed uint64
	dev               *mock.Device
}

// fakeGPU describes a GPU shape for the mock NVML. Calls named in
// unsupported return ERROR_NOT_SUPPORTED; calls named in fail return the
// given code.
type fakeGPU struct {
	uuid, name, serial, busID string
	minor                     int

	memTotal, memUsed, memReserved uint64
	util, memUtil                  uint32   // percent
	utilSamples, powerSamples      []uint32 // percent, mW
	encUtil, decUtil               uint32
	power, powerLimit              uint32 // mW
	energy                         uint64 // mJ
	temp, fan                      uint32
	pstate                         nvml.Pstates
	smClock, memClock              uint32 // MHz
	reasons                        uint64
	replays                        int
	eccCorrected, eccUncorrected   uint64
	remapCorr, remapUnc            int
	remapPending, remapFailure     bool
	fields                         map[uint32]uint64
	procs                          []nvml.ProcessInfo
	procUtil                       []nvml.ProcessUtilizationSample
	pcieKBps                       uint32
	events                         uint64 // supported event mask
	mig                            []*fakeMIG

	mu          sync.Mutex
	unsupported map[string]bool
	fail        map[string]nvml.Return

	dev *mock.Device
}

func (f *fakeGPU) ret(call string) nvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unsupported[call] {
		return nvml.ERROR_NOT_SUPPORTED
	}
	if r, ok := f.fail[call]; ok {
		return r
	}
	return nvml.SUCCESS
}

func (f *fakeGPU) setFail(call string, r nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]nvml.Return{}
	}
	f.fail[call] = r
}

func uintSamples(base uint64, vals []uint32) []nvml.Sample {
	out := make([]nvml.Sample, len(vals))
	for i, v := range vals {
		out[i].TimeStamp = base + uint64(i)*100_000
		binary.NativeEndian.PutUint32(out[i].SampleValue[:4], v)
	}
	return out
}

// device builds the mock device once; events refer to it by identity.
func (f *fakeGPU) device() *mock.Device {
	if f.dev != nil {
		return f.dev
	}
	d := &mock.Device{}
	sampleBase := uint64(time.Now().Add(time.Hour).UnixMicro()) // after the receiver's start
	d.GetUUIDFunc = func() (string, nvml.Return) { return f.uuid, f.ret("GetUUID") }
	d.GetNameFunc = func() (string, nvml.Return) { return f.name, f.ret("GetName") }
	d.GetSerialFunc = func() (string, nvml.Return) { return f.serial, f.ret("GetSerial") }
	d.GetMinorNumberFunc = func() (int, nvml.Return) { return f.minor, f.ret("GetMinorNumber") }
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		var p nvml.PciInfo
		for i, c := range f.busID {
			p.BusId[i] = int8(c)
		}
		return p, f.ret("GetPciInfo")
	}
	d.GetSamplesFunc = func(st nvml.SamplingType, last uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
		var vals []uint32
		switch st {
		case nvml.GPU_UTILIZATION_SAMPLES:
			vals = f.utilSamples
		case nvml.TOTAL_POWER_SAMPLES:
			vals = f.powerSamples
		}
		if r := f.ret(samplingCalls[st]); r != nvml.SUCCESS {
			return 0, nil, r
		}
		var out []nvml.Sample
		for _, s := range uintSamples(sampleBase, vals) {
			if s.TimeStamp > last {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return nvml.VALUE_TYPE_UNSIGNED_INT, nil, nvml.ERROR_NOT_FOUND
		}
		return nvml.VALUE_TYPE_UNSIGNED_INT, out, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: f.util, Memory: f.memUtil}, f.ret("GetUtilizationRates")
	}
	d.GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return f.encUtil, 1_000_000, f.ret("GetEncoderUtilization") }
	d.GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return f.decUtil, 1_000_000, f.ret("GetDecoderUtilization") }
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		return nvml.Memory_v2{Total: f.memTotal, Used: f.memUsed, Reserved: f.memReserved, Free: f.memTotal - f.memUsed - f.memReserved}, f.ret("GetMemoryInfo_v2")
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: f.memTotal, Used: f.memUsed, Free: f.memTotal - f.memUsed}, f.ret("GetMemoryInfo")
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return f.power, f.ret("GetPowerUsage") }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return f.powerLimit, f.ret("GetEnforcedPowerLimit") }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return f.energy, f.ret("GetTotalEnergyConsumption") }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return f.temp, f.ret("GetTemperature") }
	d.GetFanSpeedFunc = func() (uint32, nvml.Return) { return f.fan, f.ret("GetFanSpeed") }
	d.GetPerformanceStateFunc = func() (nvml.Pstates, nvml.Return) { return f.pstate, f.ret("GetPerformanceState") }
	d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_SM {
			return f.smClock, f.ret("GetClockInfo(sm)")
		}
		return f.memClock, f.ret("GetClockInfo(memory)")
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return f.reasons, f.ret("GetCurrentClocksEventReasons") }
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return f.replays, f.ret("GetPcieReplayCounter") }
	d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
		if c == nvml.PCIE_UTIL_TX_BYTES {
			return f.pcieKBps, f.ret("GetPcieThroughput(tx)")
		}
		return f.pcieKBps / 2, f.ret("GetPcieThroughput(rx)")
	}
	d.GetFieldValuesFunc = func(values []nvml.FieldValue) nvml.Return {
		if r := f.ret("GetFieldValues"); r != nvml.SUCCESS {
			return r
		}
		for i := range values {
			v, ok := f.fields[values[i].FieldId]
			if !ok {
				values[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
				continue
			}
			values[i].NvmlReturn = uint32(nvml.SUCCESS)
			values[i].ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
			binary.NativeEndian.PutUint64(values[i].Value[:], v)
		}
		return nvml.SUCCESS
	}
	d.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
		if t == nvml.MEMORY_ERROR_TYPE_CORRECTED {
			return f.eccCorrected, f.ret("GetTotalEccErrors(corrected)")
		}
		return f.eccUncorrected, f.ret("GetTotalEccErrors(uncorrected)")
	}
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
		return f.remapCorr, f.remapUnc, f.remapPending, f.remapFailure, f.ret("GetRemappedRows")
	}
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		if len(f.mig) > 0 {
			return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, f.ret("GetMigMode")
		}
		return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, f.ret("GetMigMode")
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, f.ret("GetMaxMigDeviceCount") }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i >= len(f.mig) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return f.mig[i].device(), nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return f.procs, f.ret("GetComputeRunningProcesses")
	}
	d.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		if r := f.ret("GetProcessUtilization"); r != nvml.SUCCESS {
			return nil, r
		}
		var out []nvml.ProcessUtilizationSample
		for _, s := range f.procUtil {
			if s.TimeStamp > last {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return []nvml.ProcessUtilizationSample{}, nvml.ERROR_INSUFFICIENT_SIZE
		}
		return out, nvml.SUCCESS
	}
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) { return f.events, f.ret("GetSupportedEventTypes") }
	d.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return f.ret("RegisterEvents") }
	f.dev = d
	return d
}

func (m *fakeMIG) device() *mock.Device {
	if m.dev != nil {
		return m.dev
	}
	d := &mock.Device{}
	d.GetUUIDFunc = func() (string, nvml.Return) { return m.uuid, nvml.SUCCESS }
	d.GetNameFunc = func() (string, nvml.Return) { return m.name, nvml.SUCCESS }
	d.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return m.gi, nvml.SUCCESS }
	d.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return m.ci, nvml.SUCCESS }
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED }
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: m.memTotal, Used: m.memUsed, Free: m.memTotal - m.memUsed}, nvml.SUCCESS
	}
	m.dev = d
	return d
}

// fakeNVML is a mock NVML library over a set of fake GPUs with an event
// channel feeding the event set.
type fakeNVML struct {
	gpus     []*fakeGPU
	initRet  []nvml.Return // successive Init results; the last one repeats
	events   chan nvml.EventData
	inits    atomic.Int32
	shutdown atomic.Int32
	frees    atomic.Int32
	lib      *mock.Interface
}

func newFakeNVML(gpus ...*fakeGPU) *fakeNVML {
	f := &fakeNVML{gpus: gpus, events: make(chan nvml.EventData, 16)}
	f.lib = &mock.Interface{
		InitFunc: func() nvml.Return {
			n := int(f.inits.Add(1))
			if len(f.initRet) == 0 {
				return nvml.SUCCESS
			}
			if n > len(f.initRet) {
				n = len(f.initRet)
			}
			return f.initRet[n-1]
		},
		ShutdownFunc:       func() nvml.Return { f.shutdown.Add(1); return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(f.gpus), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return f.gpus[i].device(), nvml.SUCCESS
		},
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "580.95.05", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 13000, nvml.SUCCESS },
		EventSetCreateFunc: func() (nvml.EventSet, nvml.Return) {
			return &mock.EventSet{
				WaitFunc: func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
					select {
					case e := <-f.events:
						return e, nvml.SUCCESS
					case <-time.After(time.Duration(timeoutMs) * time.Millisecond):
						return nvml.EventData{}, nvml.ERROR_TIMEOUT
					}
				},
				FreeFunc: func() nvml.Return { f.frees.Add(1); return nvml.SUCCESS },
			}, nvml.SUCCESS
		},
	}
	return f
}

func (f *fakeNVML) provider() func(*Config) nvml.Interface {
	return func(*Config) nvml.Interface { return f.lib }
}

const allEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeGpuUnavailableError

// h100 is an H100 SXM5 80GB-like GPU under load.
func h100(i int) *fakeGPU {
	return &fakeGPU{
		uuid: "GPU-h100-000" + string(rune('0'+i)), name: "NVIDIA H100 80GB HBM3", serial: "165022300000" + string(rune('0'+i)),
		busID: "00000000:1" + string(rune('0'+i)) + ":00.0", minor: i,
		memTotal: 85520809984, memUsed: 76235669504, memReserved: 566231040,
		util: 97, memUtil: 61, utilSamples: []uint32{90, 100, 95, 99}, powerSamples: []uint32{610000, 650000, 700000, 640000},
		power: 655000, powerLimit: 700000, energy: 123456789012, temp: 71, pstate: nvml.PSTATE_0,
		smClock: 1980, memClock: 2619, reasons: nvml.ClocksEventReasonSwPowerCap, replays: 3,
		eccCorrected: 2, remapCorr: 1,
		fields: map[uint32]uint64{
			nvml.FI_DEV_PCIE_COUNT_TX_BYTES: 1 << 40, nvml.FI_DEV_PCIE_COUNT_RX_BYTES: 3 << 39,
			nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX: 1 << 30, nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX: 1 << 29,
			nvml.FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL: 0, nvml.FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL: 0,
			nvml.FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL: 4, nvml.FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL: 0,
		},
		procs:       []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 75161927680, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}},
		events:      allEvents,
		unsupported: map[string]bool{"GetFanSpeed": true}, // datacenter boards have no fan
	}
}

// h200 is an H200 141GB-like GPU, idle.
func h200(i int) *fakeGPU {
	g := h100(i)
	g.uuid = "GPU-h200-000" + string(rune('0'+i))
	g.name = "NVIDIA H200"
	g.memTotal, g.memUsed = 150754820096, 587202560
	g.util, g.memUtil, g.utilSamples, g.powerSamples = 0, 0, []uint32{0, 0}, []uint32{118000, 121000}
	g.power, g.energy, g.temp, g.pstate, g.smClock = 120000, 9876543210, 34, nvml.PSTATE_0, 345
	g.reasons = nvml.ClocksEventReasonGpuIdle
	g.procs = nil
	return g
}

// sumInt adds up the points of an int64 counter read from the test
// telemetry.
func sumInt(m metricdata.Metrics) int64 {
	var total int64
	if s, ok := m.Data.(metricdata.Sum[int64]); ok {
		for _, dp := range s.DataPoints {
			total += dp.Value
		}
	}
	return total
}

func sumPoints(m metricdata.Metrics) []metricdata.DataPoint[int64] {
	if s, ok := m.Data.(metricdata.Sum[int64]); ok {
		return s.DataPoints
	}
	return nil
}
