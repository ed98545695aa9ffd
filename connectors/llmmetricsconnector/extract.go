package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Indexes of the built-in dimensions in spanFacts.dims, in the order of
// builtinDimensions.
const (
	dimOperation = iota
	dimProvider
	dimRequestModel
	dimResponseModel
	dimServerAddress
	dimServerPort
	dimErrorType
	numBuiltinDims
)

// Token modalities, in the order counters are emitted; modUnknown takes
// whatever the per-modality attributes do not account for.
const (
	modText = iota
	modImage
	modAudio
	modVideo
	modUnknown
	numModalities
)

var modalityNames = [numModalities]string{genai.ModalityText, genai.ModalityImage, genai.ModalityAudio, genai.ModalityVideo, genai.ModalityUnknown}

// numModalKinds is the number of usage kinds with per-modality attributes
// (genai.UsageInput, UsageOutput, UsageCacheRead).
const numModalKinds = 3

type modalityAttr struct{ kind, modality int }

// modalityAttrs indexes genai.ModalityUsage by attribute name.
var modalityAttrs = func() map[string]modalityAttr {
	m := make(map[string]modalityAttr, len(genai.ModalityUsage))
	for _, u := range genai.ModalityUsage {
		for i, name := range modalityNames {
			if name == u.Modality {
				m[u.Attr] = modalityAttr{kind: int(u.Kind), modality: i}
			}
		}
	}
	return m
}()

// optInt is an integer attribute that may be absent.
type optInt struct {
	v   int64
	set bool
}

// spanFacts is what one span contributes, read in a single pass over its
// attributes.
type spanFacts struct {
	dims   [numBuiltinDims]string
	extras []string // values of the configured dimensions ("" = absent)

	system string // deprecated gen_ai.system, used when gen_ai.provider.name is absent

	input, output, cacheRead, cacheWrite, reasoning optInt

	// Per-modality subsets of input, output and cache-read tokens.
	parts    [numModalKinds][numModalities]int64
	hasParts [numModalKinds]bool

	ttft    float64
	hasTTFT bool

	evalName  string
	evalScore float64
	hasEval   bool

	server   bool
	failed   bool
	duration float64 // seconds

	// For exemplars.
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	end     pcommon.Timestamp
}

// extractor reads spanFacts; extraIndex maps configured dimension names to
// their slot in spanFacts.extras.
type extractor struct {
	extraIndex map[string]int
	numExtras  int
	counts     *batchCounts
	ports      map[int64]string // formatted integer ports, to spare an allocation per span
}

const maxCachedPorts = 256

// port returns server.port as a string; integer ports are formatted once.
func (e *extractor) port(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeInt {
		return str(v)
	}
	p := v.Int()
	if s, ok := e.ports[p]; ok {
		return s
	}
	s := strconv.FormatInt(p, 10)
	if len(e.ports) < maxCachedPorts {
		if e.ports == nil {
			e.ports = make(map[int64]string)
		}
		e.ports[p] = s
	}
	return s
}

func (e *extractor) read(span ptrace.Span, f *spanFacts) {
	*f = spanFacts{extras: f.extras[:0]}
	for range e.numExtras {
		f.extras = append(f.extras, "")
	}
	for k, v := range span.Attributes().All() {
		e.attr(k, v, f)
	}
	if f.dims[dimProvider] == "" && f.system != "" {
		f.dims[dimProvider] = f.system
		if p, ok := genai.ProviderFromLegacySystem[f.system]; ok {
			f.dims[dimProvider] = p
		}
	}
	f.server = span.Kind() == ptrace.SpanKindServer
	if span.Status().Code() == ptrace.StatusCodeError || f.dims[dimErrorType] != "" {
		f.failed = true
		if f.dims[dimErrorType] == "" {
			f.dims[dimErrorType] = genai.ErrorTypeOther
		}
	}
	if !f.hasEval && span.Events().Len() > 0 {
		e.evaluationEvent(span.Events(), f)
	}
}

