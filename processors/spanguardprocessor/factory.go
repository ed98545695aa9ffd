package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"context"
	"time"

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

func createDefaultConfig() component.Config {
	return &Config{
		MaxBatchSpans:            8192,
		MaxBatchBytes:            3 << 20,
		FlushTimeout:             200 * time.Millisecond,
		MetadataCardinalityLimit: 1000,
		TraceBudget: TraceBudgetConfig{
			MaxSpans:  10000,
			MaxBytes:  32 << 20,
			Window:    30 * time.Second,
			MaxTraces: 100000,
		},
		Compression: CompressionConfig{
			Enabled:         true,
			MaxSpanDuration: 100 * time.Millisecond,
			MinRun:          2,
		},
		SpanLimits: SpanLimitsConfig{
			Apply:             limitsOverBudget,
			MaxAttributeBytes: 4096,
			TruncationMarker:  "…",
			MaxAttributes:     128,
			MaxEvents:         128,
			MaxLinks:          128,
		},
		Summary:        SummaryConfig{Enabled: true, MaxNames: 10},
		MemoryLimitMiB: 512,
		RateLimit:      RateLimitConfig{Key: "resource:service.name", MaxKeys: 10000},
	}
}
