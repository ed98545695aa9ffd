package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Operation categories: the latest conventions name the duration metric by
// operation family. Under v1.41 every operation is catInference's set.
const (
	catInference = iota
	catEmbeddings
	catInvokeAgent
	catExecuteTool
	catInvokeWorkflow
	catOther
	numCategories
)

// representativeOp gives, per category, an operation whose metric set is the
// category's.
var representativeOp = [numCategories]string{
	genai.OpChat, genai.OpEmbeddings, genai.OpInvokeAgent, genai.OpExecuteTool, genai.OpInvokeWorkflow, "",
}

func categoryOf(op string) int {
	if genai.IsInference(op, genai.WithoutEmbeddings) {
		return catInference
	}
	switch op {
	case genai.OpEmbeddings:
		return catEmbeddings
	case genai.OpInvokeAgent:
		return catInvokeAgent
	case genai.OpExecuteTool:
		return catExecuteTool
	case genai.OpInvokeWorkflow:
		return catInvokeWorkflow
	}
	return catOther
}

// Request outcomes of llm.requests.
const (
	outcomeSuccess = iota // no error, and output tokens unknown or > 0
	outcomeEmpty          // no error, zero output tokens
	outcomeError          // error status or error.type set
	numOutcomes
)

var outcomeNames = [numOutcomes]string{genai.LLMOutcomeSuccess, genai.LLMOutcomeEmpty, genai.LLMOutcomeError}

// SLOs of llm.slo.violations.
const (
	sloTTFT = iota
	sloTPOT
	sloE2E
	numSLOs
)

var sloNames = [numSLOs]string{"ttft", "tpot", "e2e"}

// histSet holds the convention metrics of one series and category.
type histSet struct {
	duration, ttft, tpot, input, output *histogram

	// Token counters of the latest target, by counter and modality.
	usage  bool
	tokens [numUsageCounters][numModalities]int64
	seen   [numUsageCounters][numModalities]bool
}

// Token counters of the latest target; the first numModalKinds have
// per-modality attributes.
const (
	usageInput = iota
	usageOutput
	usageCacheRead
	usageCacheWrite
	usageReasoning
	numUsageCounters
)

// addUsage splits a total over the modalities the span reports; the rest
// (all of it when the span reports none) is "unknown".
func (hs *histSet) addUsage(counter int, total int64, parts *[numModalities]int64, hasParts bool) {
	hs.seen[counter][modUnknown] = true
	if !hasParts {
		hs.tokens[counter][modUnknown] += total
		return
	}
	for m := 0; m < modUnknown; m++ {
		if parts[m] > 0 {
			hs.tokens[counter][m] += parts[m]
			hs.seen[counter][m] = true
			total -= parts[m]
		}
	}
	if total > 0 {
		hs.tokens[counter][modUnknown] += total
	}
}

type evalCount struct {
	name         string
	below, total uint64
}

// series is the aggregation state of one attribute set.
type series struct {
	res      *resourceState
	attrs    pcommon.Map
	server   bool
	overflow bool
	// inference: the series' operation is a model inference, whose output
	// tokens count toward llm.output_tokens (agent and workflow spans often
	// roll up their children's usage and would count it twice).
	inference bool
	hists     [numCategories]*histSet // server series use hists[0]

	requests     [numOutcomes]uint64
	outputTokens int64
	goodput      uint64
	sloMisses    [numSLOs]uint64
	busy         float64 // seconds of request time since the last flush
	evals        []evalCount

	start    pcommon.Timestamp
	lastSeen time.Time
}

// resourceState is a resource with only the configured attributes.
type resourceState struct {
	key    string
	attrs  pcommon.Map
	series int
}

// aggregator holds the bounded state. It is not safe for concurrent use; the
// connector serializes access.
type aggregator struct {
	cfg       *Config
	client    [numCategories]genai.ClientMetrics
	server    genai.ServerMetrics
	hf        histogramFactory
	extras    []Dimension // configured dimensions, in spanFacts.extras order
	slo       [numSLOs]float64
	series    map[string]*series
	resources map[string]*resourceState
	keyBuf    []byte
	counts    *batchCounts // of the batch being consumed
}

func newAggregator(cfg *Config, hf histogramFactory) *aggregator {
	target, _ := genai.ParseTarget(cfg.Target)
	a := &aggregator{
		cfg:       cfg,
		server:    genai.ServerMetricsFor(target),
		hf:        hf,
		extras:    cfg.Dimensions,
		slo:       [numSLOs]float64{cfg.SLO.TTFT.Seconds(), cfg.SLO.TPOT.Seconds(), cfg.SLO.E2E.Seconds()},
		series:    make(map[string]*series),
		resources: make(map[string]*resourceState),
		keyBuf:    make([]byte, 0, 256),
	}
	for c := range a.client {
		a.client[c] = genai.ClientMetricsFor(target, representativeOp[c])
	}
	return a
}

const keySep = 0

