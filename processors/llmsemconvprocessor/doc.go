// Package llmsemconvprocessor implements the llm_semconv processor: it turns
// spans and log records written in the many LLM instrumentation dialects
// (OpenInference, OpenLLMetry/Traceloop, Vercel AI SDK, Langfuse, LangSmith,
// OpenLIT, vLLM tracing, OTel GenAI up to v1.36 and the legacy llm.* style)
// into the OpenTelemetry GenAI semantic conventions, either the frozen v1.41
// release or the latest semantic-conventions-genai names.
//
// The attribute mapping is data: an embedded, versioned YAML table
// (mapping.yaml). The engine detects the dialect of each span, renames and
// converts attributes, rebuilds indexed messages into the GenAI JSON message
// schema, derives timing and cost attributes, applies a content policy, and
// lists every foreign attribute it could not map under otelcol_llm.semconv.*.
package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"