// attr dispatches one span attribute. A switch on the key reads every fact in
// one pass instead of one map lookup per fact.
func (e *extractor) attr(k string, v pcommon.Value, f *spanFacts) {
	switch k {
	case genai.AttrOperationName:
		f.dims[dimOperation] = str(v)
	case genai.AttrProviderName:
		f.dims[dimProvider] = str(v)
	case genai.LegacyAttrSystem:
		f.system = str(v)
	case genai.AttrRequestModel:
		f.dims[dimRequestModel] = str(v)
	case genai.AttrResponseModel:
		f.dims[dimResponseModel] = str(v)
	case genai.AttrServerAddress:
		f.dims[dimServerAddress] = str(v)
	case genai.AttrServerPort:
		f.dims[dimServerPort] = e.port(v)
	case genai.AttrErrorType:
		f.dims[dimErrorType] = str(v)
	case genai.AttrUsageInputTokens:
		f.input = e.tokens(k, v)
	case genai.AttrUsageOutputTokens:
		f.output = e.tokens(k, v)
	case genai.LegacyAttrUsagePromptTokens:
		if !f.input.set {
			f.input = e.tokens(k, v)
		}
	case genai.LegacyAttrUsageCompletionTokens:
		if !f.output.set {
			f.output = e.tokens(k, v)
		}
	case genai.AttrUsageCacheReadInputTokens:
		f.cacheRead = e.tokens(k, v)
	case genai.AttrUsageCacheWriteInputTokens, genai.LegacyAttrUsageCacheCreation:
		f.cacheWrite = e.tokens(k, v)
	case genai.AttrUsageReasoningOutputTokens:
		f.reasoning = e.tokens(k, v)
	case genai.AttrTimeToFirstChunk, genai.VLLMAttrTimeToFirstToken:
		if s, ok := e.seconds(k, v); ok {
			f.ttft, f.hasTTFT = s, true
		}
	case genai.AttrEvaluationName:
		f.evalName = str(v)
	case genai.AttrEvaluationScore:
		if s, ok := number(v); ok && finite(s) {
			f.evalScore, f.hasEval = s, true
		} else {
			e.counts.ignore(k, reasonWrongType)
		}
	default:
		if strings.HasPrefix(k, genai.UsageAttrPrefix) {
			if u, ok := modalityAttrs[k]; ok {
				if n := e.tokens(k, v); n.set {
					f.parts[u.kind][u.modality] += n.v
					f.hasParts[u.kind] = true
				}
				return
			}
		}
		if e.numExtras > 0 {
			if i, ok := e.extraIndex[k]; ok {
				f.extras[i] = str(v)
			}
		}
	}
}

// evaluationEvent reads the first gen_ai.evaluation.result event.
func (e *extractor) evaluationEvent(events ptrace.SpanEventSlice, f *spanFacts) {
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Name() != genai.EventEvaluationResult {
			continue
		}
		attrs := ev.Attributes()
		sv, ok := attrs.Get(genai.AttrEvaluationScore)
		if !ok {
			continue
		}
		score, ok := number(sv)
		if !ok || !finite(score) {
			e.counts.ignore(genai.AttrEvaluationScore, reasonWrongType)
			continue
		}
		f.evalScore, f.hasEval = score, true
		if nv, ok := attrs.Get(genai.AttrEvaluationName); ok {
			f.evalName = str(nv)
		}
		return
	}
}

func (e *extractor) tokens(k string, v pcommon.Value) optInt {
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeDouble:
		n = int64(v.Double())
	case pcommon.ValueTypeStr:
		p, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			e.counts.ignore(k, reasonWrongType)
			return optInt{}
		}
		n = p
	default:
		e.counts.ignore(k, reasonWrongType)
		return optInt{}
	}
	if n < 0 {
		e.counts.ignore(k, reasonNegative)
		return optInt{}
	}
	return optInt{v: n, set: true}
}

func (e *extractor) seconds(k string, v pcommon.Value) (float64, bool) {
	s, ok := number(v)
	if !ok || !finite(s) {
		e.counts.ignore(k, reasonWrongType)
		return 0, false
	}
	if s < 0 {
		e.counts.ignore(k, reasonNegative)
		return 0, false
	}
	return s, true
}

func number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	case pcommon.ValueTypeStr:
		f, err := strconv.ParseFloat(v.Str(), 64)
		return f, err == nil
	}
	return 0, false
}

func str(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}
