package nvidiagpureceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

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

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "agent"), want: agent},
		{id: component.NewIDWithName(metadata.Type, "bad_on_missing"), wantErr: []string{`on_missing: unknown value "ignore", allowed values: warn, fail`}},
		{id: component.NewIDWithName(metadata.Type, "bad_metric"), wantErr: []string{"metrics::hw.gpu.temperature: unknown metric, allowed values: hw.energy, hw.errors"}},
		{id: component.NewIDWithName(metadata.Type, "bad_event"), wantErr: []string{`events::types[0]: unknown event type "xid", allowed values: clock_change, double_bit_ecc_error`}},
		{id: component.NewIDWithName(metadata.Type, "bad_timing"), wantErr: []string{
			"collection_interval must be positive",
			"init_retry_interval must be 0 (no retry) or positive, got -1s",
			"events::wait_timeout must be between 10ms and 1m, got 5ms"}},
		{id: component.NewIDWithName(metadata.Type, "bad_kubernetes"), wantErr: []string{"kubernetes::timeout must be between 1ns and 30s, got 0s"}},
		{id: component.NewIDWithName(metadata.Type, "bad_devices"), wantErr: []string{
			"devices[1]: empty; allowed values: a GPU UUID (GPU-...) or a device index",
			`devices[2]: "0" listed twice`}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestMetricEnabledFallsBackToDefault(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Metrics = map[string]MetricConfig{mGPUUtilization: {Enabled: false}}
	assert.False(t, cfg.metricEnabled(mGPUUtilization))
	assert.True(t, cfg.metricEnabled(mPower), "absent from the map: default on")
	assert.False(t, cfg.metricEnabled(mPCIeThroughput), "absent from the map: default off (expensive)")
}
