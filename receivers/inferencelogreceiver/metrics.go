package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"fmt"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// metricsBuilder turns the typed stats fields of a batch of entries into
// metric points, one resource per distinct entry resource.
type metricsBuilder struct {
	preset    *preset
	names     map[string]string // capture -> full metric name
	startTime pcommon.Timestamp
	version   string
}

func newMetricsBuilder(p *preset, namespace string, start time.Time, version string) *metricsBuilder {
	b := &metricsBuilder{preset: p, names: map[string]string{}, startTime: pcommon.NewTimestampFromTime(start), version: version}
	for _, f := range p.metrics {
		name := f.Metric.Name
		if namespace != "" {
			name = namespace + "." + name
		}
		b.names[f.Capture] = name
	}
	return b
}

type resourceMetrics struct {
	sm      pmetric.ScopeMetrics
	metrics map[string]pmetric.Metric
	// hists are the histogram series of this build, by metric name and
	// series attributes.
	hists map[string]*histSeries
}

// histSeries is one histogram series of a build: the values of one read.
type histSeries struct {
	m           pmetric.Metric
	entry       *entry.Entry // the first entry of the series, for its attributes
	h           genai.ExplicitHistogram
	first, last time.Time
}

// build returns the metrics for entries and the number of points.
func (b *metricsBuilder) build(entries []*entry.Entry) (pmetric.Metrics, int) {
	md := pmetric.NewMetrics()
	byResource := map[uint64]*resourceMetrics{}
	points := 0
	for _, e := range entries {
		var rm *resourceMetrics
		for _, f := range b.preset.metrics {
			v, ok := e.Attributes[f.Attribute]
			if !ok {
				continue
			}
			val, isNum := asFloat(v)
			if !isNum {
				continue // a failed conversion is already marked as a parse error
			}
			if rm == nil {
				rm = b.resourceFor(md, byResource, e)
			}
			ts := e.Timestamp
			if ts.IsZero() {
				ts = e.ObservedTimestamp
			}
			if len(f.Metric.Buckets) > 0 {
				b.observe(rm, f, e, val, ts)
				continue
			}
			dp := b.appendPoint(rm, f, v, val, ts)
			b.pointAttributes(e, dp.Attributes())
			points++
		}
	}
	for _, rm := range byResource {
		points += b.emitHistograms(rm)
	}
	return md, points
}

// appendPoint appends a point of field f's gauge or sum at ts: v as an
// integer when it is one, else its value val.
func (b *metricsBuilder) appendPoint(rm *resourceMetrics, f *fieldSpec, v any, val float64, ts time.Time) pmetric.NumberDataPoint {
	dp := b.metricFor(rm, f).AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
	if f.Metric.Monotonic {
		dp.SetStartTimestamp(b.startTime)
	}
	if i, isInt := v.(int64); isInt {
		dp.SetIntValue(i)
	} else {
		dp.SetDoubleValue(val)
	}
	return dp
}

// observe adds val to the histogram series of field f that entry e belongs
// to (its metric attributes).
func (b *metricsBuilder) observe(rm *resourceMetrics, f *fieldSpec, e *entry.Entry, val float64, ts time.Time) {
	key := b.names[f.Capture]
	if v, ok := e.Attributes[attrFileName].(string); ok {
		key += "\x00" + v
	}
	for _, a := range b.preset.metricAttrs {
		key += "\x00" + fmt.Sprint(e.Attributes[a.Attribute])
	}
	hs, ok := rm.hists[key]
	if !ok {
		hs = &histSeries{m: b.metric(rm, f), entry: e, h: genai.ExplicitHistogram{Bounds: f.Metric.Buckets}, first: ts, last: ts}
		if rm.hists == nil {
			rm.hists = map[string]*histSeries{}
		}
		rm.hists[key] = hs
	}
	hs.h.Record(val)
	hs.first, hs.last = minTime(hs.first, ts), maxTime(hs.last, ts)
}

// emitHistograms writes one point per histogram series of rm: the values
// of this read, over the times of its records.
func (b *metricsBuilder) emitHistograms(rm *resourceMetrics) int {
	for _, hs := range rm.hists {
		dp := hs.m.Histogram().DataPoints().AppendEmpty()
		hs.h.CopyTo(dp)
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(hs.first))
		dp.SetTimestamp(pcommon.NewTimestampFromTime(hs.last))
		b.pointAttributes(hs.entry, dp.Attributes())
	}
	return len(rm.hists)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// metric returns rm's metric of field f, adding it (of the field's type)
// on first use.
func (b *metricsBuilder) metric(rm *resourceMetrics, f *fieldSpec) pmetric.Metric {
	name := b.names[f.Capture]
	if m, ok := rm.metrics[name]; ok {
		return m
	}
	m := rm.sm.Metrics().AppendEmpty()
	m.SetName(name)
	m.SetUnit(f.Metric.Unit)
	m.SetDescription(f.Metric.Description)
	switch {
	case len(f.Metric.Buckets) > 0:
		m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	case f.Metric.Monotonic:
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	default:
		m.SetEmptyGauge()
	}
	rm.metrics[name] = m
	return m
}

func (b *metricsBuilder) resourceFor(md pmetric.Metrics, byResource map[uint64]*resourceMetrics, e *entry.Entry) *resourceMetrics {
	h := adapter.HashResource(e.Resource)
	if rm, ok := byResource[h]; ok {
		return rm
	}
	r := md.ResourceMetrics().AppendEmpty()
	for k, v := range e.Resource {
		putAttr(r.Resource().Attributes(), k, v)
	}
	sm := r.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	sm.Scope().SetVersion(b.version)
	rm := &resourceMetrics{sm: sm, metrics: map[string]pmetric.Metric{}}
	byResource[h] = rm
	return rm
}

// metricFor is the data points of rm's gauge or sum metric of field f.
func (b *metricsBuilder) metricFor(rm *resourceMetrics, f *fieldSpec) pmetric.NumberDataPointSlice {
	m := b.metric(rm, f)
	if f.Metric.Monotonic {
		return m.Sum().DataPoints()
	}
	return m.Gauge().DataPoints()
}

// pointAttributes copies the attributes that identify the series: the server,
// the file, and the preset's metric attributes (e.g. the engine index).
func (b *metricsBuilder) pointAttributes(e *entry.Entry, dst pcommon.Map) {
	dst.EnsureCapacity(2 + len(b.preset.metricAttrs))
	dst.PutStr(attrServer, b.preset.name)
	if v, ok := e.Attributes[attrFileName].(string); ok {
		dst.PutStr(attrFileName, v)
	}
	for _, f := range b.preset.metricAttrs {
		if v, ok := e.Attributes[f.Attribute]; ok {
			putAttr(dst, f.Attribute, v)
		}
	}
}

func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

func putAttr(m pcommon.Map, k string, v any) {
	switch t := v.(type) {
	case string:
		m.PutStr(k, t)
	case int64:
		m.PutInt(k, t)
	case int:
		m.PutInt(k, int64(t))
	case float64:
		m.PutDouble(k, t)
	case bool:
		m.PutBool(k, t)
	default:
		_ = m.PutEmpty(k).FromRaw(v)
	}
}
