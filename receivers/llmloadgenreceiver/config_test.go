package llmloadgenreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	full := createDefaultConfig().(*Config)
	full.Seed = 99
	full.Timing = timingAFAP
	full.StartTime = "2026-11-29T00:00:00Z"
	full.Semconv = "openinference"
	full.Duration = 10 * time.Minute
	full.Requests = 5000
	full.Arrival = ArrivalConfig{Type: arrivalGamma, Rate: 20, Burstiness: 0.5, Concurrency: 8, ThinkTime: time.Second,
		Stages: []StageConfig{{Duration: time.Minute, Target: 100}, {Duration: 30 * time.Second, Target: 100}, {Duration: time.Minute, Target: 0}}}
	full.Scenarios = []ScenarioConfig{{Type: scenarioChat, Weight: 3, Route: "/chat"}, {Type: scenarioAgent, Weight: 1}}
	full.Models = []ModelConfig{{
		Name: "llama-3.1-8b", Provider: "vllm", Weight: 1, ServerAddress: "vllm.internal", ContextWindow: 8192,
		TTFT:         Distribution{P50: 0.1, P99: 0.9},
		ITL:          Distribution{Type: distNormal, Mean: 0.02, StdDev: 0.005},
		InputTokens:  Distribution{Type: distUniform, Min: 100, Max: 900},
		OutputTokens: Distribution{Type: distExponential, Mean: 200},
	}}
	full.Faults = []FaultConfig{
		{Type: faultRateLimit, Probability: 0.05, RetryAfter: 2 * time.Second, MaxRetries: 3},
		{Type: faultTimeout, Probability: 0.01, Timeout: 30 * time.Second},
	}
	full.Agent = AgentConfig{Depth: 2, FanOut: 3, DependencyProbability: 0.3, MinSteps: 2, MaxSteps: 6, Tools: []string{"search"},
		ToolLatency: Distribution{Type: distConstant, Value: 0.2, P50: 0.15, P99: 1.5}}
	full.Stream = StreamConfig{TokensPerChunk: 4, ChunkEvents: chunkEventsAll, SpanPerChunk: true, MaxChunkSpans: 64}
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
	live.Mode = modeLive

	tests := []struct {
		name     string
		expected component.Config
		errs     []string // each must appear in the validation error
	}{
		{name: "", expected: createDefaultConfig()},
		{name: "full", expected: full},
		{name: "live", expected: live},
		{name: "bad_mode", errs: []string{"mode:", `"replay"`, "synthetic, live"}},
		{name: "bad_timing", errs: []string{"timing:", `"slow"`, "realtime, as_fast_as_possible"}},
		{name: "bad_semconv", errs: []string{"semconv:", `"gen_ai_v9"`, "gen_ai_v1.41", "openinference", "legacy_llm"}},
		{name: "negative_rate", errs: []string{"arrival.rate:", "-3"}},
		{name: "zero_rate", errs: []string{"arrival.rate:", "> 0"}},
		{name: "bad_arrival", errs: []string{"arrival.type:", `"bursty"`, "constant, poisson, gamma, concurrency"}},
		{name: "bad_burstiness", errs: []string{"arrival.burstiness:"}},
		{name: "zero_concurrency", errs: []string{"arrival.concurrency:"}},
		{name: "bad_stage", errs: []string{"arrival.stages[0].duration:"}},
		{name: "zero_weights", errs: []string{"scenarios:", "weights sum to zero"}},
		{name: "bad_scenario", errs: []string{"scenarios[0].type:", `"batch"`, "chat, rag, agent, embeddings"}},
		{name: "p99_below_p50", errs: []string{"models[0].ttft.p99:", ">= models[0].ttft.p50"}},
		{name: "bad_distribution", errs: []string{"models[0].ttft.type:", `"pareto"`, "lognormal, normal, uniform, exponential, constant"}},
		{name: "no_embedding_model", errs: []string{"models:", "embedding model"}},
		{name: "fault_sum", errs: []string{"faults:", "sum to 1.3"}},
		{name: "bad_fault", errs: []string{"faults[0].type:", `"explode"`, "rate_limit, overloaded, context_length, mid_stream, cancel, timeout"}},
		{name: "bad_agent", errs: []string{"agent.fan_out:", "agent.max_steps:"}},
		{name: "bad_chunk_events", errs: []string{"stream.chunk_events:", `"some"`, "none, first, all"}},
		{name: "bad_resources", errs: []string{"resources.services:"}},
		{name: "bad_backoff", errs: []string{"backpressure.max_backoff:"}},
		{name: "bad_start_time", errs: []string{"start_time:", `"yesterday"`}},
	}
	for _, tt := range tests {
		id := component.NewIDWithName(metadata.Type, tt.name)
		t.Run(id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.errs) > 0 {
				require.Error(t, err)
				for _, want := range tt.errs {
					assert.Contains(t, err.Error(), want)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expected, cfg)
		})
	}
}
