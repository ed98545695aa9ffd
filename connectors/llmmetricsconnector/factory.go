package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// NewFactory returns the llm_metrics connector factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Target:                      string(genai.TargetV1_41),
		Histogram:                   HistogramConfig{Type: histogramExplicit, MaxSize: 160},
		ResourceAttributes:          []string{"service.name", "service.namespace", "deployment.environment.name"},
		AggregationTemporality:      temporalityCumulative,
		MetricsFlushInterval:        15 * time.Second,
		AggregationCardinalityLimit: 5000,
		GoldenSignals:               true,
		ServerMetrics:               true,
		Evaluation:                  EvaluationConfig{ScoreThreshold: 0.5, MaxNames: 8},
		Exemplars:                   ExemplarsConfig{MaxPerDataPoint: 5},
	}
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	return newConnector(set, cfg.(*Config), next)
}
