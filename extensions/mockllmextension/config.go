package mockllmextension // import "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension"

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

const (
	defaultEndpoint    = "127.0.0.1:18000"
	defaultHistorySize = 10000
)

// Config is the mock_llm extension's configuration: where the mock listens,
// and the behaviour of internal/mockllm under the same snake_case names.
type Config struct {
	// Endpoint is the host:port to listen on. A host other than a loopback
	// address serves the mock to the network.
	Endpoint string `mapstructure:"endpoint"`
	// Models are the model ids served; the first is the default.
	Models []string `mapstructure:"models"`
	// ContextWindow is the models' context size in tokens.
	ContextWindow int `mapstructure:"context_window"`
	// TTFT, PrefillPerToken, ITL and Jitter are the latency model.
	TTFT            time.Duration `mapstructure:"ttft"`
	PrefillPerToken time.Duration `mapstructure:"prefill_per_token"`
	ITL             time.Duration `mapstructure:"itl"`
	Jitter          float64       `mapstructure:"jitter"`
	// PrefixCacheBlockTokens turns the prefix cache on (cached prompt
	// tokens take no prefill time); PrefixCacheBlocks is its capacity.
	PrefixCacheBlockTokens int `mapstructure:"prefix_cache_block_tokens"`
	PrefixCacheBlocks      int `mapstructure:"prefix_cache_blocks"`
	// OutputTokens and OutputJitter are the completion length.
	OutputTokens int     `mapstructure:"output_tokens"`
	OutputJitter float64 `mapstructure:"output_jitter"`
	// TokensPerChunk is the number of tokens in one content chunk.
	TokensPerChunk int `mapstructure:"tokens_per_chunk"`
	// ReasoningTokens and ReasoningField make the model a reasoning one.
	ReasoningTokens int    `mapstructure:"reasoning_tokens"`
	ReasoningField  string `mapstructure:"reasoning_field"`
	// EmbeddingDimensions and EmbeddingLatency shape embeddings responses.
	EmbeddingDimensions int           `mapstructure:"embedding_dimensions"`
	EmbeddingLatency    time.Duration `mapstructure:"embedding_latency"`
	// MaxRunning, MaxQueue, BatchSlowdown and KVCacheTokens are the
	// capacity model.
	MaxRunning    int     `mapstructure:"max_running"`
	MaxQueue      int     `mapstructure:"max_queue"`
	BatchSlowdown float64 `mapstructure:"batch_slowdown"`
	KVCacheTokens int     `mapstructure:"kv_cache_tokens"`
	// Faults is the probability of each fault kind per request.
	Faults map[string]float64 `mapstructure:"faults"`
	// RetryAfter, StallDuration and SlowHeaders parameterize the faults.
	RetryAfter    time.Duration `mapstructure:"retry_after"`
	StallDuration time.Duration `mapstructure:"stall_duration"`
	SlowHeaders   time.Duration `mapstructure:"slow_headers"`
	// Seed makes the latency model reproducible; 0 picks one.
	Seed uint64 `mapstructure:"seed"`
	// HistorySize bounds the ground-truth records kept.
	HistorySize int `mapstructure:"history_size"`
	// RecordTokenTimes keeps every chunk's write time in the ground truth.
	RecordTokenTimes bool `mapstructure:"record_token_times"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate names the bad field and the allowed values.
func (c *Config) Validate() error {
	var errs []error
	if err := validateEndpoint(c.Endpoint); err != nil {
		errs = append(errs, err)
	}
	// mockllm names its fields as this configuration does.
	mc := c.mockllm()
	if err := mc.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func validateEndpoint(endpoint string) error {
	_, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return fmt.Errorf("endpoint: must be host:port (e.g. %s), got %q: %w", defaultEndpoint, endpoint, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("endpoint: the port must be a number between 0 and 65535, got %q", port)
	}
	return nil
}

// mockllm is the server configuration.
func (c *Config) mockllm() mockllm.Config {
	return mockllm.Config{
		Models: c.Models, ContextWindow: c.ContextWindow,
		TTFT: c.TTFT, PrefillPerToken: c.PrefillPerToken, ITL: c.ITL, Jitter: c.Jitter,
		PrefixCacheBlockTokens: c.PrefixCacheBlockTokens, PrefixCacheBlocks: c.PrefixCacheBlocks,
		OutputTokens: c.OutputTokens, OutputJitter: c.OutputJitter, TokensPerChunk: c.TokensPerChunk,
		ReasoningTokens: c.ReasoningTokens, ReasoningField: c.ReasoningField,
		EmbeddingDimensions: c.EmbeddingDimensions, EmbeddingLatency: c.EmbeddingLatency,
		MaxRunning: c.MaxRunning, MaxQueue: c.MaxQueue, BatchSlowdown: c.BatchSlowdown, KVCacheTokens: c.KVCacheTokens,
		FaultRates: c.Faults, RetryAfter: c.RetryAfter, StallDuration: c.StallDuration, SlowHeaders: c.SlowHeaders,
		Seed: c.Seed, HistorySize: c.HistorySize, RecordTokenTimes: c.RecordTokenTimes,
	}
}
