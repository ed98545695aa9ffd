package llmsemconvprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, "llm_semconv", f.Type().String())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
	assert.Equal(t, metadata.LogsStability, f.LogsStability())
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig()
	set := processortest.NewNopSettings(metadata.Type)
	componenttestkit.Lifecycle(t, func(t *testing.T) component.Component {
		tp, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
		require.NoError(t, err)
		assert.True(t, tp.Capabilities().MutatesData)
		return tp
	})
	componenttestkit.Lifecycle(t, func(t *testing.T) component.Component {
		lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
		require.NoError(t, err)
		return lp
	})
	processortest.VerifyShutdown(t, f, cfg)
}

func TestCreateRejectsUnknownDialectTable(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Target = "v0"
	_, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	assert.ErrorContains(t, err, `no target "v0"`)
}
