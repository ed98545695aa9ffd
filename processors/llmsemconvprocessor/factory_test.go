package llmsemconvprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

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
	ctx := context.Background()

	tp, err := f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.True(t, tp.Capabilities().MutatesData)
	lp, err := f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)

	// Shutdown without start.
	require.NoError(t, tp.Shutdown(ctx))
	require.NoError(t, lp.Shutdown(ctx))

	// Start and shut down twice.
	for i := 0; i < 2; i++ {
		require.NoError(t, tp.Start(ctx, componenttest.NewNopHost()))
		require.NoError(t, tp.Shutdown(ctx))
		require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))
		require.NoError(t, lp.Shutdown(ctx))
	}
	processortest.VerifyShutdown(t, f, cfg)
}

func TestCreateRejectsUnknownDialectTable(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Target = "v0"
	_, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	assert.ErrorContains(t, err, `no target "v0"`)
}
