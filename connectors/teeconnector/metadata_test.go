package teeconnector

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-llm/otelcol-llm/connectors/teeconnector/internal/metadata"
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

// TestMetadataSelfMetrics drives a refusing reader and a read-only batch
// with an SDK behind the Recorder, and checks that metadata.yaml documents
// every instrument the connector created.
func TestMetadataSelfMetrics(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(tt.NewTelemetrySettings())
	j := &journal{}
	router := connector.NewTracesRouter(map[pipeline.ID]consumer.Traces{
		genaiID:   &fake{j: j, err: errors.New("refused")},
		guardedID: &fake{j: j, mutates: true},
	})
	c, err := NewFactory().CreateTracesToTraces(context.Background(), set, &Config{Readers: []pipeline.ID{genaiID}, Owner: guardedID}, router)
	require.NoError(t, err)
	td := batch("chat")
	td.MarkReadOnly()
	require.NoError(t, c.ConsumeTraces(context.Background(), td))

	collected := metadatatest.CollectedNames(t, tt.Reader, metadata.ScopeName)
	assert.Len(t, collected, 2)
	assert.Subset(t, rec.Names(metadata.ScopeName), collected, "collected metrics the Recorder did not see created")
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
