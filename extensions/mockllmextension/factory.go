package mockllmextension // import "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// NewFactory returns the factory of the mock_llm extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		createExtension,
		metadata.ExtensionStability,
	)
}

// createDefaultConfig is mockllm's default behaviour on a fixed loopback
// port, with a ground-truth history small enough for a long demo.
func createDefaultConfig() *Config {
	d := mockllm.DefaultConfig()
	return &Config{
		Endpoint:            defaultEndpoint,
		Models:              []string{"mock-llm"},
		ContextWindow:       d.ContextWindow,
		TTFT:                d.TTFT,
		PrefillPerToken:     d.PrefillPerToken,
		PrefixCacheBlocks:   d.PrefixCacheBlocks,
		ITL:                 d.ITL,
		Jitter:              d.Jitter,
		OutputTokens:        d.OutputTokens,
		OutputJitter:        d.OutputJitter,
		TokensPerChunk:      d.TokensPerChunk,
		ReasoningField:      d.ReasoningField,
		EmbeddingDimensions: d.EmbeddingDimensions,
		EmbeddingLatency:    d.EmbeddingLatency,
		MaxRunning:          d.MaxRunning,
		MaxQueue:            d.MaxQueue,
		BatchSlowdown:       d.BatchSlowdown,
		RetryAfter:          d.RetryAfter,
		StallDuration:       d.StallDuration,
		SlowHeaders:         d.SlowHeaders,
		Seed:                d.Seed,
		HistorySize:         defaultHistorySize,
		RecordTokenTimes:    false,
	}
}

func createExtension(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newMockLLM(cfg.(*Config), set.TelemetrySettings)
}
