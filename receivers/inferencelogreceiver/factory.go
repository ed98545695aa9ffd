package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/input/file"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// NewFactory returns the factory of the inference_log receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithLogs(createLogs, metadata.LogsStability),
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	in := file.NewConfig()
	in.StartAt = "end"
	// Leading white space is part of a line: it marks traceback frames and
	// other continuation lines, which the presets fold into their record.
	in.Config.TrimConfig.PreserveLeading = true
	return &Config{
		InputConfig: *in,
		Preset:      "vllm",
		Timezone:    "Local",
		Unwrap:      true,
		Operators:   []operator.Config{},
		Metrics:     MetricsConfig{Namespace: "inference_log"},
	}
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := sharedReceiver(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.Unwrap().setLogs(next)
	return r, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := sharedReceiver(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.Unwrap().setMetrics(next)
	return r, nil
}
