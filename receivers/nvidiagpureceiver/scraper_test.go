package nvidiagpureceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// testSession starts a session on the fake NVML and returns its scraper.
func testSession(t testing.TB, f *fakeNVML, set component.TelemetrySettings, mutate func(*Config)) (*gpuScraper, *session) {
	t.Helper()
	cfg := createDefaultConfig()
	cfg.Processes.ProcRoot = filepath.Join("testdata", "proc")
	cfg.Events.WaitTimeout = 20 * time.Millisecond
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	shared, err := sessionFor(cfg, set, f.provider())
	require.NoError(t, err)
	ref := shared.NewRef()
	require.NoError(t, ref.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ref.Shutdown(context.Background())) })
	return newGPUScraper(shared.Unwrap()), shared.Unwrap()
}

func compareGolden(t *testing.T, name string, md pmetric.Metrics) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if goldentest.Updating() {
		require.NoError(t, golden.WriteMetrics(t, path, md))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, md,
		pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		pmetrictest.IgnoreResourceAttributeValue("host.name"),
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
		pmetrictest.IgnoreMetricDataPointsOrder()))
}

func TestScrapeGolden(t *testing.T) {
	tests := []struct {
		name   string
		gpus   []*fakeGPU
		mutate func(*Config)
	}{
		{name: "h100.yaml", gpus: []*fakeGPU{h100(0), h100(1)}},
		{name: "h200.yaml", gpus: []*fakeGPU{h200(0)}},
		{name: "mig.yaml", gpus: []*fakeGPU{migH100(0)}},
		{name: "consumer.yaml", gpus: []*fakeGPU{consumerGPU(0)}},
		{name: "expensive.yaml", gpus: []*fakeGPU{withProcUtil(h100(0))}, mutate: func(c *Config) {
			c.Metrics[mPCIeThroughput] = MetricConfig{Enabled: true}
			c.Metrics[mProcessUtilization] = MetricConfig{Enabled: true}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeNVML(tt.gpus...)
			sc, _ := testSession(t, f, componenttest.NewNopTelemetrySettings(), tt.mutate)
			md, err := sc.scrape(context.Background())
			require.NoError(t, err)
			compareGolden(t, tt.name, md)
		})
	}
}

// withProcUtil adds per-process utilization samples (two for PID 4242).
func withProcUtil(g *fakeGPU) *fakeGPU {
	ts := uint64(time.Now().Add(time.Hour).UnixMicro())
	g.procUtil = []nvml.ProcessUtilizationSample{
		{Pid: 4242, TimeStamp: ts, SmUtil: 80, MemUtil: 40, EncUtil: 0, DecUtil: 10},
		{Pid: 4242, TimeStamp: ts + 1, SmUtil: 60, MemUtil: 30, EncUtil: 0, DecUtil: 30},
	}
	return g
}

