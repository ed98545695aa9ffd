package llmloadgenreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

var identity = metadatatest.Identity{
	Type:  metadata.Type,
	Class: metadatatest.Receiver,
	Stability: map[string]component.StabilityLevel{
		"traces":  metadata.TracesStability,
		"metrics": metadata.MetricsStability,
		"logs":    metadata.LogsStability,
	},
}

func TestMetadata(t *testing.T) {
	metadatatest.CheckMetadata(t, ".", identity)
	metadatatest.CheckFactory(t, NewFactory(), identity)
}

// TestMetadataSelfMetrics runs the receiver once in every mode (a mode's
// runner creates its instruments when it starts: synthetic the shared ones,
// live those and its own) and checks that metadata.yaml documents the union
// of what they created.
func TestMetadataSelfMetrics(t *testing.T) {
	mock, err := mockllm.New(mockllm.DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, mock.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = mock.Close() })
	synthetic := createDefaultConfig().(*Config)
	synthetic.Timing, synthetic.Requests, synthetic.ProgressInterval = config.TimingAFAP, 5, 0
	live := createDefaultConfig().(*Config)
	live.Mode, live.Requests, live.ProgressInterval = config.ModeLive, 2, 0
	live.Arrival = config.ArrivalConfig{Type: config.ArrivalConstant, Rate: 50}
	live.Live.Client.Endpoint = mock.URL() + "/v1"
	live.Live.DrainTimeout = 5 * time.Second
	configs := map[string]*config.Config{config.ModeSynthetic: synthetic, config.ModeLive: live}
	var created []metadatatest.Instrument
	for _, mode := range config.Modes {
		cfg, ok := configs[mode]
		require.Truef(t, ok, "mode %q has no configuration in this test: add one so that its instruments are checked", mode)
		require.NoError(t, cfg.Validate())
		set := receivertest.NewNopSettings(metadata.Type)
		var rec *metadatatest.Recorder
		set.TelemetrySettings, rec = metadatatest.Record(componenttest.NewNopTelemetrySettings())
		f := NewFactory()
		tr, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
		require.NoError(t, err)
		mr, err := f.CreateMetrics(context.Background(), set, cfg, new(consumertest.MetricsSink))
		require.NoError(t, err)
		lr, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
		require.NoError(t, err)
		metadatatest.StartShutdown(t, tr, mr, lr)
		mine := rec.Instruments(metadata.ScopeName)
		require.NotEmptyf(t, mine, "mode %q created no instrument", mode)
		created = append(created, mine...)
	}
	metadatatest.CheckSelfMetrics(t, ".", created)
}
