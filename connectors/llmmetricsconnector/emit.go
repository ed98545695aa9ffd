package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Attributes the connector adds to its golden-signal metrics.
const (
	attrOutcome        = genai.AttrLLMOutcome
	attrSLO            = genai.AttrLLMSLO
	attrBelowThreshold = genai.AttrLLMBelowThreshold
)

// Golden-signal metrics (project namespace llm.*; the conventions define none).
var (
	metricRequests = genai.MetricDef{Name: genai.MetricLLMRequests, Unit: "{request}", Instrument: genai.Counter,
		Description: "GenAI requests by outcome: success, empty (no error but zero output tokens) or error."}
	metricOutputTokens = genai.MetricDef{Name: genai.MetricLLMOutputTokens, Unit: "{token}", Instrument: genai.Counter,
		Description: "Output tokens of successful, non-empty inference responses (chat, text_completion, generate_content); its rate is the effective tokens/s."}
	metricGoodput = genai.MetricDef{Name: genai.MetricLLMGoodputRequests, Unit: "{request}", Instrument: genai.Counter,
		Description: "Successful, non-empty requests that met every configured latency SLO."}
	metricSLOViolations = genai.MetricDef{Name: genai.MetricLLMSLOViolations, Unit: "{request}", Instrument: genai.Counter,
		Description: "Successful, non-empty requests that missed a configured latency SLO, by SLO (ttft, tpot, e2e)."}
	metricConcurrency = genai.MetricDef{Name: genai.MetricLLMConcurrency, Unit: "{request}", Instrument: genai.Gauge,
		Description: "Mean number of requests in flight over the last flush interval (request time / interval, Little's law)."}
	metricEvaluations = genai.MetricDef{Name: genai.MetricLLMEvaluations, Unit: "{evaluation}", Instrument: genai.Counter,
		Description: "Evaluated responses by gen_ai.evaluation.name and whether the score was below the configured threshold."}
)

// builder assembles one flush.
type builder struct {
	md          pmetric.Metrics
	temporality pmetric.AggregationTemporality
	byResource  map[*resourceState]*resourceBuilder
	points      int
}

type resourceBuilder struct {
	sm      pmetric.ScopeMetrics
	metrics map[string]pmetric.Metric
}

func (b *builder) metric(res *resourceState, d *genai.MetricDef, exponential bool) pmetric.Metric {
	rb, ok := b.byResource[res]
	if !ok {
		rm := b.md.ResourceMetrics().AppendEmpty()
		res.attrs.CopyTo(rm.Resource().Attributes())
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ScopeName)
		rb = &resourceBuilder{sm: sm, metrics: make(map[string]pmetric.Metric)}
		b.byResource[res] = rb
	}
	if m, ok := rb.metrics[d.Name]; ok {
		return m
	}
	m := rb.sm.Metrics().AppendEmpty()
	m.SetName(d.Name)
	m.SetUnit(d.Unit)
	m.SetDescription(d.Description)
	switch {
	case d.Instrument == genai.Histogram && exponential:
		m.SetEmptyExponentialHistogram().SetAggregationTemporality(b.temporality)
	case d.Instrument == genai.Histogram:
		m.SetEmptyHistogram().SetAggregationTemporality(b.temporality)
	case d.Instrument == genai.Counter:
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(b.temporality)
	default:
		m.SetEmptyGauge()
	}
	rb.metrics[d.Name] = m
	return m
}

func (b *builder) histogram(s *series, d *genai.MetricDef, h *histogram, start, now pcommon.Timestamp) pcommon.Map {
	attrs := h.appendTo(b.metric(s.res, d, h.expo != nil), start, now)
	s.attrs.CopyTo(attrs)
	b.points++
	return attrs
}

func (b *builder) sum(s *series, d *genai.MetricDef, v int64, start, now pcommon.Timestamp) pcommon.Map {
	dp := b.metric(s.res, d, false).Sum().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(now)
	dp.SetIntValue(v)
	s.attrs.CopyTo(dp.Attributes())
	b.points++
	return dp.Attributes()
}

