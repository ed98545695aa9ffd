package nvidiagpureceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {

	agent := createDefaultConfig()
	agent.CollectionInterval = 5 * time.Second
	agent.OnMissing = onMissingFail
	agent.LibraryPath = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
	agent.Devices = []string{"GPU-11111111-2222-3333-4444-555555555555", "1"}
	agent.MIG = false
	agent.Processes.ProcRoot = "/host/proc"
	agent.Kubernetes = KubernetesConfig{PodResourcesSocket: "/var/lib/kubelet/pod-resources/kubelet.sock", Timeout: 2 * time.Second}
	agent.Events.Types = []string{"xid_critical_error", "gpu_unavailable"}
	agent.Events.WaitTimeout = 500 * time.Millisecond
	agent.Metrics[mPCIeThroughput] = MetricConfig{Enabled: true}
	agent.Metrics[mProcessUtilization] = MetricConfig{Enabled: true}
	agent.Metrics[mFanSpeed] = MetricConfig{Enabled: false}

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewID(metadata.Type), Want: createDefaultConfig()},
		{ID: component.NewIDWithName(metadata.Type, "agent"), Want: agent},
		{ID: component.NewIDWithName(metadata.Type, "bad_on_missing"), WantErr: []string{`on_missing: unknown value "ignore", allowed values: warn, fail`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_metric"), WantErr: []string{"metrics::hw.gpu.temperature: unknown metric, allowed values: hw.energy, hw.errors"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_event"), WantErr: []string{`events::types[0]: unknown event type "xid", allowed values: clock_change, double_bit_ecc_error`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_timing"), WantErr: []string{
			"collection_interval must be positive",
			"init_retry_interval must be 0 (no retry) or positive, got -1s",
			"events::wait_timeout must be between 10ms and 1m, got 5ms"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_kubernetes"), WantErr: []string{"kubernetes::timeout must be between 1ns and 30s, got 0s"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_devices"), WantErr: []string{
			"devices[1]: empty; allowed values: a GPU UUID (GPU-...) or a device index",
			`devices[2]: "0" listed twice`}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}

func TestMetricEnabledFallsBackToDefault(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Metrics = map[string]MetricConfig{mGPUUtilization: {Enabled: false}}
	assert.False(t, cfg.metricEnabled(mGPUUtilization))
	assert.True(t, cfg.metricEnabled(mPower), "absent from the map: default on")
	assert.False(t, cfg.metricEnabled(mPCIeThroughput), "absent from the map: default off (expensive)")
}