// record aggregates one span's facts; it reports whether the span went to an
// overflow series and how many measurements it made.
func (a *aggregator) record(resKey string, resAttrs pcommon.Map, f *spanFacts, now time.Time) (overflow bool, points int) {
	k := append(a.keyBuf[:0], resKey...)
	k = append(k, keySep)
	if f.server {
		k = append(k, 's')
	} else {
		k = append(k, 'c')
	}
	for _, d := range f.dims {
		k = append(k, d...)
		k = append(k, keySep)
	}
	for _, e := range f.extras {
		k = append(k, e...)
		k = append(k, keySep)
	}
	a.keyBuf = k
	s, ok := a.series[string(k)]
	if !ok {
		if len(a.series) >= a.cfg.AggregationCardinalityLimit {
			s = a.overflowSeries(resKey, f.server, now)
			overflow = true
		} else {
			s = a.newSeries(string(k), resKey, resAttrs, f, now)
		}
	} else if s.overflow {
		overflow = true
	}
	s.lastSeen = now
	return overflow, a.observe(s, f)
}

func (a *aggregator) resource(resKey string, resAttrs pcommon.Map) *resourceState {
	if r, ok := a.resources[resKey]; ok {
		return r
	}
	r := &resourceState{key: resKey, attrs: pcommon.NewMap()}
	for _, name := range a.cfg.ResourceAttributes {
		if v, ok := resAttrs.Get(name); ok {
			v.CopyTo(r.attrs.PutEmpty(name))
		}
	}
	a.resources[resKey] = r
	return r
}

func (a *aggregator) newSeries(key, resKey string, resAttrs pcommon.Map, f *spanFacts, now time.Time) *series {
	s := &series{
		res: a.resource(resKey, resAttrs), attrs: pcommon.NewMap(), server: f.server,
		inference: categoryOf(f.dims[dimOperation]) == catInference, start: pcommon.NewTimestampFromTime(now),
	}
	s.attrs.EnsureCapacity(len(builtinDimensions) + len(f.extras))
	for i, v := range f.dims {
		if v == "" {
			continue
		}
		if i == dimServerPort {
			if p, err := strconv.ParseInt(v, 10, 64); err == nil {
				s.attrs.PutInt(builtinDimensions[i], p)
				continue
			}
		}
		s.attrs.PutStr(builtinDimensions[i], v)
	}
	for i, v := range f.extras {
		switch {
		case v != "":
			s.attrs.PutStr(a.extras[i].Name, v)
		case a.extras[i].Default != nil:
			s.attrs.PutStr(a.extras[i].Name, *a.extras[i].Default)
		}
	}
	s.res.series++
	a.series[key] = s
	return s
}

// overflowSeries returns the overflow series of the span's resource (or of the
// attribute-less resource when the resource itself is new), creating it even
// beyond the limit: there is at most one per resource and kind.
func (a *aggregator) overflowSeries(resKey string, server bool, now time.Time) *series {
	if _, ok := a.resources[resKey]; !ok {
		resKey = ""
	}
	key := resKey + "\x00overflow"
	if server {
		key += "/server"
	}
	if s, ok := a.series[key]; ok {
		return s
	}
	s := &series{res: a.resource(resKey, pcommon.NewMap()), attrs: pcommon.NewMap(), server: server, overflow: true, start: pcommon.NewTimestampFromTime(now)}
	s.attrs.PutBool(genai.AttrMetricOverflow, true)
	s.res.series++
	a.series[key] = s
	return s
}

func (s *series) histSet(cat int) *histSet {
	hs := s.hists[cat]
	if hs == nil {
		hs = &histSet{}
		s.hists[cat] = hs
	}
	return hs
}

func (a *aggregator) hist(h **histogram, bounds []float64, v float64) int {
	if *h == nil {
		*h = a.hf.new(bounds)
	}
	(*h).record(v)
	return 1
}

func (a *aggregator) exemplar(h *histogram, f *spanFacts, v float64) {
	if a.cfg.Exemplars.Enabled {
		h.offerExemplar(a.cfg.Exemplars.MaxPerDataPoint, exemplar{value: v, traceID: f.traceID, spanID: f.spanID, ts: f.end})
	}
}

