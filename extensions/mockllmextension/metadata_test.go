package mockllmextension

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
)

var identity = metadatatest.Identity{
	Type:      metadata.Type,
	Class:     metadatatest.Extension,
	Stability: map[string]component.StabilityLevel{"extension": metadata.ExtensionStability},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics starts the extension on loopback with an SDK
// behind the Recorder, collects once while it serves (running the callback
// of its observable instruments), and checks that metadata.yaml documents
// every instrument it created.
func TestMetadataSelfMetrics(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(bg)) })
	set := nopSettings()
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(tt.NewTelemetrySettings())
	e := create(t, testConfig(), set)
	require.NoError(t, e.Start(bg, componenttest.NewNopHost()))
	collected := metadatatest.CollectedNames(t, tt.Reader, metadata.ScopeName)
	require.NoError(t, e.Shutdown(bg))

	assert.NotEmpty(t, collected, "the callback reported nothing")
	assert.Subset(t, rec.Names(metadata.ScopeName), collected, "collected metrics the Recorder did not see created")
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
