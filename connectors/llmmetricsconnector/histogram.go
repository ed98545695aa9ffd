package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"math"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// histogram aggregates one series of one histogram metric, either over
// explicit bucket boundaries or as a base-2 exponential histogram.
type histogram struct {
	bounds []float64 // explicit boundaries (shared, read-only); nil when exponential
	counts []uint64  // len(bounds)+1, allocated on first record
	expo   *structure.Histogram[float64]
	count  uint64
	sum    float64
	min    float64
	max    float64

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
	return &histogram{bounds: bounds}
}

func (h *histogram) record(v float64) {
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if h.count == 0 || v > h.max {
		h.max = v
	}
	h.count++
	h.sum += v
	if h.expo != nil {
		h.expo.Update(v)
		return
	}
	if h.counts == nil {
		h.counts = make([]uint64, len(h.bounds)+1)
	}
	// Buckets are (bounds[i-1], bounds[i]]; the advised lists are short, so
	// a linear scan beats a binary search.
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
}

func (h *histogram) reset() {
	h.count, h.sum, h.min, h.max = 0, 0, 0, 0
	if h.expo != nil {
		h.expo.Clear()
		return
	}
	clear(h.counts)
}

// appendTo adds the histogram as a data point of m (which must be of the
// matching type) and returns the attributes map to fill.
func (h *histogram) appendTo(m pmetric.Metric, start, now pcommon.Timestamp) pcommon.Map {
	if h.expo != nil {
		dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
		h.setCommon(dp, start, now)
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
	h.setCommon(dp, start, now)
	h.appendExemplars(dp)
	dp.ExplicitBounds().FromRaw(h.bounds)
	if h.counts == nil {
		dp.BucketCounts().FromRaw(make([]uint64, len(h.bounds)+1))
	} else {
		dp.BucketCounts().FromRaw(h.counts)
	}
	return dp.Attributes()
}

// histogramPoint is what explicit and exponential histogram points share.
type histogramPoint interface {
	SetStartTimestamp(pcommon.Timestamp)
	SetTimestamp(pcommon.Timestamp)
	SetCount(uint64)
	SetSum(float64)
	SetMin(float64)
	SetMax(float64)
}

func (h *histogram) setCommon(dp histogramPoint, start, now pcommon.Timestamp) {
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(now)
	dp.SetCount(h.count)
	dp.SetSum(h.sum)
	dp.SetMin(h.min)
	dp.SetMax(h.max)
}

// finite reports whether v can be recorded.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
