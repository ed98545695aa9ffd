package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Golden-signal metrics of the llm_metrics connector, in the project's llm.*
// namespace (the GenAI conventions define none). llm_metrics writes them;
// load_report reads llm.requests, llm.output_tokens, llm.goodput.requests and
// llm.requests.concurrency to build report rows for pipelines that send it
// metrics and no spans.
const (
	// MetricLLMRequests counts requests by AttrLLMOutcome (and error.type).
	MetricLLMRequests = "llm.requests"
	// MetricLLMOutputTokens counts the output tokens of successful inference
	// requests (IsInference with WithoutEmbeddings).
	MetricLLMOutputTokens = "llm.output_tokens"
	// MetricLLMGoodputRequests counts successful requests that met every
	// configured latency SLO.
	MetricLLMGoodputRequests = "llm.goodput.requests"
	// MetricLLMSLOViolations counts successful requests that missed an SLO,
	// by AttrLLMSLO.
	MetricLLMSLOViolations = "llm.slo.violations"
	// MetricLLMConcurrency is the mean number of requests in flight over a
	// flush interval (a gauge).
	MetricLLMConcurrency = "llm.requests.concurrency"
	// MetricLLMEvaluations counts evaluated responses by
	// gen_ai.evaluation.name and AttrLLMBelowThreshold.
	MetricLLMEvaluations = "llm.evaluations"
)

// Attributes llm_metrics puts on its golden-signal metrics.
const (
	// AttrLLMOutcome is the outcome of a request on llm.requests, one of
	// LLMOutcomeSuccess, LLMOutcomeEmpty, LLMOutcomeError; load_report reads
	// it to tell errors from successes.
	AttrLLMOutcome = "outcome"
	// AttrLLMSLO names the objective on llm.slo.violations (ttft, tpot, e2e).
	AttrLLMSLO = "slo"
	// AttrLLMBelowThreshold on llm.evaluations says whether the score was
	// below the configured threshold.
	AttrLLMBelowThreshold = "below_threshold"
)

// Values of AttrLLMOutcome.
const (
	LLMOutcomeSuccess = "success" // no error, and output tokens unknown or > 0
	LLMOutcomeEmpty   = "empty"   // no error, zero output tokens
	LLMOutcomeError   = "error"   // error status or error.type set
)
