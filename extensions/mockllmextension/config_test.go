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

	"github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
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

	full := createDefaultConfig()
	full.Endpoint = "127.0.0.1:18001"
	full.Models = []string{"llama-3-8b", "llama-3-70b"}
	full.ContextWindow = 32768
	full.TTFT, full.PrefillPerToken, full.ITL, full.Jitter = 200*time.Millisecond, 100*time.Microsecond, 20*time.Millisecond, 0.1
	full.PrefixCacheBlockTokens, full.PrefixCacheBlocks = 16, 1024
	full.OutputTokens, full.OutputJitter, full.TokensPerChunk = 128, 0.25, 2
	full.EmbeddingDimensions, full.EmbeddingLatency = 64, 10*time.Millisecond
	full.MaxRunning, full.MaxQueue, full.BatchSlowdown = 16, 64, 0.5
	full.Faults = map[string]float64{"rate_limit": 0.01, "drop": 0.005}
	full.RetryAfter, full.StallDuration, full.SlowHeaders = 2*time.Second, 5*time.Second, time.Second
	full.Seed, full.HistorySize, full.RecordTokenTimes = 42, 500, true
	allInterfaces := createDefaultConfig()
	allInterfaces.Endpoint = "0.0.0.0:18000"

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewIDWithName(metadata.Type, ""), Want: createDefaultConfig()},
		{ID: component.NewIDWithName(metadata.Type, "full"), Want: full},
		{ID: component.NewIDWithName(metadata.Type, "all_interfaces"), Want: allInterfaces},
		{ID: component.NewIDWithName(metadata.Type, "bad_endpoint"), WantErr: []string{"endpoint:", "host:port", `"18000"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_port"), WantErr: []string{"endpoint:", "between 0 and 65535", `"http"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_fault"), WantErr: []string{`faults: unknown fault "bogus"`, "allowed values: rate_limit, overloaded"}},
		{ID: component.NewIDWithName(metadata.Type, "fault_sum"), WantErr: []string{"faults:", "sum must be <= 1"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_capacity"), WantErr: []string{"max_running:", "max_queue:", "batch_slowdown:"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_latency"), WantErr: []string{"ttft:", "-1s", "jitter:", "output_tokens:", "tokens_per_chunk:"}},
		{ID: component.NewIDWithName(metadata.Type, "no_models"), WantErr: []string{"models:", "at least one"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_history"), WantErr: []string{"history_size:", "-1"}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}
