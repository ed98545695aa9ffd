package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Span and metric attribute names (semantic conventions v1.41 and
// semantic-conventions-genai main).
const (
	AttrOperationName    = "gen_ai.operation.name"
	AttrProviderName     = "gen_ai.provider.name"
	AttrRequestModel     = "gen_ai.request.model"
	AttrResponseModel    = "gen_ai.response.model"
	AttrRequestStream    = "gen_ai.request.stream"
	AttrServerAddress    = "server.address"
	AttrServerPort       = "server.port"
	AttrErrorType        = "error.type"
	AttrTokenType        = "gen_ai.token.type"
	AttrTokenModality    = "gen_ai.token.modality"
	AttrFinishReasons    = "gen_ai.response.finish_reasons"
	AttrConversationID   = "gen_ai.conversation.id"
	AttrTimeToFirstChunk = "gen_ai.response.time_to_first_chunk" // double, seconds
	AttrResponseID       = "gen_ai.response.id"
	AttrInputMessages    = "gen_ai.input.messages"
	AttrOutputMessages   = "gen_ai.output.messages"

	AttrUsageInputTokens           = "gen_ai.usage.input_tokens"
	AttrUsageOutputTokens          = "gen_ai.usage.output_tokens"
	AttrUsageCacheReadInputTokens  = "gen_ai.usage.cache_read.input_tokens"
	AttrUsageCacheWriteInputTokens = "gen_ai.usage.cache_write.input_tokens"
	AttrUsageReasoningOutputTokens = "gen_ai.usage.reasoning.output_tokens"

	// Evaluation results (event gen_ai.evaluation.result, or the same
	// attributes set on the evaluated span).
	EventEvaluationResult = "gen_ai.evaluation.result"
	AttrEvaluationName    = "gen_ai.evaluation.name"
	AttrEvaluationScore   = "gen_ai.evaluation.score.value"
	AttrEvaluationLabel   = "gen_ai.evaluation.score.label"
	AttrMetricOverflow    = "otel.metric.overflow"
)

// Attributes of other (non-GenAI) semantic conventions that one component
// writes and another reads.
const (
	// AttrHTTPResponseStatusCode: written by llm_loadgen on its HTTP spans,
	// read by load_report's requests.csv (http_status).
	AttrHTTPResponseStatusCode = "http.response.status_code"
)

// Deprecated or foreign attribute names that still occur on spans and carry
// the same fact as a current name. Readers may fall back to them when the
// current name is absent.
const (
	LegacyAttrSystem                = "gen_ai.system"                            // → gen_ai.provider.name (v1.37)
	LegacyAttrUsagePromptTokens     = "gen_ai.usage.prompt_tokens"               // → gen_ai.usage.input_tokens (v1.28)
	LegacyAttrUsageCompletionTokens = "gen_ai.usage.completion_tokens"           // → gen_ai.usage.output_tokens (v1.28)
	LegacyAttrUsageCacheCreation    = "gen_ai.usage.cache_creation.input_tokens" // → cache_write (SCG #440)
	VLLMAttrTimeToFirstToken        = "gen_ai.latency.time_to_first_token"       // vLLM server spans, seconds
)

// Values of gen_ai.token.type.
const (
	TokenTypeInput  = "input"
	TokenTypeOutput = "output"
)

// ErrorTypeOther is the error.type value the conventions prescribe when an
// operation failed without a more specific error identifier.
const ErrorTypeOther = "_OTHER"

// Operation names (gen_ai.operation.name well-known values).
const (
	OpChat            = "chat"
	OpTextCompletion  = "text_completion"
	OpGenerateContent = "generate_content"
	OpEmbeddings      = "embeddings"
	OpRetrieval       = "retrieval"
	OpExecuteTool     = "execute_tool"
	OpCreateAgent     = "create_agent"
	OpInvokeAgent     = "invoke_agent"
	OpInvokeWorkflow  = "invoke_workflow"
)

// Embeddings says whether IsInference counts the embeddings operation.
type Embeddings bool

const (
	// WithEmbeddings: every request a model endpoint serves is an
	// inference, embeddings included. load_report uses it (a request row, a
	// GenAI metric point it reads) and llm_semconv (the span name and kind
	// fix, the cost).
	WithEmbeddings Embeddings = true
	// WithoutEmbeddings: only calls that generate output tokens. llm_metrics
	// uses it (the gen_ai.client.inference.* family of the latest target,
	// llm.output_tokens), and llm_semconv for its timing derivation (TPOT,
	// output tokens per second): an embeddings call has no output tokens and
	// no first chunk.
	WithoutEmbeddings Embeddings = false
)

// IsInference reports whether op (a gen_ai.operation.name value) is a model
// call: chat, text_completion and generate_content always; embeddings when e
// is WithEmbeddings. Tool, agent, workflow and retrieval operations never are
// (they are not requests to a model endpoint, and agent or workflow spans
// often roll up their children's usage).
//
// This is the one "is this an inference span" predicate of the project.
// Embeddings is a parameter because the components document different
// outward behaviour: the conventions' latest inference metrics leave
// embeddings out (gen_ai.client.embeddings.* is its own family), and so does
// llm_metrics' llm.output_tokens; load_report counts an embeddings call as a
// request (its README lists chat, text_completion, generate_content and
// embeddings as model calls), and llm_semconv fixes and prices embeddings
// spans like other inference spans.
func IsInference(op string, e Embeddings) bool {
	switch op {
	case OpChat, OpTextCompletion, OpGenerateContent:
		return true
	case OpEmbeddings:
		return bool(e)
	}
	return false
}

// ProviderFromLegacySystem maps deprecated gen_ai.system values to their
// gen_ai.provider.name spelling; other values are returned unchanged.
var ProviderFromLegacySystem = map[string]string{
	"vertex_ai":       "gcp.vertex_ai",
	"gemini":          "gcp.gemini",
	"az.ai.inference": "azure.ai.inference",
	"az.ai.openai":    "azure.ai.openai",
	"xai":             "x_ai",
}

// Values of gen_ai.token.modality (semantic-conventions-genai main).
const (
	ModalityText    = "text"
	ModalityImage   = "image"
	ModalityAudio   = "audio"
	ModalityVideo   = "video"
	ModalityUnknown = "unknown"
)

// UsageKind is what a token count measures.
type UsageKind uint8

const (
	UsageInput UsageKind = iota
	UsageOutput
	UsageCacheRead
)

// Per-modality token attributes of semantic-conventions-genai main.
const (
	AttrUsageTextInputTokens           = "gen_ai.usage.text.input_tokens"
	AttrUsageImageInputTokens          = "gen_ai.usage.image.input_tokens"
	AttrUsageAudioInputTokens          = "gen_ai.usage.audio.input_tokens"
	AttrUsageVideoInputTokens          = "gen_ai.usage.video.input_tokens"
	AttrUsageTextOutputTokens          = "gen_ai.usage.text.output_tokens"
	AttrUsageImageOutputTokens         = "gen_ai.usage.image.output_tokens"
	AttrUsageAudioOutputTokens         = "gen_ai.usage.audio.output_tokens"
	AttrUsageVideoOutputTokens         = "gen_ai.usage.video.output_tokens"
	AttrUsageTextCacheReadInputTokens  = "gen_ai.usage.text.cache_read.input_tokens"
	AttrUsageImageCacheReadInputTokens = "gen_ai.usage.image.cache_read.input_tokens"
	AttrUsageAudioCacheReadInputTokens = "gen_ai.usage.audio.cache_read.input_tokens"
)

// NumModalityUsage is len(ModalityUsage).
const NumModalityUsage = 11

// ModalityUsage lists the per-modality token attributes of
// semantic-conventions-genai main. Each is a subset of the total of its kind
// (gen_ai.usage.input_tokens, output_tokens, cache_read.input_tokens).
// SpanFacts.Modality is indexed like it.
var ModalityUsage = [NumModalityUsage]struct {
	Attr     string
	Kind     UsageKind
	Modality string
}{
	{AttrUsageTextInputTokens, UsageInput, ModalityText},
	{AttrUsageImageInputTokens, UsageInput, ModalityImage},
	{AttrUsageAudioInputTokens, UsageInput, ModalityAudio},
	{AttrUsageVideoInputTokens, UsageInput, ModalityVideo},
	{AttrUsageTextOutputTokens, UsageOutput, ModalityText},
	{AttrUsageImageOutputTokens, UsageOutput, ModalityImage},
	{AttrUsageAudioOutputTokens, UsageOutput, ModalityAudio},
	{AttrUsageVideoOutputTokens, UsageOutput, ModalityVideo},
	{AttrUsageTextCacheReadInputTokens, UsageCacheRead, ModalityText},
	{AttrUsageImageCacheReadInputTokens, UsageCacheRead, ModalityImage},
	{AttrUsageAudioCacheReadInputTokens, UsageCacheRead, ModalityAudio},
}

// UsageAttrPrefix starts every token-usage attribute name.
const UsageAttrPrefix = "gen_ai.usage."
