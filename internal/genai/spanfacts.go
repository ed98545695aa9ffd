package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

import (
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Invalid is why an attribute value that names a fact was not used.
type Invalid uint8

const (
	// Valid: the value was used (or not needed: a deprecated name whose
	// current name was already read).
	Valid Invalid = iota
	// InvalidType: not a number, nor a string holding one.
	InvalidType
	// InvalidNotFinite: NaN or an infinity.
	InvalidNotFinite
	// InvalidNegative: a count or a duration below zero.
	InvalidNegative
)

// Tokens is a token count that may be absent.
type Tokens struct {
	N  int64
	OK bool
}

// Seconds is a duration in seconds that may be absent.
type Seconds struct {
	S  float64
	OK bool
}

// Score is an evaluation score that may be absent.
type Score struct {
	V  float64
	OK bool
}

// SpanFacts are the GenAI facts of one span, the way every component reads
// them. It is the one reader of a span's GenAI attributes: llm_metrics and
// load_report use it. The rules:
//
//   - Operation, RequestModel, ResponseModel, ErrorType: the attribute as
//     text; an empty value is absent.
//   - Provider: gen_ai.provider.name, else the deprecated gen_ai.system
//     translated by ProviderFromLegacySystem.
//   - Token counts: the current name, else its deprecated name
//     (gen_ai.usage.prompt_tokens, completion_tokens,
//     cache_creation.input_tokens); see TokenCount for the values accepted.
//   - TTFT: gen_ai.response.time_to_first_chunk, else vLLM's
//     gen_ai.latency.time_to_first_token; see SecondsOf.
//   - Failed: error.type is set or the span status is ERROR; ErrorType is
//     then error.type, or ErrorTypeOther ("_OTHER") when only the status says
//     so.
//   - Modality: the per-modality token counts of ModalityUsage (subsets of
//     the totals), bit i of ModalitySet telling that ModalityUsage[i] was read.
//   - ServerAddress, ServerPort, EvaluationName, EvaluationScore (a finite
//     number; see ScoreOf) as the span carries them.
//
// A current name wins over its alternative whatever the attribute order. The
// zero value is ready for Attr; Reset clears it for the next span. Reading
// allocates nothing (but for facts given as non-string values, which are
// formatted). Strings and ServerPort refer to the span's memory.
type SpanFacts struct {
	Operation     string // gen_ai.operation.name; see IsInference
	Provider      string
	RequestModel  string
	ResponseModel string
	ServerAddress string
	ErrorType     string
	Failed        bool

	EvaluationName  string
	EvaluationScore Score

	InputTokens           Tokens
	OutputTokens          Tokens
	CacheReadInputTokens  Tokens
	CacheWriteInputTokens Tokens
	ReasoningOutputTokens Tokens

	TTFT Seconds // time to first chunk (token) of a streamed response

	Modality    [NumModalityUsage]int64
	ModalitySet uint16

	serverPort                              pcommon.Value
	hasPort                                 bool
	system                                  string
	legacyInput, legacyOutput, legacyCacheW Tokens
	vllmTTFT                                Seconds
}

// ServerPort returns server.port as the span carries it (an integer, or
// whatever else it is), and whether it does. The value is the span's.
func (f *SpanFacts) ServerPort() (pcommon.Value, bool) { return f.serverPort, f.hasPort }

// Reset clears f for the next span.
func (f *SpanFacts) Reset() { *f = SpanFacts{} }

// Read reads every fact of span: Reset, Attr for each attribute, End.
// rejected, when not nil, is told of every fact attribute whose value was
// not usable.
func (f *SpanFacts) Read(span ptrace.Span, rejected func(key string, why Invalid)) {
	f.Reset()
	for k, v := range span.Attributes().All() {
		if _, why := f.Attr(k, v); why != Valid && rejected != nil {
			rejected(k, why)
		}
	}
	f.End(span.Status().Code())
}

// Attr takes one span attribute. fact reports whether k names one of the
// facts; why, when not Valid, is why its value was not used. Callers that read
// more than the facts (in the same pass over the attributes) handle k
// themselves when fact is false.
func (f *SpanFacts) Attr(k string, v pcommon.Value) (fact bool, why Invalid) {
	switch k {
	case AttrOperationName:
		f.Operation = str(v)
	case AttrProviderName:
		f.Provider = str(v)
	case LegacyAttrSystem:
		f.system = str(v)
	case AttrRequestModel:
		f.RequestModel = str(v)
	case AttrResponseModel:
		f.ResponseModel = str(v)
	case AttrErrorType:
		f.ErrorType = str(v)
	case AttrServerAddress:
		f.ServerAddress = str(v)
	case AttrServerPort:
		f.serverPort, f.hasPort = v, true
	case AttrEvaluationName:
		f.EvaluationName = str(v)
	case AttrEvaluationScore:
		f.EvaluationScore, why = ScoreOf(v)
	case AttrUsageInputTokens:
		f.InputTokens, why = TokenCount(v)
	case LegacyAttrUsagePromptTokens:
		if !f.InputTokens.OK {
			f.legacyInput, why = TokenCount(v)
		}
	case AttrUsageOutputTokens:
		f.OutputTokens, why = TokenCount(v)
	case LegacyAttrUsageCompletionTokens:
		if !f.OutputTokens.OK {
			f.legacyOutput, why = TokenCount(v)
		}
	case AttrUsageCacheReadInputTokens:
		f.CacheReadInputTokens, why = TokenCount(v)
	case AttrUsageCacheWriteInputTokens:
		f.CacheWriteInputTokens, why = TokenCount(v)
	case LegacyAttrUsageCacheCreation:
		if !f.CacheWriteInputTokens.OK {
			f.legacyCacheW, why = TokenCount(v)
		}
	case AttrUsageReasoningOutputTokens:
		f.ReasoningOutputTokens, why = TokenCount(v)
	case AttrTimeToFirstChunk:
		f.TTFT, why = SecondsOf(v)
	case VLLMAttrTimeToFirstToken:
		if !f.TTFT.OK {
			f.vllmTTFT, why = SecondsOf(v)
		}
	case AttrUsageTextInputTokens, AttrUsageImageInputTokens, AttrUsageAudioInputTokens, AttrUsageVideoInputTokens,
		AttrUsageTextOutputTokens, AttrUsageImageOutputTokens, AttrUsageAudioOutputTokens, AttrUsageVideoOutputTokens,
		AttrUsageTextCacheReadInputTokens, AttrUsageImageCacheReadInputTokens, AttrUsageAudioCacheReadInputTokens:
		why = f.modality(modalityIndex(k), v)
	default:
		return false, Valid
	}
	return true, why
}

// modalityIndex is the index of k in ModalityUsage, or -1.
func modalityIndex(k string) int {
	for i := range ModalityUsage {
		if ModalityUsage[i].Attr == k {
			return i
		}
	}
	return -1
}

// modality takes the count of ModalityUsage[i].
func (f *SpanFacts) modality(i int, v pcommon.Value) Invalid {
	n, why := TokenCount(v)
	if n.OK {
		f.Modality[i] = n.N
		f.ModalitySet |= 1 << i
	}
	return why
}

// End applies the fallbacks and the error rule once every attribute was
// taken; status is the span's status code.
func (f *SpanFacts) End(status ptrace.StatusCode) {
	if !f.InputTokens.OK {
		f.InputTokens = f.legacyInput
	}
	if !f.OutputTokens.OK {
		f.OutputTokens = f.legacyOutput
	}
	if !f.CacheWriteInputTokens.OK {
		f.CacheWriteInputTokens = f.legacyCacheW
	}
	if !f.TTFT.OK {
		f.TTFT = f.vllmTTFT
	}
	if f.Provider == "" && f.system != "" {
		f.Provider = f.system
		if p, ok := ProviderFromLegacySystem[f.system]; ok {
			f.Provider = p
		}
	}
	if status == ptrace.StatusCodeError || f.ErrorType != "" {
		f.Failed = true
		if f.ErrorType == "" {
			f.ErrorType = ErrorTypeOther
		}
	}
}

// TokenCount reads a token count: an integer, a double (truncated toward
// zero) or a string holding a decimal integer; not negative.
func TokenCount(v pcommon.Value) (Tokens, Invalid) {
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeDouble:
		n = int64(v.Double())
	case pcommon.ValueTypeStr:
		p, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return Tokens{}, InvalidType
		}
		n = p
	default:
		return Tokens{}, InvalidType
	}
	if n < 0 {
		return Tokens{}, InvalidNegative
	}
	return Tokens{N: n, OK: true}, Valid
}

// SecondsOf reads a duration in seconds: a double, an integer or a string
// holding a number; finite and not negative.
func SecondsOf(v pcommon.Value) (Seconds, Invalid) {
	x, why := numberOf(v)
	switch {
	case why != Valid:
		return Seconds{}, why
	case x < 0:
		return Seconds{}, InvalidNegative
	}
	return Seconds{S: x, OK: true}, Valid
}

// ScoreOf reads a score: a double, an integer or a string holding a number;
// finite.
func ScoreOf(v pcommon.Value) (Score, Invalid) {
	x, why := numberOf(v)
	if why != Valid {
		return Score{}, why
	}
	return Score{V: x, OK: true}, Valid
}

// numberOf reads a finite number: a double, an integer or a string holding one.
func numberOf(v pcommon.Value) (float64, Invalid) {
	var x float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		x = v.Double()
	case pcommon.ValueTypeInt:
		x = float64(v.Int())
	case pcommon.ValueTypeStr:
		p, err := strconv.ParseFloat(v.Str(), 64)
		if err != nil {
			return 0, InvalidType
		}
		x = p
	default:
		return 0, InvalidType
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, InvalidNotFinite
	}
	return x, Valid
}

// str is the value as text, without a copy for strings.
func str(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}
