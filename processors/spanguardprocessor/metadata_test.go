package spanguardprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

var identity = metadatatest.Identity{
	Type:      metadata.Type,
	Class:     metadatatest.Processor,
	Stability: map[string]component.StabilityLevel{"traces": metadata.TracesStability},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics creates, starts and stops the processor and checks
// that metadata.yaml documents every instrument it created, the observable
// gauges of its held state included.
func TestMetadataSelfMetrics(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	var rec *metadatatest.Recorder
	set.TelemetrySettings, rec = metadatatest.Record(componenttest.NewNopTelemetrySettings())
	tp, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), new(consumertest.TracesSink))
	require.NoError(t, err)
	metadatatest.StartShutdown(t, tp)
	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
}
