package nvidiagpureceiver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, "nvidia_gpu", f.Type().String())
	assert.Equal(t, metadata.MetricsStability, f.MetricsStability())
	assert.Equal(t, metadata.LogsStability, f.LogsStability())
}

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	c := cfg.(*Config)
	require.NoError(t, c.Validate())
	assert.Equal(t, onMissingWarn, c.OnMissing)
	assert.Equal(t, len(metricDefs), len(c.Metrics))
	for _, d := range metricDefs {
		assert.Equal(t, d.enabled, c.Metrics[d.name].Enabled, d.name)
		if d.expensive {
			assert.False(t, d.enabled, "%s is expensive and must be opt-in", d.name)
		}
	}
}

// TestRealNVMLWithoutGPU starts the real factory (go-nvml, no mock). On a
// machine without the NVIDIA driver, on_missing: warn keeps the receiver
// running idle and on_missing: fail refuses to start with an error naming
// the cause. On a GPU machine both start.
func TestRealNVMLWithoutGPU(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Events.Enabled = false
	set := receivertest.NewNopSettings(metadata.Type)
	r, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.Shutdown(context.Background()))

	cfg = f.CreateDefaultConfig().(*Config)
	cfg.OnMissing = onMissingFail
	cfg.Events.Enabled = false
	r, err = f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	err = r.Start(context.Background(), componenttest.NewNopHost())
	if err != nil {
		assert.Contains(t, err.Error(), "nvidia_gpu: NVML initialization failed")
	}
	require.NoError(t, r.Shutdown(context.Background()))
}
