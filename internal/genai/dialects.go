package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Span events of other instrumentation libraries ("dialects") that more than
// one component names: llm_loadgen writes them when it imitates the dialect,
// llm_semconv (derive.first_chunk_events) and load_report (ITL from chunk
// events) read them. The attribute vocabularies of the dialects are data in
// llm_semconv's mapping.yaml and llm_loadgen's dialect table, each checked by
// golden files; only the names a Go reader depends on are here.
const (
	// OpenLLMetryEventCompletionChunk: one streamed completion chunk (OpenLLMetry / Traceloop).
	OpenLLMetryEventCompletionChunk = "llm.content.completion.chunk"
	// LegacyLLMEventCompletionChunk: one streamed chunk in the legacy flat llm.* style.
	LegacyLLMEventCompletionChunk = "llm.completion.chunk"
	// VercelAIEventFirstChunk: the first streamed chunk (Vercel AI SDK).
	VercelAIEventFirstChunk = "ai.stream.firstChunk"
	// OpenInferenceEventFirstToken: the first streamed token (OpenInference).
	OpenInferenceEventFirstToken = "First Token Stream Event"
)
