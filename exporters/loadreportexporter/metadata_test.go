package loadreportexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
)

var identity = metadatatest.Identity{
	Type:  metadata.Type,
	Class: metadatatest.Exporter,
	Stability: map[string]component.StabilityLevel{
		"traces":  metadata.TracesStability,
		"metrics": metadata.MetricsStability,
	},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics runs the traces and metrics exporters over a known
// run, with an SDK behind the Recorder, and checks that metadata.yaml
// documents every instrument they created.
func TestMetadataSelfMetrics(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(bg)) })
	set := exportertest.NewNopSettings(metadata.Type)
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(tt.NewTelemetrySettings())
	f := NewFactory()
	cfg := testConfig(t)
	te, err := f.CreateTraces(bg, set, cfg)
	require.NoError(t, err)
	me, err := f.CreateMetrics(bg, set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Start(bg, componenttest.NewNopHost()))
	require.NoError(t, me.Start(bg, componenttest.NewNopHost()))
	require.NoError(t, te.ConsumeTraces(bg, knownRun()))
	require.NoError(t, me.ConsumeMetrics(bg, knownMetrics()))
	require.NoError(t, te.Shutdown(bg))
	require.NoError(t, me.Shutdown(bg))

	collected := metadatatest.CollectedNames(t, tt.Reader, metadata.ScopeName)
	assert.NotEmpty(t, collected)
	assert.Subset(t, rec.Names(metadata.ScopeName), collected, "collected metrics the Recorder did not see created")
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
