package llmloadgenreceiver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

func TestFactoryType(t *testing.T) {
	require.Equal(t, metadata.Type, NewFactory().Type())
}

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, cfg.(*config.Config).Validate())
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*config.Config)
	set := receivertest.NewNopSettings(metadata.Type)

	// Shutdown without Start.
	r, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(context.Background()))

	// Start and shut down twice, each time with all three signals sharing one generator.
	for range 2 {
		tr, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
		require.NoError(t, err)
		mr, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
		require.NoError(t, err)
		lr, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
		require.NoError(t, err)
		require.Same(t, tr.(*handle).l, mr.(*handle).l)
		require.Same(t, tr.(*handle).l, lr.(*handle).l)
		require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, mr.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, lr.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, tr.Shutdown(context.Background()))
		require.NoError(t, mr.Shutdown(context.Background()))
		require.NoError(t, lr.Shutdown(context.Background()))
		require.NoError(t, lr.Shutdown(context.Background()))
	}
	require.Zero(t, instances.Len())
}
