package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// NewFactory returns the llm_loadgen receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability),
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Mode:    modeSynthetic,
		Timing:  timingRealtime,
		Semconv: genAIv141.name,
		Arrival: ArrivalConfig{Type: arrivalPoisson, Rate: 5, Burstiness: 1, Concurrency: 8, ThinkTime: time.Second},
		Scenarios: []ScenarioConfig{
			{Type: scenarioChat, Weight: 6},
			{Type: scenarioRAG, Weight: 2},
			{Type: scenarioAgent, Weight: 1},
			{Type: scenarioEmbeddings, Weight: 1},
		},
		Models: []ModelConfig{
			{
				Name: "gpt-4o-mini", Provider: "openai", Weight: 3, ServerAddress: "api.openai.com", ContextWindow: 128000,
				TTFT: Distribution{P50: 0.35, P99: 2}, ITL: Distribution{P50: 0.012, P99: 0.04},
				InputTokens: Distribution{P50: 400, P99: 6000}, OutputTokens: Distribution{P50: 180, P99: 1200},
			},
			{
				Name: "claude-sonnet-4", Provider: "anthropic", Weight: 1, ServerAddress: "api.anthropic.com", ContextWindow: 200000,
				TTFT: Distribution{P50: 0.6, P99: 3}, ITL: Distribution{P50: 0.02, P99: 0.06},
				InputTokens: Distribution{P50: 800, P99: 12000}, OutputTokens: Distribution{P50: 250, P99: 2000},
			},
			{
				Name: "text-embedding-3-small", Provider: "openai", Weight: 1, ServerAddress: "api.openai.com", ContextWindow: 8191,
				Embedding: true, EmbeddingDimensions: 1536,
				TTFT: Distribution{P50: 0.08, P99: 0.5}, InputTokens: Distribution{P50: 60, P99: 800},
			},
		},
		Agent: AgentConfig{
			Depth: 1, FanOut: 2, DependencyProbability: 0.5, MinSteps: 1, MaxSteps: 4,
			Tools:       []string{"web_search", "code_interpreter", "sql_query", "get_weather"},
			ToolLatency: Distribution{P50: 0.15, P99: 1.5},
		},
		RAG: RAGConfig{
			VectorStore: "qdrant", Collection: "docs", TopK: 8,
			RetrievalLatency: Distribution{P50: 0.03, P99: 0.2},
			RerankModel:      "rerank-v3.5", RerankLatency: Distribution{P50: 0.05, P99: 0.3},
		},
		Stream:           StreamConfig{TokensPerChunk: 1, ChunkEvents: chunkEventsFirst},
		Content:          ContentConfig{PromptBytes: 2048, CompletionBytes: 1024},
		Resources:        ResourcesConfig{Services: 3, InstancesPerService: 2, ServiceNamePrefix: "llm-app"},
		Metrics:          MetricsConfig{Interval: 10 * time.Second},
		BatchSize:        100,
		FlushInterval:    200 * time.Millisecond,
		ProgressInterval: 10 * time.Second,
		ProgressOutput:   progressLog,
		Backpressure:     BackpressureConfig{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 2 * time.Second},
		Live:             defaultLiveConfig(),
		Shard:            ShardConfig{Count: 1},
	}
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return acquire(set, cfg.(*Config), func(l *loadgen) { l.traces = next })
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	return acquire(set, cfg.(*Config), func(l *loadgen) { l.metrics = next })
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return acquire(set, cfg.(*Config), func(l *loadgen) { l.logs = next })
}
