package llmloadgenreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

func TestLoadLiveConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config_live.yaml"))
	require.NoError(t, err)

	full := createDefaultConfig().(*Config)
	full.Mode, full.Seed, full.Requests, full.Duration = modeLive, 5, 1000, 2*time.Minute
	full.Arrival = ArrivalConfig{Type: arrivalGamma, Rate: 12, Burstiness: 0.5, Concurrency: 8, ThinkTime: time.Second,
		Stages: []StageConfig{{Duration: 30 * time.Second, Target: 40}}}
	l := &full.Live
	l.Client.Endpoint = "https://vllm.internal:8443/v1"
	l.Client.Headers = configopaque.MapList{}
	l.Client.Headers.Set("X-Tenant", "loadtest")
	l.Client.TLS.InsecureSkipVerify = true
	l.APIKey = "sk-test"
	l.Model, l.Provider, l.Operation = "meta-llama/Llama-3.1-8B-Instruct", "vllm", liveOpText
	l.MaxTokens, l.IgnoreEOS = 256, true
	l.ExtraBody = map[string]any{"temperature": 0}
	l.Prompt = LivePromptConfig{System: "Be brief.", FewShot: []LiveMessage{{Role: "user", Content: "2+2?"}, {Role: "assistant", Content: "4"}},
		User: "Explain.", InputTokens: Distribution{Type: distUniform, Min: 100, Max: 2000, Value: 256}, ContextWindow: 4096}
	l.MaxConcurrency, l.MaxQueue = 64, 500
	l.Timeouts = LiveTimeoutsConfig{Connect: 3 * time.Second, TTFT: 20 * time.Second, Idle: 5 * time.Second, Total: 2 * time.Minute}
	l.ChunkEvents, l.Tracestate, l.DrainTimeout = chunkEventsAll, "vendor=loadtest", 30*time.Second

	sweep := createDefaultConfig().(*Config)
	sweep.Mode = modeLive
	sweep.Arrival.Type, sweep.Arrival.Rate = arrivalPoisson, 1
	sweep.Live.Sweep = LiveSweepConfig{StepDuration: 30 * time.Second, StartRate: 2, StepRate: 2, MaxRate: 40,
		TTFT: time.Second, TPOT: 50 * time.Millisecond, MinGoodRatio: 0.9, SaturationRatio: 0.9}

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

func TestLivePromptSizing(t *testing.T) {
	cfg := defaultLiveConfig()
	cfg.Prompt.ContextWindow, cfg.MaxTokens = 1000, 200
	b := newPromptBuilder(&cfg, "run1")
	body, tokens, err := b.build(42, 300)
	require.NoError(t, err)
	assert.InDelta(t, 300, tokens, 5)
	assert.Contains(t, string(body), "[run run1 request 42]")
	assert.Contains(t, string(body), `"stream_options":{"include_usage":true}`)
	assert.Contains(t, string(body), `"max_tokens":200`)

	// A prompt never exceeds the context window less max_tokens.
	_, tokens, err = b.build(43, 5000)
	require.NoError(t, err)
	assert.LessOrEqual(t, tokens, 800+5)

	// Two requests never share a prefix when unique_prefix is on.
	b1, _, _ := b.build(1, 50)
	b2, _, _ := b.build(2, 50)
	assert.NotEqual(t, b1, b2)
}
