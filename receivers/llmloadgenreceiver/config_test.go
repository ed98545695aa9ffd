package llmloadgenreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {

	full := createDefaultConfig().(*Config)
	full.Seed = 99
	full.Timing = TimingAFAP
	full.StartTime = "2026-11-29T00:00:00Z"
	full.Semconv = "openinference"
	full.Duration = 10 * time.Minute
	full.Requests = 5000
	full.Arrival = ArrivalConfig{Type: ArrivalGamma, Rate: 20, Burstiness: 0.5, Concurrency: 8, ThinkTime: time.Second,
		Stages: []StageConfig{{Duration: time.Minute, Target: 100}, {Duration: 30 * time.Second, Target: 100}, {Duration: time.Minute, Target: 0}}}
	full.Scenarios = []ScenarioConfig{{Type: ScenarioChat, Weight: 3, Route: "/chat"}, {Type: ScenarioAgent, Weight: 1}}
	full.Models = []ModelConfig{{
		Name: "llama-3.1-8b", Provider: "vllm", Weight: 1, ServerAddress: "vllm.internal", ContextWindow: 8192,
		TTFT:         Distribution{P50: 0.1, P99: 0.9},
		ITL:          Distribution{Type: DistNormal, Mean: 0.02, StdDev: 0.005},
		InputTokens:  Distribution{Type: DistUniform, Min: 100, Max: 900},
		OutputTokens: Distribution{Type: DistExponential, Mean: 200},
	}}
	full.Faults = []FaultConfig{
		{Type: FaultRateLimit, Probability: 0.05, RetryAfter: 2 * time.Second, MaxRetries: 3},
		{Type: FaultTimeout, Probability: 0.01, Timeout: 30 * time.Second},
	}
	full.Agent = AgentConfig{Depth: 2, FanOut: 3, DependencyProbability: 0.3, MinSteps: 2, MaxSteps: 6, Tools: []string{"search"},
		ToolLatency: Distribution{Type: DistConstant, Value: 0.2, P50: 0.15, P99: 1.5}}
	full.Stream = StreamConfig{TokensPerChunk: 4, ChunkEvents: ChunkEventsAll, SpanPerChunk: true, MaxChunkSpans: 64}
	full.Content = ContentConfig{Enabled: true, PromptBytes: 100, CompletionBytes: 50}
	full.Resources = ResourcesConfig{Services: 5, InstancesPerService: 3, ServiceNamePrefix: "chatbot",
		Attributes: map[string]string{"deployment.environment.name": "staging"}}
	full.Metrics = MetricsConfig{Interval: time.Second}
	full.Logs = LogsConfig{InferenceDetails: true}
	full.BatchSize = 500
	full.FlushInterval = time.Second
	full.ProgressInterval = 0
	full.Backpressure = BackpressureConfig{InitialBackoff: 5 * time.Millisecond, MaxBackoff: time.Second}

	live := createDefaultConfig().(*Config)
	live.Mode = ModeLive

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewIDWithName(metadata.Type, ""), Want: createDefaultConfig()},
		{ID: component.NewIDWithName(metadata.Type, "full"), Want: full},
		{ID: component.NewIDWithName(metadata.Type, "live"), Want: live},
		{ID: component.NewIDWithName(metadata.Type, "bad_mode"), WantErr: []string{"mode:", `"replay"`, "synthetic, live"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_timing"), WantErr: []string{"timing:", `"slow"`, "realtime, as_fast_as_possible"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_semconv"), WantErr: []string{"semconv:", `"gen_ai_v9"`, "gen_ai_v1.41", "openinference", "legacy_llm"}},
		{ID: component.NewIDWithName(metadata.Type, "negative_rate"), WantErr: []string{"arrival.rate:", "-3"}},
		{ID: component.NewIDWithName(metadata.Type, "zero_rate"), WantErr: []string{"arrival.rate:", "> 0"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_arrival"), WantErr: []string{"arrival.type:", `"bursty"`, "constant, poisson, gamma, concurrency"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_burstiness"), WantErr: []string{"arrival.burstiness:"}},
		{ID: component.NewIDWithName(metadata.Type, "zero_concurrency"), WantErr: []string{"arrival.concurrency:"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_stage"), WantErr: []string{"arrival.stages[0].duration:"}},
		{ID: component.NewIDWithName(metadata.Type, "zero_weights"), WantErr: []string{"scenarios:", "weights sum to zero"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_scenario"), WantErr: []string{"scenarios[0].type:", `"batch"`, "chat, rag, agent, embeddings"}},
		{ID: component.NewIDWithName(metadata.Type, "p99_below_p50"), WantErr: []string{"models[0].ttft.p99:", ">= models[0].ttft.p50"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_distribution"), WantErr: []string{"models[0].ttft.type:", `"pareto"`, "lognormal, normal, uniform, exponential, constant"}},
		{ID: component.NewIDWithName(metadata.Type, "no_embedding_model"), WantErr: []string{"models:", "embedding model"}},
		{ID: component.NewIDWithName(metadata.Type, "fault_sum"), WantErr: []string{"faults:", "sum to 1.3"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_fault"), WantErr: []string{"faults[0].type:", `"explode"`, "rate_limit, overloaded, context_length, mid_stream, cancel, timeout"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_agent"), WantErr: []string{"agent.fan_out:", "agent.max_steps:"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_chunk_events"), WantErr: []string{"stream.chunk_events:", `"some"`, "none, first, all"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_resources"), WantErr: []string{"resources.services:"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_backoff"), WantErr: []string{"backpressure.max_backoff:"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_start_time"), WantErr: []string{"start_time:", `"yesterday"`}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}
