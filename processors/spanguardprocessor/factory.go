package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

// NewFactory returns the factory of the span_guard processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	return newSpanGuard(set, cfg.(*Config), next)
}