// migH100 is an H100 in MIG mode with two instances: utilization is not
// available on MIG-enabled GPUs.
func migH100(i int) *fakeGPU {
	g := h100(i)
	g.uuid = "GPU-mig0-000" + string(rune('0'+i))
	g.unsupported = map[string]bool{"GetFanSpeed": true, "GetUtilizationRates": true,
		"GetSamples(gpu_utilization)": true, "GetSamples(memory_utilization)": true,
		"GetEncoderUtilization": true, "GetDecoderUtilization": true}
	g.mig = []*fakeMIG{
		{uuid: "MIG-aaaaaaaa-0000-0000-0000-000000000001", name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb", gi: 1, ci: 0, memTotal: 42949672960, memUsed: 10737418240},
		{uuid: "MIG-aaaaaaaa-0000-0000-0000-000000000002", name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb", gi: 9, ci: 0, memTotal: 10737418240, memUsed: 0},
	}
	g.procs = []nvml.ProcessInfo{{Pid: 5151, UsedGpuMemory: 10485760000, GpuInstanceId: 1, ComputeInstanceId: 0}}
	return g
}

// consumerGPU is a workstation board: a fan, no ECC, no NVLink, no energy
// counter, no NVML samples, no field values and no process queries.
func consumerGPU(i int) *fakeGPU {
	return &fakeGPU{
		uuid: "GPU-rtx4090-000" + string(rune('0'+i)), name: "NVIDIA GeForce RTX 4090", busID: "00000000:01:00.0", minor: i,
		memTotal: 25757220864, memUsed: 1073741824, util: 12, memUtil: 3, power: 45000, powerLimit: 450000,
		temp: 41, fan: 30, pstate: nvml.PSTATE_8, smClock: 210, memClock: 405,
		unsupported: map[string]bool{
			"GetSamples(gpu_utilization)": true, "GetSamples(total_power)": true, "GetSamples(memory_utilization)": true,
			"GetTotalEnergyConsumption": true, "GetTotalEccErrors(corrected)": true, "GetTotalEccErrors(uncorrected)": true,
			"GetRemappedRows": true, "GetFieldValues": true, "GetComputeRunningProcesses": true, "GetSerial": true,
			"GetMemoryInfo_v2": true, "GetEncoderUtilization": true, "GetDecoderUtilization": true,
		},
	}
}

func TestUtilizationAndPowerSummarizedOverInterval(t *testing.T) {
	g := h100(0)
	g.utilSamples = []uint32{10, 50, 90}
	g.powerSamples = []uint32{100000, 300000, 500000}
	sc, _ := testSession(t, newFakeNVML(g), componenttest.NewNopTelemetrySettings(), nil)
	md, err := sc.scrape(context.Background())
	require.NoError(t, err)
	assert.InDelta(t, 0.5, pointValue(t, md, g.uuid, mGPUUtilization, "hw.gpu.task", "general"), 1e-9)
	assert.InDelta(t, 0.9, pointValue(t, md, g.uuid, mUtilizationMax, "hw.gpu.task", "general"), 1e-9)
	assert.InDelta(t, 300, pointValue(t, md, g.uuid, mPower, "hw.type", "gpu"), 1e-9)
	assert.InDelta(t, 500, pointValue(t, md, g.uuid, mPowerMax), 1e-9)

	// The same samples are not counted twice: the next scrape sees none and
	// falls back to one instantaneous read.
	md, err = sc.scrape(context.Background())
	require.NoError(t, err)
	assert.InDelta(t, 0.97, pointValue(t, md, g.uuid, mGPUUtilization, "hw.gpu.task", "general"), 1e-9)
	assert.InDelta(t, 655, pointValue(t, md, g.uuid, mPower, "hw.type", "gpu"), 1e-9)
}

func TestUnsupportedCallsDetectedOnceAndRemembered(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	g := consumerGPU(0)
	sc, _ := testSession(t, newFakeNVML(g), tel.NewTelemetrySettings(), nil)
	for i := 0; i < 3; i++ {
		md, err := sc.scrape(context.Background())
		require.NoError(t, err, "unsupported calls are never errors")
		assert.False(t, hasMetric(md, g.uuid, mEnergy))
		assert.False(t, hasMetric(md, g.uuid, mErrors))
		assert.True(t, hasMetric(md, g.uuid, mFanSpeed))
		assert.True(t, hasMetric(md, g.uuid, mGPUMemoryLimit), "memory falls back to GetMemoryInfo v1")
	}
	d := g.device()
	assert.Len(t, d.GetTotalEnergyConsumptionCalls(), 1)
	assert.Len(t, d.GetFieldValuesCalls(), 1)
	assert.Len(t, d.GetMemoryInfo_v2Calls(), 1)
	assert.Len(t, d.GetMemoryInfoCalls(), 3)
	assert.Len(t, d.GetSamplesCalls(), 3, "one probe per sampling type")
	assert.Len(t, d.GetUtilizationRatesCalls(), 3, "fallback read every scrape")

	m, err := tel.GetMetric("otelcol_nvidia_gpu_nvml_calls_unsupported")
	require.NoError(t, err)
	assert.Equal(t, int64(12), sumInt(m), "one per unsupported call, not per scrape")
}

func TestPartialScrapeErrorMidScrape(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	bad, good, lost := h100(0), h100(1), h100(2)
	bad.setFail("GetTotalEnergyConsumption", nvml.ERROR_UNKNOWN)
	bad.setFail("GetTemperature", nvml.ERROR_NO_PERMISSION)
	sc, _ := testSession(t, newFakeNVML(bad, good, lost), tel.NewTelemetrySettings(), nil)
	lost.setFail("GetSamples(gpu_utilization)", nvml.ERROR_GPU_IS_LOST)

	md, err := sc.scrape(context.Background())
	require.Error(t, err)
	assert.True(t, scrapererror.IsPartialScrapeError(err))
	assert.Contains(t, err.Error(), bad.uuid+" GetTotalEnergyConsumption: unknown")
	assert.Contains(t, err.Error(), bad.uuid+" GetTemperature: no_permission")
	assert.Contains(t, err.Error(), lost.uuid+" GetSamples(gpu_utilization): gpu_is_lost")

	// The failing device still reports what it could read; the other GPU
	// is complete; the lost GPU reports hw.status failed and nothing else.
	assert.False(t, hasMetric(md, bad.uuid, mEnergy))
	assert.True(t, hasMetric(md, bad.uuid, mPower))
	assert.True(t, hasMetric(md, good.uuid, mEnergy))
	assert.True(t, hasMetric(md, good.uuid, mTemperature))
	assert.Equal(t, 1.0, pointValue(t, md, lost.uuid, mStatus, "hw.state", "failed"))
	assert.Equal(t, 0.0, pointValue(t, md, lost.uuid, mStatus, "hw.state", "ok"))
	assert.False(t, hasMetric(md, lost.uuid, mGPUMemoryUsage))
	assert.Equal(t, 1.0, pointValue(t, md, good.uuid, mStatus, "hw.state", "ok"))

	m, err := tel.GetMetric("otelcol_nvidia_gpu_nvml_calls_failed")
	require.NoError(t, err)
	assert.Equal(t, int64(3), sumInt(m))

	// A transient error is retried on the next scrape (not remembered).
	bad.setFail("GetTotalEnergyConsumption", nvml.SUCCESS)
	md, _ = sc.scrape(context.Background())
	assert.True(t, hasMetric(md, bad.uuid, mEnergy))
}

func TestDegradedStatus(t *testing.T) {
	g := h100(0)
	g.remapPending = true
	sc, _ := testSession(t, newFakeNVML(g), componenttest.NewNopTelemetrySettings(), nil)
	md, err := sc.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1.0, pointValue(t, md, g.uuid, mStatus, "hw.state", "degraded"))
}

func TestDisabledMetricsAreNotRead(t *testing.T) {
	g := h100(0)
	sc, _ := testSession(t, newFakeNVML(g), componenttest.NewNopTelemetrySettings(), func(c *Config) {
		for name := range c.Metrics {
			c.Metrics[name] = MetricConfig{Enabled: false}
		}
		c.Metrics[mGPUMemoryUsage] = MetricConfig{Enabled: true}
		c.MIG = false
	})
	md, err := sc.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, md.MetricCount())
	d := g.device()
	assert.Empty(t, d.GetSamplesCalls())
	assert.Empty(t, d.GetPowerUsageCalls())
	assert.Empty(t, d.GetFieldValuesCalls())
	assert.Empty(t, d.GetComputeRunningProcessesCalls())
	assert.Empty(t, d.GetPcieThroughputCalls(), "expensive call only when opted in")
}

