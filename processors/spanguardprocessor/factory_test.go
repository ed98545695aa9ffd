package spanguardprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, "span_guard", f.Type().String())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
}

func TestDefaultConfigStruct(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, cfg.(*Config).Validate())
	c := cfg.(*Config)
	assert.Less(t, c.MaxBatchBytes, 4<<20, "default batch stays under gRPC's 4 MiB")
}

func TestOnlyTracesSupported(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	_, err := f.CreateMetrics(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	assert.ErrorIs(t, err, pipeline.ErrSignalNotSupported)
	_, err = f.CreateLogs(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	assert.ErrorIs(t, err, pipeline.ErrSignalNotSupported)
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	componenttestkit.Lifecycle(t, func(t *testing.T) component.Component {
		p, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
		require.NoError(t, err)
		assert.True(t, p.Capabilities().MutatesData)
		return p
	})
}