// observe adds the span's measurements to s and returns how many it made.
func (a *aggregator) observe(s *series, f *spanFacts) int {
	n := 0
	tpot, hasTPOT := 0.0, false
	if f.TTFT.OK && f.OutputTokens.OK && f.duration >= f.TTFT.S {
		tpot, hasTPOT = genai.TimePerOutputToken(f.duration, f.TTFT.S, f.OutputTokens.N)
	}
	if s.server {
		if a.cfg.ServerMetrics {
			hs, d := s.histSet(0), &a.server
			n += a.hist(&hs.duration, d.RequestDuration.Buckets, f.duration)
			a.exemplar(hs.duration, f, f.duration)
			if !f.Failed && f.TTFT.OK {
				n += a.hist(&hs.ttft, d.TimeToFirstToken.Buckets, f.TTFT.S)
				a.exemplar(hs.ttft, f, f.TTFT.S)
			}
			if !f.Failed && hasTPOT {
				n += a.hist(&hs.tpot, d.TimePerOutputToken.Buckets, tpot)
			}
		}
	} else {
		cat := categoryOf(f.dims[dimOperation])
		hs, d := s.histSet(cat), &a.client[cat]
		n += a.hist(&hs.duration, d.Duration.Buckets, f.duration)
		a.exemplar(hs.duration, f, f.duration)
		if d.TimeToFirstChunk.Name != "" && f.TTFT.OK {
			n += a.hist(&hs.ttft, d.TimeToFirstChunk.Buckets, f.TTFT.S)
			a.exemplar(hs.ttft, f, f.TTFT.S)
		}
		if d.TimePerOutputChunk.Name != "" && hasTPOT {
			n += a.hist(&hs.tpot, d.TimePerOutputChunk.Buckets, tpot)
		}
		if d.TokenUsage.Name != "" || d.InputTokens.Name != "" {
			if f.InputTokens.OK {
				n += a.hist(&hs.input, genai.TokenBuckets, float64(f.InputTokens.N))
			}
		}
		if d.TokenUsage.Name != "" || d.OutputTokens.Name != "" {
			if f.OutputTokens.OK {
				n += a.hist(&hs.output, genai.TokenBuckets, float64(f.OutputTokens.N))
			}
		}
		if d.InputTokensTotal.Name != "" {
			// The latest conventions count failed calls and calls without
			// usage too (as zero), so that the series exist.
			hs.usage = true
			hs.addUsage(usageInput, f.InputTokens.N, &f.parts[genai.UsageInput], f.hasParts[genai.UsageInput])
			hs.addUsage(usageOutput, f.OutputTokens.N, &f.parts[genai.UsageOutput], f.hasParts[genai.UsageOutput])
			hs.addUsage(usageCacheRead, f.CacheReadInputTokens.N, &f.parts[genai.UsageCacheRead], f.hasParts[genai.UsageCacheRead])
			hs.addUsage(usageCacheWrite, f.CacheWriteInputTokens.N, nil, false)
			hs.addUsage(usageReasoning, f.ReasoningOutputTokens.N, nil, false)
			n += numUsageCounters
		}
	}
	if a.cfg.GoldenSignals {
		n += a.golden(s, f, tpot, hasTPOT)
	}
	return n
}

func (a *aggregator) golden(s *series, f *spanFacts, tpot float64, hasTPOT bool) int {
	n := 2 // requests, concurrency
	outcome := outcomeSuccess
	switch {
	case f.Failed:
		outcome = outcomeError
	case f.OutputTokens.OK && f.OutputTokens.N == 0:
		outcome = outcomeEmpty
	}
	s.requests[outcome]++
	s.busy += f.duration
	if outcome == outcomeSuccess {
		if categoryOf(f.dims[dimOperation]) == catInference {
			s.outputTokens += f.OutputTokens.N
			n++
		}
		if a.cfg.SLO.enabled() {
			ttft := f.duration // non-streaming: the first token arrives with the response
			if f.TTFT.OK {
				ttft = f.TTFT.S
			}
			miss := [numSLOs]bool{
				a.slo[sloTTFT] > 0 && ttft > a.slo[sloTTFT],
				a.slo[sloTPOT] > 0 && hasTPOT && tpot > a.slo[sloTPOT],
				a.slo[sloE2E] > 0 && f.duration > a.slo[sloE2E],
			}
			good := true
			for i, m := range miss {
				if m {
					s.sloMisses[i]++
					good = false
				}
			}
			if good {
				s.goodput++
			}
			n++
		}
	}
	if f.hasEval {
		a.evaluation(s, f)
		n++
	}
	return n
}

func (a *aggregator) evaluation(s *series, f *spanFacts) {
	threshold := a.cfg.Evaluation.ScoreThreshold
	if t, ok := a.cfg.Evaluation.Thresholds[f.evalName]; ok {
		threshold = t
	}
	name := f.evalName
	idx := -1
	for i := range s.evals {
		if s.evals[i].name == name {
			idx = i
			break
		}
	}
	if idx < 0 {
		if len(s.evals) >= a.cfg.Evaluation.MaxNames {
			a.counts.ignore(genai.AttrEvaluationName, reasonTooMany)
			name = genai.ErrorTypeOther
			for i := range s.evals {
				if s.evals[i].name == name {
					idx = i
				}
			}
		}
		if idx < 0 {
			s.evals = append(s.evals, evalCount{name: name})
			idx = len(s.evals) - 1
		}
	}
	s.evals[idx].total++
	if f.evalScore < threshold {
		s.evals[idx].below++
	}
}

// len is the number of series held.
func (a *aggregator) len() int { return len(a.series) }
