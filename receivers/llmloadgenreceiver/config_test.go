package llmloadgenreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {

	full := createDefaultConfig().(*Config)
	full.Seed = 99
	full.Timing = config.TimingAFAP
	full.StartTime = "2026-11-29T00:00:00Z"
	full.Semconv = "openinference"
	full.Duration = 10 * time.Minute
	full.Requests = 5000
	full.Arrival = config.ArrivalConfig{Type: config.ArrivalGamma, Rate: 20, Burstiness: 0.5, Concurrency: 8, ThinkTime: time.Second,
		Stages: []config.StageConfig{{Duration: time.Minute, Target: 100}, {Duration: 30 * time.Second, Target: 100}, {Duration: time.Minute, Target: 0}}}
	full.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 3, Route: "/chat"}, {Type: config.ScenarioAgent, Weight: 1}}
	full.Models = []config.ModelConfig{{
		Name: "llama-3.1-8b", Provider: "vllm", Weight: 1, ServerAddress: "vllm.internal", ContextWindow: 8192,
		TTFT:         config.Distribution{P50: 0.1, P99: 0.9},
		ITL:          config.Distribution{Type: config.DistNormal, Mean: 0.02, StdDev: 0.005},
		InputTokens:  config.Distribution{Type: config.DistUniform, Min: 100, Max: 900},
		OutputTokens: config.Distribution{Type: config.DistExponential, Mean: 200},
	}}
	full.Faults = []config.FaultConfig{
		{Type: config.FaultRateLimit, Probability: 0.05, RetryAfter: 2 * time.Second, MaxRetries: 3},
		{Type: config.FaultTimeout, Probability: 0.01, Timeout: 30 * time.Second},
	}
	full.Agent = config.AgentConfig{Depth: 2, FanOut: 3, DependencyProbability: 0.3, MinSteps: 2, MaxSteps: 6, Tools: []string{"search"},
		ToolLatency: config.Distribution{Type: config.DistConstant, Value: 0.2, P50: 0.15, P99: 1.5}}
	full.Stream = config.StreamConfig{TokensPerChunk: 4, ChunkEvents: config.ChunkEventsAll, SpanPerChunk: true, MaxChunkSpans: 64}
	full.Content = config.ContentConfig{Enabled: true, PromptBytes: 100, CompletionBytes: 50}
	full.Resources = config.ResourcesConfig{Services: 5, InstancesPerService: 3, ServiceNamePrefix: "chatbot",
		Attributes: map[string]string{"deployment.environment.name": "staging"}}
	full.Metrics = config.MetricsConfig{Interval: time.Second}
	full.Logs = config.LogsConfig{InferenceDetails: true}
	full.BatchSize = 500
	full.FlushInterval = time.Second
	full.ProgressInterval = 0
	full.Backpressure = config.BackpressureConfig{InitialBackoff: 5 * time.Millisecond, MaxBackoff: time.Second}

	live := createDefaultConfig().(*Config)
	live.Mode = config.ModeLive

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

func TestLoadLiveConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config_live.yaml"))
	require.NoError(t, err)

	full := createDefaultConfig().(*Config)
	full.Mode, full.Seed, full.Requests, full.Duration = config.ModeLive, 5, 1000, 2*time.Minute
	full.Arrival = config.ArrivalConfig{Type: config.ArrivalGamma, Rate: 12, Burstiness: 0.5, Concurrency: 8, ThinkTime: time.Second,
		Stages: []config.StageConfig{{Duration: 30 * time.Second, Target: 40}}}
	l := &full.Live
	l.Client.Endpoint = "https://vllm.internal:8443/v1"
	l.Client.Headers = configopaque.MapList{}
	l.Client.Headers.Set("X-Tenant", "loadtest")
	l.Client.TLS.InsecureSkipVerify = true
	l.APIKey = "sk-test"
	l.Model, l.Provider, l.Operation = "meta-llama/Llama-3.1-8B-Instruct", "vllm", config.LiveOpText
	l.MaxTokens, l.IgnoreEOS = 256, true
	l.ExtraBody = map[string]any{"temperature": 0}
	l.Prompt = config.LivePromptConfig{System: "Be brief.", FewShot: []config.LiveMessage{{Role: "user", Content: "2+2?"}, {Role: "assistant", Content: "4"}},
		User: "Explain.", InputTokens: config.Distribution{Type: config.DistUniform, Min: 100, Max: 2000, Value: 256}, ContextWindow: 4096}
	l.MaxConcurrency, l.MaxQueue = 64, 500
	l.Timeouts = config.LiveTimeoutsConfig{Connect: 3 * time.Second, TTFT: 20 * time.Second, Idle: 5 * time.Second, Total: 2 * time.Minute}
	l.ChunkEvents, l.Tracestate, l.DrainTimeout = config.ChunkEventsAll, "vendor=loadtest", 30*time.Second

	sweep := createDefaultConfig().(*Config)
	sweep.Mode = config.ModeLive
	sweep.Arrival.Type, sweep.Arrival.Rate = config.ArrivalPoisson, 1
	sweep.Live.Sweep = config.LiveSweepConfig{StepDuration: 30 * time.Second, StartRate: 2, StepRate: 2, MaxRate: 40,
		TTFT: time.Second, TPOT: 50 * time.Millisecond, MinGoodRatio: 0.9, SaturationRatio: 0.9, Server: createDefaultConfig().(*Config).Live.Sweep.Server, Search: config.SweepSteps, Rates: 8}
	sweep.Live.Sweep.Server.MetricsURL, sweep.Live.Sweep.Server.Sustained = "http://127.0.0.1:8000/metrics", 10*time.Second

	tests := []struct {
		name     string
		expected component.Config
		errs     []string
	}{
		{name: "live_full", expected: full},
		{name: "live_sweep", expected: sweep},
		{name: "live_bad_endpoint", errs: []string{"live.client.endpoint:", `"ftp://host/v1"`, "http or https"}},
		{name: "live_client_timeout", errs: []string{"live.client.timeout:", "must be 0", "live.timeouts"}},
		{name: "live_no_model", errs: []string{"live.model:"}},
		{name: "live_bad_operation", errs: []string{"live.operation:", `"rerank"`, "chat, text_completion"}},
		{name: "live_bad_chunk_events", errs: []string{"live.chunk_events:", `"some"`, "none, first, all"}},
		{name: "live_context_window", errs: []string{"live.prompt.context_window:", "larger than live.max_tokens"}},
		{name: "live_zero_idle", errs: []string{"live.timeouts.idle:", "> 0"}},
		{name: "live_usage_without_stream", errs: []string{"live.include_usage:", "live.stream"}},
		{name: "live_bad_role", errs: []string{"live.prompt.few_shot[0].role:", `"tool"`, "user, assistant, system"}},
		{name: "live_sweep_closed_loop", errs: []string{"live.sweep:", "open-loop", "concurrency"}},
		{name: "live_sweep_no_slo", errs: []string{"live.sweep:", "SLO bound"}},
		{name: "live_sweep_bad_server", errs: []string{"live.sweep.server.metrics_url:", `"127.0.0.1:8000"`, "live.sweep.server.interval: must be > 0",
			"live.sweep.server.kv_cache_usage: must be in [0, 1]", "live.sweep.server.confidence:"}},
		{name: "live_server_without_sweep", errs: []string{"live.sweep.server:", "live.sweep.step_duration"}},
		{name: "live_sweep_bad_search", errs: []string{"live.sweep.search:", `"binary"`, "steps, bisect"}},
		{name: "live_sweep_bisect_no_tolerance", errs: []string{"live.sweep.tolerance:", "0 < tolerance < max_rate − start_rate"}},
		{name: "live_sweep_bad_range", errs: []string{"live.sweep.rates: must be between 1 and 100, got 0", "live.sweep.throughput_users: set it, or live.max_concurrency"}},
		{name: "live_bad_pacer", errs: []string{"live.pacer.clock:", `"hpet"`, "timerfd, runtime", "live.pacer.spin: must be between 0 and 10ms"}},
		{name: "live_continuous_without_usage", errs: []string{"live.continuous_usage:", "live.include_usage"}},
		{name: "live_bad_transport", errs: []string{"live.transport:", `"quic"`, "auto, raw, net_http"}},
		{name: "live_raw_over_tls", errs: []string{"live.transport: raw cannot serve this client", "not http://", "use auto or net_http"}},
		{name: "live_bad_arrival", errs: []string{"arrival.type:", `"bursty"`, "constant, poisson, gamma, concurrency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg, confmap.WithIgnoreUnused()))
			err = cfg.(*Config).Validate()
			if len(tt.errs) == 0 {
				require.NoError(t, err)
				assert.Equal(t, tt.expected, cfg)
				return
			}
			require.Error(t, err)
			for _, want := range tt.errs {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestLoadShardConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config_shard.yaml"))
	require.NoError(t, err)
	load := func(name string) *config.Config {
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		cfg := createDefaultConfig().(*config.Config)
		require.NoError(t, sub.Unmarshal(cfg))
		return cfg
	}
	t.Setenv(config.EnvJobCompletionIndex, "")

	cfg := load("sharded")
	require.NoError(t, cfg.Validate())
	assert.Equal(t, "vllm-8b-20261129-a", cfg.RunID)
	assert.Equal(t, "2026-11-29T21:00:00Z", cfg.StartAt)
	require.NotNil(t, cfg.Shard.Index)
	assert.Equal(t, config.ShardConfig{Index: new(2), Count: 4}, cfg.Shard)
	assert.Equal(t, 1, createDefaultConfig().(*config.Config).Shard.Count, "unsharded by default")

	cfg = load("sharded_from_job")
	assert.Nil(t, cfg.Shard.Index)
	err = cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "shard.index: not set and JOB_COMPLETION_INDEX is not in the environment")
	t.Setenv(config.EnvJobCompletionIndex, "3")
	require.NoError(t, cfg.Validate())
	p, err := loadgen.NewShardPlan(cfg, 1)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Index)
	assert.Equal(t, time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC), p.StartAt.UTC())

	err = load("sharded_bad").Validate()
	require.Error(t, err)
	for _, want := range []string{"shard.index: 4 is out of range", `start_at: "21:00" is not an RFC 3339 time`, "run_id: required when shard.count > 1"} {
		assert.Contains(t, err.Error(), want)
	}
}
