package spilloverconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
)

var identity = metadatatest.Identity{
	Type:      metadata.Type,
	Class:     metadatatest.Connector,
	Stability: map[string]component.StabilityLevel{"traces_to_traces": metadata.TracesToTracesStability},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics drives every route (primary, spill, refusal) with
// an SDK behind the Recorder, and checks that metadata.yaml documents every
// instrument the connector created.
func TestMetadataSelfMetrics(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(tt.NewTelemetrySettings())
	prim := &backend{}
	router := connector.NewTracesRouter(map[pipeline.ID]consumer.Traces{primaryID: prim, spillID: new(consumertest.TracesSink)})
	cfg := createDefaultConfig().(*Config)
	cfg.Primary, cfg.Spill = primaryID, spillID
	c, err := NewFactory().CreateTracesToTraces(context.Background(), set, cfg, router)
	require.NoError(t, err)
	f := &fixture{c: c}
	require.NoError(t, f.send(t, 2))
	prim.down.Store(true)
	require.NoError(t, f.send(t, 2))
	prim.permanent.Store(true)
	c.(*spillover).spillUntil.Store(0)
	require.Error(t, f.send(t, 2))

	collected := metadatatest.CollectedNames(t, tt.Reader, metadata.ScopeName)
	assert.Len(t, collected, 4)
	assert.Subset(t, rec.Names(metadata.ScopeName), collected, "collected metrics the Recorder did not see created")
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
