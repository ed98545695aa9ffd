package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

var processorCapabilities = consumer.Capabilities{MutatesData: true}

// NewFactory returns the factory of the llm_semconv processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Target:          TargetV141,
		RemoveOriginals: true,
		Overwrite:       false,
		Annotate:        true,
		Span:            SpanConfig{Rename: true, SetKind: true},
		Derive: DeriveConfig{
			Timing: true,
			FirstChunkEvents: []string{genai.EventLoadgenFirstChunk, genai.VercelAIEventFirstChunk, genai.OpenLLMetryEventCompletionChunk,
				"gen_ai.content.completion.chunk", genai.OpenInferenceEventFirstToken},
		},
		Content: ContentConfig{
			InputMessages:      GroupPolicy{Action: ActionKeep},
			OutputMessages:     GroupPolicy{Action: ActionKeep},
			SystemInstructions: GroupPolicy{Action: ActionKeep},
			ToolContent:        GroupPolicy{Action: ActionKeep},
			BuiltinPatterns:    builtinPatternNames(),
		},
	}
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newSemconvProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces, processorhelper.WithCapabilities(processorCapabilities))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newSemconvProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs, processorhelper.WithCapabilities(processorCapabilities))
}
