package llmsemconvprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

var identity = metadatatest.Identity{
	Type:  metadata.Type,
	Class: metadatatest.Processor,
	Stability: map[string]component.StabilityLevel{
		"traces": metadata.TracesStability,
		"logs":   metadata.LogsStability,
	},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics creates, starts and stops the traces and the logs
// processor and checks that metadata.yaml documents every instrument they
// created (the instruments are created with the processor).
func TestMetadataSelfMetrics(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(componenttest.NewNopTelemetrySettings())
	cfg := f.CreateDefaultConfig()
	tp, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	metadatatest.StartShutdown(t, tp, lp)
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
