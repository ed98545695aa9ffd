package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// histogram aggregates one series of one histogram metric, either over
// explicit bucket boundaries (the shared genai.ExplicitHistogram) or as a
// base-2 exponential histogram.
type histogram struct {
	// Explicit buckets; only Count, Sum, Min and Max when expo is set.
	genai.ExplicitHistogram
	expo *structure.Histogram[float64]

	exemplars []exemplar // the slowest values of the current flush interval
}

type exemplar struct {
	value   float64
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	ts      pcommon.Timestamp
}

// offerExemplar keeps the max largest values seen since the last flush.
func (h *histogram) offerExemplar(max int, e exemplar) {
	if len(h.exemplars) < max {
		h.exemplars = append(h.exemplars, e)
		return
	}
	low := 0
	for i := range h.exemplars {
		if h.exemplars[i].value < h.exemplars[low].value {
			low = i
		}
	}
	if e.value > h.exemplars[low].value {
		h.exemplars[low] = e
	}
}

// exemplarPoint is what explicit and exponential histogram points share for exemplars.
type exemplarPoint interface {
	Exemplars() pmetric.ExemplarSlice
}

func (h *histogram) appendExemplars(dp exemplarPoint) {
	if len(h.exemplars) == 0 {
		return
	}
	es := dp.Exemplars()
	es.EnsureCapacity(len(h.exemplars))
	for _, e := range h.exemplars {
		x := es.AppendEmpty()
		x.SetDoubleValue(e.value)
		x.SetTimestamp(e.ts)
		x.SetTraceID(e.traceID)
		x.SetSpanID(e.spanID)
	}
	h.exemplars = h.exemplars[:0]
}

// histogramFactory builds empty histograms of the configured representation.
type histogramFactory struct {
	exponential bool
	expoCfg     structure.Config
}

func (hf histogramFactory) new(bounds []float64) *histogram {
	if hf.exponential {
		h := &histogram{expo: new(structure.Histogram[float64])}
		h.expo.Init(hf.expoCfg)
		return h
	}
	return &histogram{ExplicitHistogram: genai.ExplicitHistogram{Bounds: bounds}}
}

func (h *histogram) record(v float64) {
	if h.expo != nil {
		h.RecordStats(v)
		h.expo.Update(v)
		return
	}
	h.Record(v)
}

// appendTo adds the histogram as a data point of m (which must be of the
// matching type) and returns the attributes map to fill.
func (h *histogram) appendTo(m pmetric.Metric, start, now pcommon.Timestamp) pcommon.Map {
	if h.expo != nil {
		dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(now)
		h.CopyStatsTo(dp)
		h.appendExemplars(dp)
		dp.SetScale(h.expo.Scale())
		dp.SetZeroCount(h.expo.ZeroCount())
		pos := h.expo.Positive()
		dp.Positive().SetOffset(pos.Offset())
		bc := dp.Positive().BucketCounts()
		bc.EnsureCapacity(int(pos.Len()))
		for i := uint32(0); i < pos.Len(); i++ {
			bc.Append(pos.At(i))
		}
		return dp.Attributes()
	}
	dp := m.Histogram().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(now)
	h.appendExemplars(dp)
	h.CopyTo(dp)
	return dp.Attributes()
}
