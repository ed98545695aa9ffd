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

// IsInference reports whether op is a model-inference operation (the
// operations the latest conventions record under gen_ai.client.inference.*).
func IsInference(op string) bool {
	switch op {
	case OpChat, OpTextCompletion, OpGenerateContent:
		return true
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

// ModalityUsage lists the per-modality token attributes of
// semantic-conventions-genai main. Each is a subset of the total of its kind
// (gen_ai.usage.input_tokens, output_tokens, cache_read.input_tokens).
var ModalityUsage = []struct {
	Attr     string
	Kind     UsageKind
	Modality string
}{
	{"gen_ai.usage.text.input_tokens", UsageInput, ModalityText},
	{"gen_ai.usage.image.input_tokens", UsageInput, ModalityImage},
	{"gen_ai.usage.audio.input_tokens", UsageInput, ModalityAudio},
	{"gen_ai.usage.video.input_tokens", UsageInput, ModalityVideo},
	{"gen_ai.usage.text.output_tokens", UsageOutput, ModalityText},
	{"gen_ai.usage.image.output_tokens", UsageOutput, ModalityImage},
	{"gen_ai.usage.audio.output_tokens", UsageOutput, ModalityAudio},
	{"gen_ai.usage.video.output_tokens", UsageOutput, ModalityVideo},
	{"gen_ai.usage.text.cache_read.input_tokens", UsageCacheRead, ModalityText},
	{"gen_ai.usage.image.cache_read.input_tokens", UsageCacheRead, ModalityImage},
	{"gen_ai.usage.audio.cache_read.input_tokens", UsageCacheRead, ModalityAudio},
}

// UsageAttrPrefix starts every token-usage attribute name.
const UsageAttrPrefix = "gen_ai.usage."