func TestDeviceSelection(t *testing.T) {
	a, b, c := h100(0), h100(1), h100(2)
	sc, s := testSession(t, newFakeNVML(a, b, c), componenttest.NewNopTelemetrySettings(), func(cfg *Config) {
		cfg.Devices = []string{b.uuid, "2"}
	})
	require.Len(t, s.gpus, 2)
	md, err := sc.scrape(context.Background())
	require.NoError(t, err)
	assert.False(t, hasMetric(md, a.uuid, mPower))
	assert.True(t, hasMetric(md, b.uuid, mPower))
	assert.True(t, hasMetric(md, c.uuid, mPower))
}

// --- helpers over pmetric -------------------------------------------------

func findPoints(md pmetric.Metrics, hwID, name string) []pmetric.NumberDataPoint {
	var out []pmetric.NumberDataPoint
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get("hw.id"); !ok || v.Str() != hwID {
			continue
		}
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != name {
					continue
				}
				dps := pmetric.NewNumberDataPointSlice()
				if m.Type() == pmetric.MetricTypeSum {
					dps = m.Sum().DataPoints()
				} else {
					dps = m.Gauge().DataPoints()
				}
				for l := 0; l < dps.Len(); l++ {
					out = append(out, dps.At(l))
				}
			}
		}
	}
	return out
}

func hasMetric(md pmetric.Metrics, hwID, name string) bool {
	return len(findPoints(md, hwID, name)) > 0
}

// pointValue returns the value of the point whose attributes contain kv.
func pointValue(t *testing.T, md pmetric.Metrics, hwID, name string, kv ...string) float64 {
	t.Helper()
	v, ok := lookupPoint(md, hwID, name, kv...)
	if !ok {
		t.Fatalf("no point %s%v on %s", name, kv, hwID)
	}
	return v
}

// lookupPoint returns the value of the first point of metric name on GPU
// hwID whose attributes match the kv pairs.
func lookupPoint(md pmetric.Metrics, hwID, name string, kv ...string) (float64, bool) {
	for _, dp := range findPoints(md, hwID, name) {
		match := true
		for i := 0; i+1 < len(kv); i += 2 {
			if v, ok := dp.Attributes().Get(kv[i]); !ok || v.AsString() != kv[i+1] {
				match = false
			}
		}
		if !match {
			continue
		}
		if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
			return float64(dp.IntValue()), true
		}
		return dp.DoubleValue(), true
	}
	return 0, false
}
