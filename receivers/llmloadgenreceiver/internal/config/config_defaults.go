package config

import (
	"time"

	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
)

// Default is the configuration of a receiver whose YAML sets nothing.
func Default() *Config {
	return &Config{
		Mode:      ModeSynthetic,
		Timing:    TimingRealtime,
		Semconv:   SemconvGenAIv141,
		Arrival:   ArrivalConfig{Type: ArrivalPoisson, Rate: 5, Burstiness: 1, Concurrency: 8, ThinkTime: time.Second},
		Scenarios: defaultScenarios(),
		Models:    defaultModels(),
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
		Stream:           StreamConfig{TokensPerChunk: 1, ChunkEvents: ChunkEventsFirst},
		Content:          ContentConfig{PromptBytes: 2048, CompletionBytes: 1024},
		Resources:        ResourcesConfig{Services: 3, InstancesPerService: 2, ServiceNamePrefix: "llm-app"},
		Metrics:          MetricsConfig{Interval: 10 * time.Second},
		BatchSize:        100,
		FlushInterval:    200 * time.Millisecond,
		ProgressInterval: 10 * time.Second,
		ProgressOutput:   ProgressLog,
		Backpressure:     BackpressureConfig{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 2 * time.Second},
		Live:             defaultLiveConfig(),
		Shard:            ShardConfig{Count: 1},
	}
}

// defaultScenarios is the default scenario mix: mostly chat, some RAG, agent
// and embeddings requests.
func defaultScenarios() []ScenarioConfig {
	return []ScenarioConfig{
		{Type: ScenarioChat, Weight: 6},
		{Type: ScenarioRAG, Weight: 2},
		{Type: ScenarioAgent, Weight: 1},
		{Type: ScenarioEmbeddings, Weight: 1},
	}
}

// defaultModels is the default model fleet: two chat models and one
// embedding model with typical latency and token distributions.
func defaultModels() []ModelConfig {
	return []ModelConfig{
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
	}
}

// defaultLiveConfig is the live section of the default configuration: a
// streaming chat load against a local OpenAI-compatible server.
func defaultLiveConfig() LiveConfig {
	client := confighttp.NewDefaultClientConfig()
	client.Endpoint = "http://127.0.0.1:8000/v1"
	return LiveConfig{
		Client:         client,
		Model:          "mock-llm",
		Provider:       "openai",
		Operation:      LiveOpChat,
		Stream:         true,
		IncludeUsage:   true,
		MaxTokens:      128,
		MaxConcurrency: 1024,
		MaxQueue:       100000,
		Prompt: LivePromptConfig{
			System:        "You are a helpful assistant.",
			User:          "Summarize the following notes in a few sentences.",
			InputTokens:   Distribution{Type: DistConstant, Value: 256},
			ContextWindow: 8192,
			UniquePrefix:  true,
		},
		Dataset:          dataset.Config{Format: dataset.FormatJSONL, Order: dataset.OrderRandom, MaxRecords: 100_000},
		Trace:            dataset.TraceConfig{Format: dataset.TraceFormatMooncake, Speed: 1, BlockTokens: 512},
		Timeouts:         LiveTimeoutsConfig{Connect: 10 * time.Second, TTFT: time.Minute, Idle: 30 * time.Second, Total: 10 * time.Minute},
		ChunkEvents:      ChunkEventsFirst,
		DrainTimeout:     10 * time.Second,
		Pacer:            LivePacerConfig{Clock: PacerTimerfd, Spin: 100 * time.Microsecond},
		Transport:        TransportAuto,
		KernelTimestamps: true,
		Sweep:            LiveSweepConfig{MinGoodRatio: 0.9, SaturationRatio: 0.9, Server: defaultSweepServer(), Search: SweepSteps, Rates: 8},
	}
}
