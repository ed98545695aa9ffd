package mockllmextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

func TestCreateDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	c := cfg.(*Config)
	assert.Equal(t, "127.0.0.1:18000", c.Endpoint)
	assert.Equal(t, []string{"mock-llm"}, c.Models)
	assert.Equal(t, 10000, c.HistorySize)
	assert.False(t, c.RecordTokenTimes)
	// Everything else is mockllm's default.
	want := mockllm.DefaultConfig()
	want.HistorySize, want.RecordTokenTimes = 10000, false
	assert.Equal(t, want, c.mockllm())
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	full := createDefaultConfig()
	full.Endpoint = "127.0.0.1:18001"
	full.Models = []string{"llama-3-8b", "llama-3-70b"}
	full.ContextWindow = 32768
	full.TTFT, full.PrefillPerToken, full.ITL, full.Jitter = 200*time.Millisecond, 100*time.Microsecond, 20*time.Millisecond, 0.1
	full.OutputTokens, full.OutputJitter, full.TokensPerChunk = 128, 0.25, 2
	full.EmbeddingDimensions, full.EmbeddingLatency = 64, 10*time.Millisecond
	full.MaxRunning, full.MaxQueue, full.BatchSlowdown = 16, 64, 0.5
	full.Faults = map[string]float64{"rate_limit": 0.01, "drop": 0.005}
	full.RetryAfter, full.StallDuration, full.SlowHeaders = 2*time.Second, 5*time.Second, time.Second
	full.Seed, full.HistorySize, full.RecordTokenTimes = 42, 500, true
	allInterfaces := createDefaultConfig()
	allInterfaces.Endpoint = "0.0.0.0:18000"

	tests := []struct {
		name     string
		expected *Config
		errs     []string // each must appear in the validation error
	}{
		{name: "", expected: createDefaultConfig()},
		{name: "full", expected: full},
		{name: "all_interfaces", expected: allInterfaces},
		{name: "bad_endpoint", errs: []string{"endpoint:", "host:port", `"18000"`}},
		{name: "bad_port", errs: []string{"endpoint:", "between 0 and 65535", `"http"`}},
		{name: "bad_fault", errs: []string{`faults: unknown fault "bogus"`, "allowed values: rate_limit, overloaded"}},
		{name: "fault_sum", errs: []string{"faults:", "sum must be <= 1"}},
		{name: "bad_capacity", errs: []string{"max_running:", "max_queue:", "batch_slowdown:"}},
		{name: "bad_latency", errs: []string{"ttft:", "-1s", "jitter:", "output_tokens:", "tokens_per_chunk:"}},
		{name: "no_models", errs: []string{"models:", "at least one"}},
		{name: "bad_history", errs: []string{"history_size:", "-1"}},
	}
	for _, tt := range tests {
		id := component.NewIDWithName(metadata.Type, tt.name)
		t.Run(id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
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
