package llmloadgenreceiver

import (
	"encoding/json"
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
	full.Mode, full.Seed, full.Requests, full.Duration = ModeLive, 5, 1000, 2*time.Minute
	full.Arrival = ArrivalConfig{Type: ArrivalGamma, Rate: 12, Burstiness: 0.5, Concurrency: 8, ThinkTime: time.Second,
		Stages: []StageConfig{{Duration: 30 * time.Second, Target: 40}}}
	l := &full.Live
	l.Client.Endpoint = "https://vllm.internal:8443/v1"
	l.Client.Headers = configopaque.MapList{}
	l.Client.Headers.Set("X-Tenant", "loadtest")
	l.Client.TLS.InsecureSkipVerify = true
	l.APIKey = "sk-test"
	l.Model, l.Provider, l.Operation = "meta-llama/Llama-3.1-8B-Instruct", "vllm", LiveOpText
	l.MaxTokens, l.IgnoreEOS = 256, true
	l.ExtraBody = map[string]any{"temperature": 0}
	l.Prompt = LivePromptConfig{System: "Be brief.", FewShot: []LiveMessage{{Role: "user", Content: "2+2?"}, {Role: "assistant", Content: "4"}},
		User: "Explain.", InputTokens: Distribution{Type: DistUniform, Min: 100, Max: 2000, Value: 256}, ContextWindow: 4096}
	l.MaxConcurrency, l.MaxQueue = 64, 500
	l.Timeouts = LiveTimeoutsConfig{Connect: 3 * time.Second, TTFT: 20 * time.Second, Idle: 5 * time.Second, Total: 2 * time.Minute}
	l.ChunkEvents, l.Tracestate, l.DrainTimeout = ChunkEventsAll, "vendor=loadtest", 30*time.Second

	sweep := createDefaultConfig().(*Config)
	sweep.Mode = ModeLive
	sweep.Arrival.Type, sweep.Arrival.Rate = ArrivalPoisson, 1
	sweep.Live.Sweep = LiveSweepConfig{StepDuration: 30 * time.Second, StartRate: 2, StepRate: 2, MaxRate: 40,
		TTFT: time.Second, TPOT: 50 * time.Millisecond, MinGoodRatio: 0.9, SaturationRatio: 0.9, Server: defaultSweepServer(), Search: SweepSteps}
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
		{name: "live_bad_pacer", errs: []string{"live.pacer.clock:", `"hpet"`, "timerfd, runtime", "live.pacer.spin: must be between 0 and 10ms"}},
		{name: "live_continuous_without_usage", errs: []string{"live.continuous_usage:", "live.include_usage"}},
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

// The body assembled from the template is byte for byte the body
// encoding/json renders, for chat and text completions, extra body fields,
// few-shot turns, text that needs escaping and run ids that do.
func TestLivePromptTemplateMatchesMarshal(t *testing.T) {
	variants := map[string]func(*LiveConfig){
		"default": func(*LiveConfig) {},
		"text":    func(c *LiveConfig) { c.Operation = LiveOpText },
		"extra": func(c *LiveConfig) {
			c.ExtraBody = map[string]any{"temperature": 0.5, "stop": []any{"</s>", "\n"}, "seed": 7}
			c.IgnoreEOS, c.IncludeUsage = true, false
		},
		"escapes": func(c *LiveConfig) {
			c.Prompt.System = "Say \"hi\" <b>&</b>\n\ttab é \u2028 \x01"
			c.Prompt.User = "Résumé: \"quoted\" \\ <tag> & \xff"
			c.Prompt.FewShot = []LiveMessage{{Role: "user", Content: "q?"}, {Role: "assistant", Content: "a!"}}
		},
		"text_escapes": func(c *LiveConfig) {
			c.Operation = LiveOpText
			c.Prompt.System = "line1\nline2 <x>"
			c.Prompt.User = "naïve \"user\""
		},
		"no_prefix":  func(c *LiveConfig) { c.Prompt.UniquePrefix = false },
		"no_system":  func(c *LiveConfig) { c.Prompt.System = ""; c.Stream = false },
		"sentinel":   func(c *LiveConfig) { c.ExtraBody = map[string]any{"x": promptSentinel} },
		"empty_user": func(c *LiveConfig) { c.Prompt.User = "" },
	}
	for name, mutate := range variants {
		for _, runID := range []string{"abc-12", `run "7" <&>`} {
			cfg := defaultLiveConfig()
			cfg.Prompt.ContextWindow, cfg.MaxTokens = 1000, 100
			mutate(&cfg)
			b := newPromptBuilder(&cfg, runID)
			if name != "sentinel" {
				require.NotNil(t, b.head, "%s: the body template was not built", name)
			} else {
				require.Nil(t, b.head, "the placeholder occurs twice: no template")
			}
			for _, want := range []int{0, 1, 10, 37, 300, 5000} {
				seq := int64(want*7 + 1)
				got, tokens, err := b.build(seq, want)
				require.NoError(t, err)
				// The reference: the same content marshalled whole.
				ref := *b
				ref.head = nil
				wantBody, wantTokens, err := ref.build(seq, want)
				require.NoError(t, err)
				assert.Equal(t, string(wantBody), string(got), "%s run %q want %d", name, runID, want)
				assert.Equal(t, wantTokens, tokens)
				assert.True(t, json.Valid(got))
			}
		}
	}
}
