package nvidiagpureceiver

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

func testConfig() *Config {
	cfg := createDefaultConfig()
	cfg.CollectionInterval = 20 * time.Millisecond
	cfg.InitialDelay = 0
	cfg.Events.WaitTimeout = 20 * time.Millisecond
	cfg.Processes.ProcRoot = "testdata/proc"
	return cfg
}

func createBoth(t *testing.T, f *fakeNVML, cfg *Config) (receiver.Metrics, receiver.Logs, *consumertest.MetricsSink, *consumertest.LogsSink) {
	t.Helper()
	fac := newFactory(f.provider())
	set := receivertest.NewNopSettings(metadata.Type)
	ms, ls := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	mr, err := fac.CreateMetrics(context.Background(), set, cfg, ms)
	require.NoError(t, err)
	lr, err := fac.CreateLogs(context.Background(), set, cfg, ls)
	require.NoError(t, err)
	return mr, lr, ms, ls
}

func TestShutdownWithoutStart(t *testing.T) {
	f := newFakeNVML(h100(0))
	mr, lr, _, _ := createBoth(t, f, testConfig())
	require.NoError(t, mr.Shutdown(context.Background()))
	require.NoError(t, lr.Shutdown(context.Background()))
	assert.Zero(t, f.inits.Load())
	assert.Zero(t, f.shutdown.Load())
}

func TestStartShutdownTwiceSharesOneNVML(t *testing.T) {
	f := newFakeNVML(h100(0), h200(1))
	cfg := testConfig()
	for round := 1; round <= 2; round++ {
		mr, lr, ms, _ := createBoth(t, f, cfg)
		host := componenttest.NewNopHost()
		require.NoError(t, mr.Start(context.Background(), host))
		require.NoError(t, lr.Start(context.Background(), host))
		assert.Equal(t, int32(round), f.inits.Load(), "one NVML init for the metrics and the logs receiver")
		require.Eventually(t, func() bool { return ms.DataPointCount() > 0 }, 5*time.Second, 10*time.Millisecond)
		require.NoError(t, lr.Shutdown(context.Background()))
		assert.Equal(t, int32(round-1), f.shutdown.Load(), "NVML stays up while the metrics receiver runs")
		require.NoError(t, mr.Shutdown(context.Background()))
		assert.Equal(t, int32(round), f.shutdown.Load(), "Shutdown releases NVML")
		assert.Equal(t, int32(round), f.frees.Load(), "Shutdown frees the event set")
	}
}

// statusHost records the component status the receiver reports.
type statusHost struct {
	component.Host
	events chan *componentstatus.Event
}

func (h *statusHost) Report(e *componentstatus.Event) { h.events <- e }

func TestOnMissing(t *testing.T) {
	tests := []struct {
		name    string
		ret     nvml.Return
		gpus    []*fakeGPU
		wantErr string
	}{
		{"library not found", nvml.ERROR_LIBRARY_NOT_FOUND, nil, "NVML initialization failed: library_not_found (libnvidia-ml.so.1 could not be loaded"},
		{"driver mismatch", nvml.ERROR_LIB_RM_VERSION_MISMATCH, nil, "NVML initialization failed: driver_mismatch (the NVML library and the kernel driver have different versions"},
		{"no device", nvml.SUCCESS, nil, "NVML reports 0 GPUs: no NVIDIA GPU visible to NVML"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/fail", func(t *testing.T) {
			f := newFakeNVML(tt.gpus...)
			f.initRet = []nvml.Return{tt.ret}
			cfg := testConfig()
			cfg.OnMissing = onMissingFail
			mr, lr, _, _ := createBoth(t, f, cfg)
			err := mr.Start(context.Background(), componenttest.NewNopHost())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			require.NoError(t, mr.Shutdown(context.Background()))
			require.NoError(t, lr.Shutdown(context.Background()))
		})
		t.Run(tt.name+"/warn", func(t *testing.T) {
			f := newFakeNVML(tt.gpus...)
			f.initRet = []nvml.Return{tt.ret}
			cfg := testConfig()
			mr, lr, ms, _ := createBoth(t, f, cfg)
			host := &statusHost{Host: componenttest.NewNopHost(), events: make(chan *componentstatus.Event, 16)}
			require.NoError(t, mr.Start(context.Background(), host))
			require.NoError(t, lr.Start(context.Background(), host))
			var ev *componentstatus.Event
			require.Eventually(t, func() bool {
				select {
				case e := <-host.events:
					if e.Status() == componentstatus.StatusRecoverableError {
						ev = e
					}
				default:
				}
				return ev != nil
			}, 5*time.Second, 5*time.Millisecond)
			assert.Contains(t, ev.Err().Error(), tt.wantErr)
			time.Sleep(100 * time.Millisecond) // several collection intervals
			assert.Zero(t, ms.DataPointCount(), "idle receiver emits nothing")
			require.NoError(t, lr.Shutdown(context.Background()))
			require.NoError(t, mr.Shutdown(context.Background()))
			if tt.ret == nvml.SUCCESS {
				assert.Equal(t, f.inits.Load(), f.shutdown.Load(), "every successful Init balanced by Shutdown")
			} else {
				assert.Zero(t, f.shutdown.Load(), "nothing to release: NVML never came up")
			}
		})
	}
}

func TestWarnRetriesUntilNVMLAppears(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	f := newFakeNVML(h100(0))
	f.initRet = []nvml.Return{nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_DRIVER_NOT_LOADED, nvml.SUCCESS}
	cfg := testConfig()
	cfg.InitRetryInterval = 30 * time.Millisecond
	fac := newFactory(f.provider())
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	ms := new(consumertest.MetricsSink)
	mr, err := fac.CreateMetrics(context.Background(), set, cfg, ms)
	require.NoError(t, err)
	require.NoError(t, mr.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return ms.DataPointCount() > 0 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, mr.Shutdown(context.Background()))
	assert.Equal(t, int32(3), f.inits.Load())
	assert.Equal(t, int32(1), f.shutdown.Load())
	m, err := tel.GetMetric("otelcol_nvidia_gpu_init_attempts")
	require.NoError(t, err)
	assert.Equal(t, int64(3), sumInt(m))
}
