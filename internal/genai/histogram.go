package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

import "go.opentelemetry.io/collector/pdata/pmetric"

// ExplicitHistogram aggregates values over explicit bucket boundaries (such as a
// MetricDef's advised Buckets) into what an OTLP explicit-bucket histogram
// data point carries. It is the one explicit-bucket histogram of the project:
// llm_metrics' series and llm_loadgen's synthetic, live and schedule metrics
// use it. The zero value with Bounds set is ready to use; it is not safe for
// concurrent use.
type ExplicitHistogram struct {
	// Bounds are the explicit boundaries, strictly increasing; shared and
	// read-only.
	Bounds []float64
	// Counts has len(Bounds)+1 buckets once a value was recorded; bucket i
	// holds the values in (Bounds[i-1], Bounds[i]].
	Counts []uint64
	Count  uint64
	Sum    float64
	Min    float64
	Max    float64
}

// Record adds v, which must not be NaN.
func (h *ExplicitHistogram) Record(v float64) {
	h.RecordStats(v)
	if h.Counts == nil {
		h.Counts = make([]uint64, len(h.Bounds)+1)
	}
	// The first bound >= v. The advised lists are short (≤ 16), where a
	// linear scan beats a binary search.
	i := 0
	for i < len(h.Bounds) && v > h.Bounds[i] {
		i++
	}
	h.Counts[i]++
}

// RecordStats adds v to Count, Sum, Min and Max only, for a histogram whose
// buckets are kept elsewhere (llm_metrics' exponential representation).
func (h *ExplicitHistogram) RecordStats(v float64) {
	if h.Count == 0 || v < h.Min {
		h.Min = v
	}
	if h.Count == 0 || v > h.Max {
		h.Max = v
	}
	h.Count++
	h.Sum += v
}

// Reset empties the histogram for the next interval, keeping its buckets'
// memory.
func (h *ExplicitHistogram) Reset() {
	h.Count, h.Sum, h.Min, h.Max = 0, 0, 0, 0
	clear(h.Counts)
}

// CopyTo sets the count, sum, min, max, explicit bounds and bucket counts of
// dp (zero counts when nothing was recorded). Timestamps, attributes and
// exemplars are the caller's.
func (h *ExplicitHistogram) CopyTo(dp pmetric.HistogramDataPoint) {
	dp.SetCount(h.Count)
	dp.SetSum(h.Sum)
	dp.SetMin(h.Min)
	dp.SetMax(h.Max)
	dp.ExplicitBounds().FromRaw(h.Bounds)
	if h.Counts == nil {
		dp.BucketCounts().FromRaw(make([]uint64, len(h.Bounds)+1))
	} else {
		dp.BucketCounts().FromRaw(h.Counts)
	}
}

// StatsPoint is what explicit and exponential histogram data points share.
type StatsPoint interface {
	SetCount(uint64)
	SetSum(float64)
	SetMin(float64)
	SetMax(float64)
}

// CopyStatsTo sets the count, sum, min and max of dp (an exponential
// histogram point whose buckets the caller fills).
func (h *ExplicitHistogram) CopyStatsTo(dp StatsPoint) {
	dp.SetCount(h.Count)
	dp.SetSum(h.Sum)
	dp.SetMin(h.Min)
	dp.SetMax(h.Max)
}
