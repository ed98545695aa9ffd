package llmmetricsconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
)

var identity = metadatatest.Identity{
	Type:      metadata.Type,
	Class:     metadatatest.Connector,
	Stability: map[string]component.StabilityLevel{"traces_to_metrics": metadata.TracesToMetricsStability},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics runs the connector over the recorded spans, with
// an SDK behind the Recorder, and checks that metadata.yaml documents every
// instrument it created.
func TestMetadataSelfMetrics(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(tt.NewTelemetrySettings())
	f := NewFactory()
	c, err := f.CreateTracesToMetrics(context.Background(), set, f.CreateDefaultConfig(), new(consumertest.MetricsSink))
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), recordedSpans(t)))
	require.NoError(t, c.Shutdown(context.Background()))

	collected := metadatatest.CollectedNames(t, tt.Reader, metadata.ScopeName)
	assert.NotEmpty(t, collected)
	assert.Subset(t, rec.Names(metadata.ScopeName), collected, "collected metrics the Recorder did not see created")
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
