package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

import "fmt"

// Target selects which revision of the GenAI conventions metric names follow.
type Target string

const (
	// TargetV1_41 is semantic conventions v1.41.0, the last tagged core
	// release that carried GenAI (frozen).
	TargetV1_41 Target = "v1.41"
	// TargetLatest is the main branch of semantic-conventions-genai, where
	// inference metrics moved to gen_ai.client.inference.* and token usage was
	// split into per-direction histograms and counters.
	TargetLatest Target = "latest"
)

// Targets lists the accepted Target values, in the order documentation shows them.
var Targets = []Target{TargetV1_41, TargetLatest}

// ParseTarget returns the Target named s, or an error listing the accepted values.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown semantic-conventions target %q; allowed values: %q, %q", s, TargetV1_41, TargetLatest)
}

// Instrument is the kind of instrument a convention metric is.
type Instrument uint8

const (
	Histogram Instrument = iota
	Counter
	Gauge
)

// Units used by the GenAI metrics.
const (
	UnitSeconds = "s"
	UnitToken   = "{token}"
)

// Bucket boundaries advised by the conventions (ExplicitBucketBoundaries).
var (
	// DurationBuckets: operation/request durations, time to first chunk and
	// time per output chunk (seconds).
	DurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	// TokenBuckets: token counts per operation.
	TokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	// ServerTimeToFirstTokenBuckets: gen_ai.server.time_to_first_token (seconds).
	ServerTimeToFirstTokenBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	// ServerTimePerOutputTokenBuckets: gen_ai.server.time_per_output_token (seconds).
	ServerTimePerOutputTokenBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
)

// MetricDef describes one convention metric. A zero Name means the target
// does not define the metric.
type MetricDef struct {
	Name        string
	Unit        string
	Description string
	Instrument  Instrument
	Buckets     []float64 // advised explicit boundaries; nil for counters
}

// ClientMetrics is the set of client metrics for one operation under one
// target. Fields a target does not define are zero.
type ClientMetrics struct {
	Duration           MetricDef
	TimeToFirstChunk   MetricDef
	TimePerOutputChunk MetricDef
	// TokenUsage is the v1.41 histogram carrying gen_ai.token.type.
	TokenUsage MetricDef
	// Per-direction token histograms (latest).
	InputTokens  MetricDef
	OutputTokens MetricDef
	// Token counters (latest), dimensioned by gen_ai.token.modality.
	InputTokensTotal          MetricDef
	OutputTokensTotal         MetricDef
	CacheReadInputTokensTotal MetricDef
	CacheWriteInputTokens     MetricDef
	ReasoningOutputTokens     MetricDef
}

// ServerMetrics is the set of server metrics (same under both targets).
type ServerMetrics struct {
	RequestDuration    MetricDef
	TimeToFirstToken   MetricDef
	TimePerOutputToken MetricDef
}

func hist(name, unit, desc string, buckets []float64) MetricDef {
	return MetricDef{Name: name, Unit: unit, Description: desc, Instrument: Histogram, Buckets: buckets}
}

func counter(name, unit, desc string) MetricDef {
	return MetricDef{Name: name, Unit: unit, Description: desc, Instrument: Counter}
}

// v1.41 client metrics, identical for every operation.
var clientV1_41 = ClientMetrics{
	Duration:           hist("gen_ai.client.operation.duration", UnitSeconds, "GenAI operation duration.", DurationBuckets),
	TimeToFirstChunk:   hist("gen_ai.client.operation.time_to_first_chunk", UnitSeconds, "Time from the request to the first response chunk of a streaming operation.", DurationBuckets),
	TimePerOutputChunk: hist("gen_ai.client.operation.time_per_output_chunk", UnitSeconds, "Time per output chunk after the first one, of a streaming operation.", DurationBuckets),
	TokenUsage:         hist("gen_ai.client.token.usage", UnitToken, "Number of input and output tokens used.", TokenBuckets),
}

// Latest (semantic-conventions-genai main) client metrics for inference operations.
var clientLatestInference = ClientMetrics{
	Duration:                  hist("gen_ai.client.inference.duration", UnitSeconds, "GenAI inference duration.", DurationBuckets),
	TimeToFirstChunk:          hist("gen_ai.client.inference.time_to_first_chunk", UnitSeconds, "Time from the request to the first response chunk of a streaming inference.", DurationBuckets),
	TimePerOutputChunk:        hist("gen_ai.client.inference.time_per_output_chunk", UnitSeconds, "Time per output chunk after the first one, of a streaming inference.", DurationBuckets),
	InputTokens:               hist("gen_ai.client.inference.operation.input_tokens", UnitToken, "Input tokens per inference.", TokenBuckets),
	OutputTokens:              hist("gen_ai.client.inference.operation.output_tokens", UnitToken, "Output tokens per inference.", TokenBuckets),
	InputTokensTotal:          counter("gen_ai.client.inference.usage.input_tokens", UnitToken, "Input tokens used by inferences."),
	OutputTokensTotal:         counter("gen_ai.client.inference.usage.output_tokens", UnitToken, "Output tokens produced by inferences."),
	CacheReadInputTokensTotal: counter("gen_ai.client.inference.usage.cache_read.input_tokens", UnitToken, "Input tokens served from the provider's cache."),
	CacheWriteInputTokens:     counter("gen_ai.client.inference.usage.cache_write.input_tokens", UnitToken, "Input tokens written to the provider's cache."),
	ReasoningOutputTokens:     counter("gen_ai.client.inference.usage.reasoning.output_tokens", UnitToken, "Output tokens spent on reasoning."),
}

// Latest duration metric of non-inference operations, by operation. Operations
// not listed keep gen_ai.client.operation.duration.
var latestDurationByOperation = map[string]string{
	OpEmbeddings:     "gen_ai.client.embeddings.duration",
	OpInvokeAgent:    "gen_ai.invoke_agent.duration",
	OpExecuteTool:    "gen_ai.execute_tool.duration",
	OpInvokeWorkflow: "gen_ai.workflow.duration",
}

var latestEmbeddingsInputTokens = hist("gen_ai.client.embeddings.operation.input_tokens", UnitToken, "Input tokens per embeddings operation.", TokenBuckets)

var serverMetrics = ServerMetrics{
	RequestDuration:    hist("gen_ai.server.request.duration", UnitSeconds, "Generative AI server request duration, such as time-to-last byte or last output token.", DurationBuckets),
	TimeToFirstToken:   hist("gen_ai.server.time_to_first_token", UnitSeconds, "Time to generate the first token for successful responses.", ServerTimeToFirstTokenBuckets),
	TimePerOutputToken: hist("gen_ai.server.time_per_output_token", UnitSeconds, "Time per output token generated after the first token for successful responses.", ServerTimePerOutputTokenBuckets),
}

// ClientMetricsFor returns the client metrics for operation op under target t.
func ClientMetricsFor(t Target, op string) ClientMetrics {
	if t != TargetLatest {
		return clientV1_41
	}
	if IsInference(op, WithoutEmbeddings) {
		return clientLatestInference
	}
	m := ClientMetrics{Duration: hist("gen_ai.client.operation.duration", UnitSeconds, "GenAI operation duration.", DurationBuckets)}
	if name, ok := latestDurationByOperation[op]; ok {
		m.Duration.Name = name
	}
	if op == OpEmbeddings {
		m.InputTokens = latestEmbeddingsInputTokens
	}
	return m
}

// ServerMetricsFor returns the server metrics under target t.
func ServerMetricsFor(Target) ServerMetrics { return serverMetrics }
