package inferencelogreceiver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

var identity = metadatatest.Identity{
	Type:  metadata.Type,
	Class: metadatatest.Receiver,
	Stability: map[string]component.StabilityLevel{
		"logs":    metadata.LogsStability,
		"metrics": metadata.MetricsStability,
	},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics creates, starts and stops the receiver (both
// signals) once per preset, and without one, and checks that metadata.yaml
// documents every instrument they created.
func TestMetadataSelfMetrics(t *testing.T) {
	var created []metadatatest.Instrument
	for _, name := range append(append([]string(nil), presetNames...), presetNone) {
		cfg := testConfig(name, filepath.Join(t.TempDir(), "*.log"))
		set := receivertest.NewNopSettings(metadata.Type)
		var rec *metadatatest.Recorder
		set.TelemetrySettings, rec = metadatatest.Record(componenttest.NewNopTelemetrySettings())
		f := NewFactory()
		lr, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
		require.NoError(t, err)
		mr, err := f.CreateMetrics(context.Background(), set, cfg, new(consumertest.MetricsSink))
		require.NoError(t, err)
		metadatatest.StartShutdown(t, lr, mr)
		mine := rec.Instruments(metadata.ScopeName)
		require.NotEmptyf(t, mine, "preset %q created no instrument", name)
		created = append(created, mine...)
	}
	metadatatest.CheckSelfMetrics(t, ".", created)
}
