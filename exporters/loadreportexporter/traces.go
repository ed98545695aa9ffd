package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Outcomes of a span, counted in otelcol_load_report_spans.
const (
	spanRequest        = "request"        // a model call, counted in the report
	spanGroupOverflow  = "group_overflow" // a model call counted in the _OTHER row (limits.max_groups)
	spanGuardSummary   = "span_guard_summary"
	spanNotGenAI       = "not_genai"      // no gen_ai.operation.name
	spanNotModelCall   = "not_model_call" // tool, agent, retrieval, workflow spans
	spanServer         = "server_span"    // SERVER spans (the other side of a client span)
	spanBadTimestamps  = "bad_timestamps" // end before start, or zero
	ignoredTTFTOutside = "outside_duration"
)

// isModelCall reports whether op is a request to a model endpoint: the
// shared predicate, embeddings included (as the README documents).
func isModelCall(op string) bool { return genai.IsInference(op, genai.WithEmbeddings) }

// chunkEventNames are span event names that mark one streamed chunk (as
// llm_loadgen writes them in each dialect: GenAI, OpenLLMetry, legacy llm.*);
// when a span has two or more, every gap between consecutive ones is an ITL
// sample.
var chunkEventNames = func() map[string]bool {
	m := make(map[string]bool, len(genai.ChunkEventNames))
	for _, n := range genai.ChunkEventNames {
		m[n] = true
	}
	return m
}()

