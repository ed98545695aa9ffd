package synthetic

import (
	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// op is a logical operation of the simulated traffic; each dialect names and
// describes it in its own way.
type op uint8

const (
	opChat op = iota
	opEmbeddings
	opRetrieval
	opRerank
	opTool
	opAgent
	numOps
)

// field is a logical fact recorded on a span; a dialect maps it to an
// attribute key, or to "" when its instrumentation does not record it.
type field uint8

const (
	fOperation field = iota
	fProvider
	fRequestModel
	fResponseModel
	fInputTokens
	fOutputTokens
	fTotalTokens
	fFinishReasons
	fStream
	fTTFT
	fMaxTokens
	fTemperature
	fResponseID
	fToolName
	fToolCallID
	fAgentName
	fAgentID
	fEmbeddingDims
	fConversationID
	fInputContent
	fOutputContent
	fChoiceCount
	fEmbeddingInputType
	numFields
)

// dialect is the emission table of one instrumentation convention: which
// span names, attribute keys and value spellings it uses. It is data: adding
// a dialect means adding a table, not code.
type dialect struct {
	name string
	// metrics selects the GenAI metric names emitted with this dialect.
	metrics genai.Target
	// spanName per op; placeholders {op} {model} {provider} {tool} {agent}
	// {collection} are replaced with the request's values.
	spanName [numOps]string
	// opValue is the value written to attrs[fOperation], per op.
	opValue [numOps]string
	// kindKey/kindValue: an extra span-kind attribute some libraries use
	// (openinference.span.kind, traceloop.span.kind, llm.request.type).
	kindKey   string
	kindValue [numOps]string
	// modelKey overrides attrs[fRequestModel] per op ("" keeps it).
	modelKey [numOps]string
	attrs    [numFields]string
	// ttftScale converts seconds to the unit of attrs[fTTFT].
	ttftScale float64
	// finishAsString writes the finish reason as a string instead of a
	// string list.
	finishAsString bool
	// providerSuffix is appended to the provider value (Vercel's "openai.chat").
	providerSuffix string
	// invocationParams, when set, is the key of a JSON object with the
	// request parameters (OpenInference).
	invocationParams string
	// chunkEvent names the span event recorded for streamed chunks;
	// chunkSpan names the per-chunk child spans of span_per_chunk.
	chunkEvent string
	chunkSpan  string
}

var genAIv141 = dialect{
	name:     config.SemconvGenAIv141,
	metrics:  genai.TargetV1_41,
	spanName: [numOps]string{"{op} {model}", "{op} {model}", "{op} {collection}", "{op} {model}", "{op} {tool}", "{op} {agent}"},
	opValue:  [numOps]string{genai.OpChat, genai.OpEmbeddings, genai.OpRetrieval, "rerank", genai.OpExecuteTool, genai.OpInvokeAgent},
	attrs: [numFields]string{
		fOperation:      genai.AttrOperationName,
		fProvider:       genai.AttrProviderName,
		fRequestModel:   genai.AttrRequestModel,
		fResponseModel:  genai.AttrResponseModel,
		fInputTokens:    genai.AttrUsageInputTokens,
		fOutputTokens:   genai.AttrUsageOutputTokens,
		fFinishReasons:  genai.AttrFinishReasons,
		fStream:         genai.AttrRequestStream,
		fTTFT:           genai.AttrTimeToFirstChunk,
		fMaxTokens:      "gen_ai.request.max_tokens",
		fTemperature:    "gen_ai.request.temperature",
		fResponseID:     genai.AttrResponseID,
		fToolName:       "gen_ai.tool.name",
		fToolCallID:     "gen_ai.tool.call.id",
		fAgentName:      "gen_ai.agent.name",
		fAgentID:        "gen_ai.agent.id",
		fEmbeddingDims:  "gen_ai.embeddings.dimension.count",
		fConversationID: genai.AttrConversationID,
		fInputContent:   genai.AttrInputMessages,
		fOutputContent:  genai.AttrOutputMessages,
	},
	ttftScale:  1,
	chunkEvent: genai.EventLoadgenResponseChunk,
	chunkSpan:  "gen_ai.response.chunk",
}

var dialectList = []dialect{
	genAIv141,
	func() dialect {
		d := genAIv141
		d.name = config.SemconvGenAILatest
		d.metrics = genai.TargetLatest
		return d
	}(),
	func() dialect {
		// v1.36: gen_ai.system instead of gen_ai.provider.name (renamed in
		// v1.37), no time-to-first-chunk attribute, content as events.
		d := genAIv141
		d.name = config.SemconvGenAIv136
		d.attrs[fProvider] = genai.LegacyAttrSystem
		d.attrs[fTTFT] = ""
		d.attrs[fInputContent] = ""
		d.attrs[fOutputContent] = ""
		return d
	}(),
	{
		name:      config.SemconvOpenInference,
		metrics:   genai.TargetV1_41,
		spanName:  [numOps]string{"ChatCompletion", "CreateEmbeddings", "retrieve", "rerank", "{tool}", "{agent}"},
		kindKey:   "openinference.span.kind",
		kindValue: [numOps]string{"LLM", "EMBEDDING", "RETRIEVER", "RERANKER", "TOOL", "AGENT"},
		modelKey:  [numOps]string{opEmbeddings: "embedding.model_name", opRerank: "reranker.model_name"},
		attrs: [numFields]string{
			fProvider:       "llm.provider",
			fRequestModel:   "llm.model_name",
			fInputTokens:    "llm.token_count.prompt",
			fOutputTokens:   "llm.token_count.completion",
			fTotalTokens:    "llm.token_count.total",
			fFinishReasons:  "llm.finish_reason",
			fToolName:       "tool.name",
			fToolCallID:     "tool_call.id",
			fAgentName:      "agent.name",
			fConversationID: "session.id",
			fInputContent:   "input.value",
			fOutputContent:  "output.value",
		},
		finishAsString:   true,
		invocationParams: "llm.invocation_parameters",
		chunkEvent:       genai.OpenInferenceEventFirstToken,
		chunkSpan:        "ChatCompletionChunk",
	},
	{
		name:      config.SemconvOpenLLMetry,
		metrics:   genai.TargetV1_41,
		spanName:  [numOps]string{"{provider}.chat", "{provider}.embeddings", "{collection}.query", "{provider}.rerank", "{tool}.tool", "{agent}.agent"},
		kindKey:   "llm.request.type",
		kindValue: [numOps]string{"chat", "embedding", "", "rerank", "", ""},
		attrs: [numFields]string{
			fProvider:      genai.LegacyAttrSystem,
			fRequestModel:  genai.AttrRequestModel,
			fResponseModel: genai.AttrResponseModel,
			fInputTokens:   genai.LegacyAttrUsagePromptTokens,
			fOutputTokens:  genai.LegacyAttrUsageCompletionTokens,
			fTotalTokens:   "llm.usage.total_tokens",
			fFinishReasons: "llm.response.finish_reason",
			fStream:        "llm.is_streaming",
			fMaxTokens:     "gen_ai.request.max_tokens",
			fTemperature:   "gen_ai.request.temperature",
			fResponseID:    genai.AttrResponseID,
			fToolName:      "traceloop.entity.name",
			fAgentName:     "traceloop.entity.name",
			fInputContent:  "gen_ai.prompt.0.content",
			fOutputContent: "gen_ai.completion.0.content",
		},
		finishAsString: true,
		chunkEvent:     genai.OpenLLMetryEventCompletionChunk,
		chunkSpan:      "{provider}.chat.chunk",
	},
	{
		name:      config.SemconvVercelAI,
		metrics:   genai.TargetV1_41,
		spanName:  [numOps]string{"ai.streamText.doStream", "ai.embed.doEmbed", "retrieve", "rerank", "ai.toolCall", "ai.generateText"},
		opValue:   [numOps]string{"ai.streamText.doStream", "ai.embed.doEmbed", "", "", "ai.toolCall", "ai.generateText"},
		kindKey:   "ai.operationId",
		kindValue: [numOps]string{"ai.streamText.doStream", "ai.embed.doEmbed", "", "", "ai.toolCall", "ai.generateText"},
		attrs: [numFields]string{
			fOperation:     "operation.name",
			fProvider:      "ai.model.provider",
			fRequestModel:  "ai.model.id",
			fResponseModel: "ai.response.model",
			fInputTokens:   "ai.usage.promptTokens",
			fOutputTokens:  "ai.usage.completionTokens",
			fFinishReasons: "ai.response.finishReason",
			fTTFT:          "ai.response.msToFirstChunk",
			fMaxTokens:     "ai.settings.maxOutputTokens",
			fResponseID:    "ai.response.id",
			fToolName:      "ai.toolCall.name",
			fToolCallID:    "ai.toolCall.id",
			fAgentName:     "ai.telemetry.functionId",
			fInputContent:  "ai.prompt.messages",
			fOutputContent: "ai.response.text",
		},
		ttftScale:      1000,
		finishAsString: true,
		providerSuffix: ".chat",
		chunkEvent:     genai.VercelAIEventFirstChunk,
		chunkSpan:      "ai.stream.chunk",
	},
	{
		name:      config.SemconvLegacyLLM,
		metrics:   genai.TargetV1_41,
		spanName:  [numOps]string{"llm.completion", "llm.embedding", "llm.request", "llm.request", "llm.tool_call", "llm.request"},
		kindKey:   "llm.request.type",
		kindValue: [numOps]string{"completion", "embedding", "retrieval", "rerank", "tool_call", "agent"},
		attrs: [numFields]string{
			fProvider:           "llm.vendor",
			fRequestModel:       "llm.request.model",
			fResponseModel:      "llm.response.model",
			fInputTokens:        "llm.token.input",
			fOutputTokens:       "llm.token.output",
			fTotalTokens:        "llm.token.total",
			fFinishReasons:      "llm.completion.finish_reason",
			fStream:             "llm.request.stream",
			fMaxTokens:          "llm.request.max_tokens",
			fTemperature:        "llm.request.temperature",
			fToolName:           "llm.tool.name",
			fAgentName:          "llm.agent.name",
			fInputContent:       "llm.prompt",
			fOutputContent:      "llm.completion",
			fChoiceCount:        "llm.completion.choices.count",
			fEmbeddingInputType: "llm.embedding.input.type",
		},
		finishAsString: true,
		chunkEvent:     genai.LegacyLLMEventCompletionChunk,
		chunkSpan:      "llm.completion.chunk",
	},
}

// dialects indexes dialectList by name; dialectNames lists the names in
// documentation order.
var (
	dialects     = map[string]*dialect{}
	dialectNames []string
)

func init() {
	for i := range dialectList {
		d := &dialectList[i]
		if d.ttftScale == 0 {
			d.ttftScale = 1
		}
		dialects[d.name] = d
		dialectNames = append(dialectNames, d.name)
	}
}
