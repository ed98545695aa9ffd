package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

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
			dp := b.metricFor(rm, f).AppendEmpty()
			ts := e.Timestamp
			if ts.IsZero() {
				ts = e.ObservedTimestamp
			}
			dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
			if f.Metric.Monotonic {
				dp.SetStartTimestamp(b.startTime)
			}
			if i, isInt := v.(int64); isInt {
				dp.SetIntValue(i)
			} else {
				dp.SetDoubleValue(val)
			}
			b.pointAttributes(e, dp.Attributes())
			points++
		}
	}
	return md, points
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

func (b *metricsBuilder) metricFor(rm *resourceMetrics, f *fieldSpec) pmetric.NumberDataPointSlice {
	name := b.names[f.Capture]
	m, ok := rm.metrics[name]
	if !ok {
		m = rm.sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetUnit(f.Metric.Unit)
		m.SetDescription(f.Metric.Description)
		if f.Metric.Monotonic {
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		} else {
			m.SetEmptyGauge()
		}
		rm.metrics[name] = m
	}
	if f.Metric.Monotonic {
		return m.Sum().DataPoints()
	}
	return m.Gauge().DataPoints()
}

// pointAttributes copies the attributes that identify the series: the server,
// the file, and the preset's metric attributes (e.g. the engine index).
func (b *metricsBuilder) pointAttributes(e *entry.Entry, dst pcommon.Map) {
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
