package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"math/bits"
	"strconv"

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

// modalityAttrs gives the usage kind and modality index of each entry of
// genai.ModalityUsage (the index of genai.SpanFacts.Modality).
var modalityAttrs = func() (m [genai.NumModalityUsage]modalityAttr) {
	for j, u := range genai.ModalityUsage {
		for i, name := range modalityNames {
			if name == u.Modality {
				m[j] = modalityAttr{kind: int(u.Kind), modality: i}
			}
		}
	}
	return m
}()

// spanFacts is what one span contributes, read in a single pass over its
// attributes: the shared GenAI facts and what only this connector reads.
type spanFacts struct {
	genai.SpanFacts

	dims   [numBuiltinDims]string
	extras []string // values of the configured dimensions ("" = absent)

	// Per-modality subsets of input, output and cache-read tokens.
	parts    [numModalKinds][numModalities]int64
	hasParts [numModalKinds]bool

	evalName  string
	evalScore float64
	hasEval   bool

	server   bool
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
	// One pass over the attributes: the shared GenAI facts (a switch on the
	// key rather than one map lookup per fact), then the configured
	// dimensions.
	numExtras := e.numExtras
	for k, v := range span.Attributes().All() {
		fact, why := f.Attr(k, v)
		switch {
		case fact:
			if why != genai.Valid {
				e.counts.ignore(k, ignoreReasons[why])
			}
		case numExtras > 0:
			if i, ok := e.extraIndex[k]; ok {
				f.extras[i] = str(v)
			}
		}
	}
	f.End(span.Status().Code())
	f.dims[dimOperation] = f.Operation
	f.dims[dimProvider] = f.Provider
	f.dims[dimRequestModel] = f.RequestModel
	f.dims[dimResponseModel] = f.ResponseModel
	f.dims[dimServerAddress] = f.ServerAddress
	if p, ok := f.ServerPort(); ok {
		f.dims[dimServerPort] = e.port(p)
	}
	f.dims[dimErrorType] = f.ErrorType
	f.evalName, f.evalScore, f.hasEval = f.EvaluationName, f.EvaluationScore.V, f.EvaluationScore.OK
	for set := f.ModalitySet; set != 0; set &= set - 1 {
		i := bits.TrailingZeros16(set)
		u := modalityAttrs[i]
		f.parts[u.kind][u.modality] += f.Modality[i]
		f.hasParts[u.kind] = true
	}
	f.server = span.Kind() == ptrace.SpanKindServer
	if !f.hasEval && span.Events().Len() > 0 {
		e.evaluationEvent(span.Events(), f)
	}
}

// ignoreReasons maps why the shared reader did not use a value to the
// reason counted.
var ignoreReasons = [...]string{
	genai.InvalidType:      reasonWrongType,
	genai.InvalidNotFinite: reasonWrongType,
	genai.InvalidNegative:  reasonNegative,
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
		score, why := genai.ScoreOf(sv) // a finite number, or a string holding one
		if why != genai.Valid {
			e.counts.ignore(genai.AttrEvaluationScore, reasonWrongType)
			continue
		}
		f.evalScore, f.hasEval = score.V, true
		if nv, ok := attrs.Get(genai.AttrEvaluationName); ok {
			f.evalName = str(nv)
		}
		return
	}
}

func str(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}
