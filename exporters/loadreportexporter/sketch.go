package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
)

// SketchLibrary names the quantile sketch used for every percentile.
const SketchLibrary = "DDSketch (github.com/DataDog/sketches-go v1.4.8), logarithmic mapping, collapsing-lowest dense store"

// sketch is a DDSketch plus the exact count, sum, min and max, so that the
// mean and the maximum are exact and only the percentiles carry the sketch's
// relative error. Memory is bounded by the collapsing store (max bins).
type sketch struct {
	dd       *ddsketch.DDSketch
	count    float64
	sum      float64
	min, max float64
}

// sketchSpec holds the accuracy and size of the sketches one exporter makes.
type sketchSpec struct {
	relativeAccuracy float64
	maxBins          int
}

func (s sketchSpec) newSketch() *sketch {
	dd, err := ddsketch.LogCollapsingLowestDenseDDSketch(s.relativeAccuracy, s.maxBins)
	if err != nil {
		// The accuracy was validated in Config.Validate; a failure here is a
		// programming error.
		panic(err)
	}
	return &sketch{dd: dd, min: math.Inf(1), max: math.Inf(-1)}
}

// add records value (negative values are clamped to 0: latencies cannot be negative).
func (s *sketch) add(v float64) { s.addCount(v, 1) }

func (s *sketch) addCount(v, n float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || n <= 0 {
		return
	}
	if v < 0 {
		v = 0
	}
	if err := s.dd.AddWithCount(v, n); err != nil {
		return
	}
	s.count += n
	s.sum += v * n
	s.min = math.Min(s.min, v)
	s.max = math.Max(s.max, v)
}

func (s *sketch) merge(o *sketch) {
	if o == nil || o.count == 0 {
		return
	}
	if err := s.dd.MergeWith(o.dd); err != nil {
		return
	}
	s.count += o.count
	s.sum += o.sum
	s.min = math.Min(s.min, o.min)
	s.max = math.Max(s.max, o.max)
}

// quantile returns the value at q (0..1): the element of rank q·(n−1) of the
// sorted values, within the sketch's relative accuracy. q = 1 is the exact max.
func (s *sketch) quantile(q float64) float64 {
	if s == nil || s.count == 0 {
		return math.NaN()
	}
	if q >= 1 {
		return s.max
	}
	if q <= 0 {
		return s.min
	}
	v, err := s.dd.GetValueAtQuantile(q)
	if err != nil {
		return math.NaN()
	}
	// The bin's representative value may lie just outside the exact range.
	return math.Min(math.Max(v, s.min), s.max)
}

func (s *sketch) mean() float64 {
	if s == nil || s.count == 0 {
		return math.NaN()
	}
	return s.sum / s.count
}

// forEach visits the sketch's bins (representative value, count).
func (s *sketch) forEach(f func(v, n float64)) {
	s.dd.ForEach(func(v, n float64) bool { f(v, n); return false })
}
