package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// metricBuilder appends data points to one resource's metrics, creating each
// metric on first use.
type metricBuilder struct {
	enabled map[string]bool
	sm      pmetric.ScopeMetrics
	metrics map[string]pmetric.Metric
	now     pcommon.Timestamp
	start   pcommon.Timestamp
}

func (b *metricBuilder) on(name string) bool { return b.enabled[name] }

// point returns a new data point of an enabled metric.
func (b *metricBuilder) point(name string) pmetric.NumberDataPoint {
	m, ok := b.metrics[name]
	if !ok {
		d := metricDefsByName[name]
		m = b.sm.Metrics().AppendEmpty()
		m.SetName(d.name)
		m.SetUnit(d.unit)
		m.SetDescription(d.description)
		switch d.inst {
		case counter, upDownCounter:
			sum := m.SetEmptySum()
			sum.SetIsMonotonic(d.inst == counter)
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		default:
			m.SetEmptyGauge()
		}
		b.metrics[name] = m
	}
	var dp pmetric.NumberDataPoint
	if m.Type() == pmetric.MetricTypeSum {
		dp = m.Sum().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(b.start)
	} else {
		dp = m.Gauge().DataPoints().AppendEmpty()
	}
	dp.SetTimestamp(b.now)
	return dp
}

func (b *metricBuilder) double(name string, v float64, kv ...string) {
	if !b.on(name) {
		return
	}
	dp := b.point(name)
	dp.SetDoubleValue(v)
	putAttrs(dp.Attributes(), kv)
}

func (b *metricBuilder) int(name string, v int64, kv ...string) {
	if !b.on(name) {
		return
	}
	dp := b.point(name)
	dp.SetIntValue(v)
	putAttrs(dp.Attributes(), kv)
}

func putAttrs(m pcommon.Map, kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		m.PutStr(kv[i], kv[i+1])
	}
}
