package nvidiagpureceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

var identity = metadatatest.Identity{
	Type:  metadata.Type,
	Class: metadatatest.Receiver,
	Stability: map[string]component.StabilityLevel{
		"metrics": metadata.MetricsStability,
		"logs":    metadata.LogsStability,
	},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics checks that metadata.yaml documents every
// instrument the receiver creates, on the shipped factory (created only: it
// needs no NVML until it starts) and on a fake NVML with two GPUs, started
// until it has scraped and delivered events.
func TestMetadataSelfMetrics(t *testing.T) {
	create := func(f receiver.Factory, cfg *Config) (receiver.Metrics, receiver.Logs, *consumertest.MetricsSink, *metadatatest.Recorder) {
		set := receivertest.NewNopSettings(metadata.Type)
		var rec *metadatatest.Recorder
		set.TelemetrySettings, rec = metadatatest.Record(componenttest.NewNopTelemetrySettings())
		ms := new(consumertest.MetricsSink)
		mr, err := f.CreateMetrics(context.Background(), set, cfg, ms)
		require.NoError(t, err)
		lr, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
		require.NoError(t, err)
		return mr, lr, ms, rec
	}

	mr, lr, _, shipped := create(NewFactory(), createDefaultConfig())
	require.NoError(t, mr.Shutdown(context.Background()))
	require.NoError(t, lr.Shutdown(context.Background()))

	mr, lr, ms, fake := create(newFactory(newFakeNVML(h100(0), h200(1)).provider()), testConfig())
	host := componenttest.NewNopHost()
	require.NoError(t, mr.Start(context.Background(), host))
	require.NoError(t, lr.Start(context.Background(), host))
	require.Eventually(t, func() bool { return ms.DataPointCount() > 0 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, mr.Shutdown(context.Background()))
	require.NoError(t, lr.Shutdown(context.Background()))

	for _, rec := range []*metadatatest.Recorder{shipped, fake} {
		require.NotEmpty(t, rec.Instruments(metadata.ScopeName))
	}
	metadatatest.CheckSelfMetrics(t, ".", append(shipped.Instruments(metadata.ScopeName), fake.Instruments(metadata.ScopeName)...))
}