func firstAttr(keys []string, attrs ...pcommon.Map) string {
	for _, k := range keys {
		for _, m := range attrs {
			if v, ok := m.Get(k); ok {
				if s := v.AsString(); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

func intAttr(m pcommon.Map, keys ...string) (int64, bool) {
	for _, k := range keys {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt:
			return v.Int(), true
		case pcommon.ValueTypeDouble:
			return int64(v.Double()), true
		case pcommon.ValueTypeStr:
			if n, err := strconv.ParseInt(v.Str(), 10, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

func floatAttr(m pcommon.Map, keys ...string) (float64, bool) {
	for _, k := range keys {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			return v.Double(), true
		case pcommon.ValueTypeInt:
			return float64(v.Int()), true
		case pcommon.ValueTypeStr:
			if f, err := strconv.ParseFloat(v.Str(), 64); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

// defaultScenario names the scenario of requests that carry none.
const defaultScenario = "default"

// scenariosByTrace maps the traces of td to the scenario a span of theirs
// names: llm_loadgen writes the scenario on the request's root (HTTP) span,
// not on the model calls under it.
func (s *state) scenariosByTrace(td ptrace.Traces) map[pcommon.TraceID]string {
	var out map[pcommon.TraceID]string
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sc := firstAttr(s.cfg.Dimensions.Scenario, sp.Attributes()); sc != "" {
					if out == nil {
						out = map[pcommon.TraceID]string{}
					}
					out[sp.TraceID()] = sc
				}
			}
		}
	}
	return out
}

// keyFor builds the row key from span (or data point) and resource attributes.
func (s *state) keyFor(attrs, res pcommon.Map) groupKey {
	d := s.cfg.Dimensions
	target := firstAttr(d.Target, attrs, res)
	if target != "" {
		if port, ok := intAttr(attrs, genai.AttrServerPort); ok && !strings.Contains(target, ":") {
			target += ":" + strconv.FormatInt(port, 10)
		}
	} else {
		target = "unknown"
	}
	model := firstAttr(d.Model, attrs, res)
	if model == "" {
		model = "unknown"
	}
	scenario := firstAttr(d.Scenario, attrs, res)
	if scenario == "" {
		scenario = defaultScenario
	}
	return groupKey{Target: target, Model: model, Scenario: scenario}
}

// group returns the row for k, or the overflow row when limits.max_groups is
// reached. The boolean is true for the overflow row.
func (s *state) group(k groupKey) (*group, bool) {
	if g, ok := s.groups[k]; ok {
		return g, k == overflowKey
	}
	if len(s.groups) >= s.cfg.Limits.MaxGroups {
		k = overflowKey
		if g, ok := s.groups[k]; ok {
			return g, true
		}
	}
	g := newGroup(k, s.spec)
	s.groups[k] = g
	return g, k == overflowKey
}

// consumeTraces adds the model calls of td to the state and returns the
// number of spans by outcome.
func (s *state) consumeTraces(td ptrace.Traces) map[string]int64 {
	out := map[string]int64{}
	s.inherit = s.scenariosByTrace(td)
	defer func() { s.inherit = nil }()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		shard := s.shardOf(res)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				o := s.consumeSpan(spans.At(k), res)
				out[o]++
				if o != spanRequest && o != spanGroupOverflow {
					continue
				}
				// s.facts and s.key are the request span's, set by consumeSpan.
				if shard != nil {
					shard.addSpan(spans.At(k), s.facts.Failed)
				}
				if s.csv != nil {
					sp := spans.At(k)
					s.csv.add(&csvRow{sp: sp, attrs: sp.Attributes(), res: res, facts: &s.facts, key: s.key, cancelled: s.cfg.CancelledErrorTypes})
				}
			}
		}
	}
	if s.csv != nil && s.csv.full() {
		_ = s.flushCSV() // a failure is counted; the next report write logs it
	}
	return out
}

// requestKey is the row key of a request span: its own dimensions, with the
// scenario of its trace when it names none.
func (s *state) requestKey(sp ptrace.Span, res pcommon.Map) groupKey {
	key := s.keyFor(sp.Attributes(), res)
	if key.Scenario == defaultScenario {
		if sc, ok := s.inherit[sp.TraceID()]; ok {
			key.Scenario = sc
		}
	}
	return key
}

func (s *state) consumeSpan(sp ptrace.Span, res pcommon.Map) string {
	if sp.Name() == genai.SpanGuardSummarySpanName {
		s.addSummary(sp.Attributes())
		return spanGuardSummary
	}
	s.spansSeen++
	notRequest, ttftOutside := s.readFacts(sp)
	if notRequest == spanServer && s.jn.enabled() && !sp.TraceID().IsEmpty() {
		s.jn.addServer(sp.TraceID(), s.readServer(sp), s.now())
	}
	if notRequest != "" {
		return notRequest
	}
	start, end := int64(sp.StartTimestamp()), int64(sp.EndTimestamp())
	if start <= 0 || end < start {
		return spanBadTimestamps
	}
	s.key = s.requestKey(sp, res)
	g, overflow := s.group(s.key)
	s.observeArrival()
	dur := float64(end-start) / 1e9
	endPt := s.countRequest(g, sp, start, end, dur, concurrencyCap(sp, res))
	if s.facts.Failed {
		s.countFailure(g, endPt)
	} else {
		s.countSuccess(g, sp, start, dur, ttftOutside, endPt)
	}
	if sp.Kind() == ptrace.SpanKindClient && s.jn.enabled() && !sp.TraceID().IsEmpty() {
		s.jn.addClient(sp.TraceID(), s.readClient(sp), s.now())
	}
	if overflow {
		return spanGroupOverflow
	}
	return spanRequest
}

// readFacts reads the span's GenAI facts into s.facts. It returns why the
// span is no model call to count ("" when it is one) and whether a TTFT
// attribute was below zero or not finite.
func (s *state) readFacts(sp ptrace.Span) (string, bool) {
	f := &s.facts
	ttftOutside := false // a TTFT attribute below zero or not finite
	f.Read(sp, func(k string, why genai.Invalid) {
		if why != genai.InvalidType && (k == genai.AttrTimeToFirstChunk || k == genai.VLLMAttrTimeToFirstToken) {
			ttftOutside = true
		}
	})
	switch {
	case isServerInference(sp, f.Operation):
		return spanServer, ttftOutside
	case f.Operation == "":
		return spanNotGenAI, ttftOutside
	case !isModelCall(f.Operation):
		return spanNotModelCall, ttftOutside
	}
	return "", ttftOutside
}

// concurrencyCap is the run's in-flight bound when the request was sent:
// llm_loadgen's cap (a shard's share times the shards); 0 when unknown.
func concurrencyCap(sp ptrace.Span, res pcommon.Map) float64 {
	c, ok := intAttr(sp.Attributes(), genai.AttrLoadgenConcurrencyCap)
	if !ok || c <= 0 {
		return 0
	}
	if n, ok := intAttr(res, genai.AttrLoadgenShardCount); ok && n > 1 {
		c *= n
	}
	return float64(c)
}

// countRequest counts a request from start to end (dur seconds) in g and on
// the timeline, and returns the timeline point it completed in.
func (s *state) countRequest(g *group, sp ptrace.Span, start, end int64, dur, capNow float64) *tpoint {
	f := &s.facts
	g.requests++
	g.first = min(g.first, start)
	g.last = max(g.last, end)
	g.busy += dur
	if f.InputTokens.OK && f.InputTokens.N > 0 {
		g.inputTokens += f.InputTokens.N
	}
	startPt := s.timeline.at(start)
	startPt.started++
	if rate, ok := floatAttr(sp.Attributes(), s.cfg.TargetRate.Attributes...); ok && rate > 0 {
		startPt.targetRate = max(startPt.targetRate, rate)
	}
	startPt.cap = max(startPt.cap, capNow)
	s.timeline.addBusy(start, end)
	endPt := s.timeline.at(end)
	endPt.completed++
	return endPt
}

// countFailure counts a failed request's error type in g and endPt.
func (s *state) countFailure(g *group, endPt *tpoint) {
	f := &s.facts
	if g.addError(f.ErrorType, s.cfg.Limits.MaxErrorTypes) {
		s.tel.errorTypesFolded++
	}
	if isCancelled(f.ErrorType, s.cfg.CancelledErrorTypes) {
		g.cancelled++
	}
	endPt.errors++
}

// countSuccess adds a successful request's tokens, latencies and goodput to
// g and to the timeline.
func (s *state) countSuccess(g *group, sp ptrace.Span, start int64, dur float64, ttftOutside bool, endPt *tpoint) {
	f := &s.facts
	g.successes++
	out := f.OutputTokens.N // 0 when absent
	if out > 0 {
		g.outputTokens += out
		endPt.outputTokens += out
	}
	g.e2e.add(dur)
	s.timeline.at(start).sketchE2E(s.timelineSpec).add(dur)
	ttft, hasTTFT := s.addTTFT(g, start, dur, ttftOutside)
	if hasTTFT {
		s.workload.add(s.spec, sp.Attributes(), ttft, f.InputTokens.N)
	}
	tpot := math.NaN()
	if hasTTFT {
		if t, ok := genai.TimePerOutputToken(dur, ttft, out); ok {
			tpot = t
			g.tpot.add(tpot)
		}
	}
	addITL(g, sp, tpot, out)
	if v, ok := floatAttr(sp.Attributes(), genai.AttrLoadgenTimeToFirstAnswer); ok && v >= 0 && v <= dur {
		g.addTo(&g.ttfa, v)
	}
	if v, ok := floatAttr(sp.Attributes(), genai.AttrLoadgenClientDelayFirst); ok && v >= 0 && v <= dur {
		g.addTo(&g.clientDelay, v)
	}
	if v, ok := floatAttr(sp.Attributes(), genai.AttrLoadgenProcessCPU); ok && v >= 0 {
		g.addTo(&g.generatorCPU, v)
	}
	if s.meetsGoodput(dur, ttft, hasTTFT, tpot) {
		g.good++
	}
}

// addTTFT adds the request's TTFT to g and the timeline unless it is absent
// or impossible (longer than the request, or an attribute out of range,
// which is counted). It returns the TTFT read and whether it counts.
func (s *state) addTTFT(g *group, start int64, dur float64, ttftOutside bool) (float64, bool) {
	ttft, hasTTFT := s.facts.TTFT.S, s.facts.TTFT.OK
	if (hasTTFT && ttft > dur*1.0001+1e-6) || (!hasTTFT && ttftOutside) {
		s.tel.ignoredValue(genai.AttrTimeToFirstChunk, ignoredTTFTOutside)
		hasTTFT = false
	}
	if hasTTFT {
		g.ttft.add(ttft)
		s.timeline.at(start).sketchTTFT(s.timelineSpec).add(ttft)
	}
	return ttft, hasTTFT
}

// addITL adds the request's inter-token latencies to g: the gaps between its
// chunk events, else its TPOT (when known) once for each of its out−1 gaps.
func addITL(g *group, sp ptrace.Span, tpot float64, out int64) {
	if gaps := chunkGaps(sp); len(gaps) > 0 {
		for _, gap := range gaps {
			if gap.tokens > 1 {
				g.itl.addCount(gap.s/float64(gap.tokens), float64(gap.tokens))
				continue
			}
			g.itl.add(gap.s)
		}
		g.itlFromEvents++
	} else if !math.IsNaN(tpot) {
		// Without chunk events the mean gap stands for each of the request's gaps.
		g.itl.addCount(tpot, float64(out-1))
		g.itlFromTPOT++
	}
}

// meetsGoodput applies the goodput objectives. A request without a TTFT
// (not streamed) delivers its first token with the response: its TTFT is its
// duration.
func (s *state) meetsGoodput(dur, ttft float64, hasTTFT bool, tpot float64) bool {
	gp := s.cfg.Goodput
	if !hasTTFT {
		ttft = dur
	}
	if gp.TTFT > 0 && ttft > gp.TTFT.Seconds() {
		return false
	}
	if gp.TPOT > 0 && !math.IsNaN(tpot) && tpot > gp.TPOT.Seconds() {
		return false
	}
	if gp.E2E > 0 && dur > gp.E2E.Seconds() {
		return false
	}
	return true
}

// chunkGap is the time between two chunk events and the tokens the later
// chunk carried (llm_loadgen.chunk.tokens; 1 when the event does not say).
type chunkGap struct {
	s      float64
	tokens int64
}

// chunkGaps returns the gaps between consecutive chunk events. A chunk of k
// tokens ends a gap that is k inter-token latencies of gap/k each (servers
// that send several tokens per chunk: speculative decoding, usage per
// chunk).
func chunkGaps(sp ptrace.Span) []chunkGap {
	evs := sp.Events()
	type chunkEvent struct {
		t      int64
		tokens int64
	}
	var cs []chunkEvent
	for i := 0; i < evs.Len(); i++ {
		e := evs.At(i)
		if !chunkEventNames[e.Name()] {
			continue
		}
		n, ok := intAttr(e.Attributes(), genai.AttrLoadgenChunkTokens)
		if !ok || n < 1 {
			n = 1
		}
		cs = append(cs, chunkEvent{int64(e.Timestamp()), n})
	}
	if len(cs) < 2 {
		return nil
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].t < cs[j].t })
	gaps := make([]chunkGap, 0, len(cs)-1)
	for i := 1; i < len(cs); i++ {
		gaps = append(gaps, chunkGap{float64(cs[i].t-cs[i-1].t) / 1e9, cs[i].tokens})
	}
	return gaps
}

// addSummary adds the counts of a span_guard summary span.
func (s *state) addSummary(attrs pcommon.Map) {
	s.summaries++
	attrs.Range(func(k string, v pcommon.Value) bool {
		if !strings.HasPrefix(k, genai.SpanGuardAttrPrefix) {
			return true
		}
		n, ok := intAttr(attrs, k)
		if !ok {
			return true
		}
		switch {
		case k == genai.SpanGuardAttrSpansReceived:
			s.summaryReceived += n
		case k == genai.SpanGuardAttrSpansFolded:
			s.summaryFolded += n
		case k == genai.SpanGuardAttrSpansDropped:
			s.summaryDropped += n
		case strings.HasPrefix(k, genai.SpanGuardAttrSpansDroppedPrefix):
			s.summaryDroppedBy[strings.TrimPrefix(k, genai.SpanGuardAttrSpansDroppedPrefix)] += n
		}
		return true
	})
}
