// Package llmmetricsconnector implements the llm_metrics connector: it turns
// GenAI spans into the OpenTelemetry GenAI client and server metrics (with the
// bucket boundaries the semantic conventions advise) and into golden signals
// for an LLM service — requests by outcome, output tokens of successful
// responses, goodput against latency SLOs, a concurrency estimate and the
// share of responses under an evaluation score threshold.
package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"