// build turns the state into metrics. window is the time since the previous
// flush, for the concurrency gauge.
func (a *aggregator) build(now time.Time, lastFlush time.Time, temporality pmetric.AggregationTemporality) (pmetric.Metrics, int) {
	b := &builder{md: pmetric.NewMetrics(), temporality: temporality, byResource: make(map[*resourceState]*resourceBuilder)}
	keys := make([]string, 0, len(a.series))
	for k := range a.series {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ts := pcommon.NewTimestampFromTime(now)
	window := now.Sub(lastFlush).Seconds()
	for _, k := range keys {
		s := a.series[k]
		start := s.start
		if temporality == pmetric.AggregationTemporalityDelta {
			start = pcommon.NewTimestampFromTime(lastFlush)
		}
		if s.server {
			a.buildServer(b, s, start, ts)
		} else {
			a.buildClient(b, s, start, ts)
		}
		if a.cfg.GoldenSignals {
			a.buildGolden(b, s, start, ts, window)
		}
	}
	return b.md, b.points
}

func (a *aggregator) buildServer(b *builder, s *series, start, now pcommon.Timestamp) {
	hs := s.hists[0]
	if hs == nil {
		return
	}
	d := &a.server
	for _, h := range []struct {
		def *genai.MetricDef
		h   *histogram
	}{{&d.RequestDuration, hs.duration}, {&d.TimeToFirstToken, hs.ttft}, {&d.TimePerOutputToken, hs.tpot}} {
		if h.h != nil && h.h.Count > 0 {
			b.histogram(s, h.def, h.h, start, now)
		}
	}
}

func (a *aggregator) buildClient(b *builder, s *series, start, now pcommon.Timestamp) {
	for cat, hs := range s.hists {
		if hs == nil {
			continue
		}
		d := &a.client[cat]
		for _, h := range []struct {
			def *genai.MetricDef
			h   *histogram
		}{{&d.Duration, hs.duration}, {&d.TimeToFirstChunk, hs.ttft}, {&d.TimePerOutputChunk, hs.tpot}, {&d.InputTokens, hs.input}, {&d.OutputTokens, hs.output}} {
			if h.def.Name != "" && h.h != nil && h.h.Count > 0 {
				b.histogram(s, h.def, h.h, start, now)
			}
		}
		if d.TokenUsage.Name != "" {
			if hs.input != nil && hs.input.Count > 0 {
				b.histogram(s, &d.TokenUsage, hs.input, start, now).PutStr(genai.AttrTokenType, genai.TokenTypeInput)
			}
			if hs.output != nil && hs.output.Count > 0 {
				b.histogram(s, &d.TokenUsage, hs.output, start, now).PutStr(genai.AttrTokenType, genai.TokenTypeOutput)
			}
		}
		if hs.usage {
			counters := [numUsageCounters]*genai.MetricDef{&d.InputTokensTotal, &d.OutputTokensTotal, &d.CacheReadInputTokensTotal, &d.CacheWriteInputTokens, &d.ReasoningOutputTokens}
			for c, def := range counters {
				for m, seen := range hs.seen[c] {
					if seen {
						b.sum(s, def, hs.tokens[c][m], start, now).PutStr(genai.AttrTokenModality, modalityNames[m])
					}
				}
			}
		}
	}
}

func (a *aggregator) buildGolden(b *builder, s *series, start, now pcommon.Timestamp, window float64) {
	for o, n := range s.requests {
		if n > 0 {
			b.sum(s, &metricRequests, int64(n), start, now).PutStr(attrOutcome, outcomeNames[o])
		}
	}
	if s.requests[outcomeSuccess] > 0 {
		if s.inference || s.overflow {
			b.sum(s, &metricOutputTokens, s.outputTokens, start, now)
		}
		if a.cfg.SLO.enabled() {
			b.sum(s, &metricGoodput, int64(s.goodput), start, now)
			for i, n := range s.sloMisses {
				if a.slo[i] > 0 {
					b.sum(s, &metricSLOViolations, int64(n), start, now).PutStr(attrSLO, sloNames[i])
				}
			}
		}
	}
	if window > 0 {
		dp := b.metric(s.res, &metricConcurrency, false).Gauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(now)
		dp.SetDoubleValue(s.busy / window)
		s.attrs.CopyTo(dp.Attributes())
		b.points++
	}
	for _, e := range s.evals {
		for _, below := range []bool{true, false} {
			n := e.below
			if !below {
				n = e.total - e.below
			}
			attrs := b.sum(s, &metricEvaluations, int64(n), start, now)
			if e.name != "" {
				attrs.PutStr(genai.AttrEvaluationName, e.name)
			}
			attrs.PutBool(attrBelowThreshold, below)
		}
	}
}

// afterFlush resets what a flush consumed: everything for delta, the
// per-window concurrency and expired series for cumulative. It returns the
// number of series expired.
func (a *aggregator) afterFlush(now time.Time, delta bool) int {
	if delta {
		clear(a.series)
		clear(a.resources)
		return 0
	}
	expired := 0
	for k, s := range a.series {
		s.busy = 0
		if a.cfg.SeriesExpiration > 0 && now.Sub(s.lastSeen) > a.cfg.SeriesExpiration {
			delete(a.series, k)
			expired++
			if s.res.series--; s.res.series == 0 {
				delete(a.resources, s.res.key)
			}
		}
	}
	return expired
}
