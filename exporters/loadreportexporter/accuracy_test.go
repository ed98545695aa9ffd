package loadreportexporter

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestPercentileAccuracy compares the sketch with exact percentiles (the
// sample of rank floor(q·(n−1))) on heavy-tailed latencies: every percentile
// must be within the configured relative accuracy, mean and max exact.
func TestPercentileAccuracy(t *testing.T) {
	for _, acc := range []float64{0.01, 0.005, 0.02} {
		spec := sketchSpec{relativeAccuracy: acc, maxBins: 2048}
		rng := rand.New(rand.NewPCG(7, uint64(acc*1e6)))
		sk := spec.newSketch()
		vals := make([]float64, 100000)
		sum := 0.0
		for i := range vals {
			// log-normal TTFT: median 300 ms, long tail.
			v := 0.3 * math.Exp(0.8*rng.NormFloat64())
			vals[i] = v
			sum += v
			sk.add(v)
		}
		sort.Float64s(vals)
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
			exact := vals[int(math.Floor(q*float64(len(vals)-1)))]
			got := sk.quantile(q)
			assert.InEpsilon(t, exact, got, acc, "accuracy %v, q %v", acc, q)
		}
		assert.Equal(t, vals[len(vals)-1], sk.quantile(1))
		assert.InDelta(t, sum/float64(len(vals)), sk.mean(), 1e-12)
	}
}

// TestSketchMemoryBounded: hours of samples spread over nine decades stay
// within max_bins; the upper quantiles keep their accuracy.
func TestSketchMemoryBounded(t *testing.T) {
	spec := sketchSpec{relativeAccuracy: 0.01, maxBins: 256}
	sk := spec.newSketch()
	var vals []float64
	for i := 0; i < 200000; i++ {
		v := math.Pow(10, -6+9*float64(i%1000)/1000)
		sk.add(v)
		vals = append(vals, v)
	}
	bins := 0
	sk.forEach(func(_, _ float64) { bins++ })
	assert.LessOrEqual(t, bins, 256)
	sort.Float64s(vals)
	exact := vals[int(math.Floor(0.99*float64(len(vals)-1)))]
	assert.InEpsilon(t, exact, sk.quantile(0.99), 0.01)
}

func TestTimelineBounded(t *testing.T) {
	spec := sketchSpec{relativeAccuracy: 0.01, maxBins: 64}
	tl := newTimeline(spec, 1e9, 100)
	base := t0.UnixNano()
	// Eight hours of one request per second.
	for i := int64(0); i < 8*3600; i++ {
		tl.at(base+i*1e9).started++
	}
	require.LessOrEqual(t, len(tl.points), 100)
	var total int64
	for _, p := range tl.points {
		total += p.started
	}
	assert.EqualValues(t, 8*3600, total, "coarsening keeps every count")
	assert.Zero(t, tl.origin%tl.res, "points stay aligned")
	// A late span from before the origin is placed, not lost.
	tl.at(base-3600e9).started++
	total = 0
	for _, p := range tl.points {
		total += p.started
	}
	assert.EqualValues(t, 8*3600+1, total)
	assert.LessOrEqual(t, len(tl.points), 100)
}

func TestKnee(t *testing.T) {
	pts := func(lat ...float64) []LoadPoint {
		var out []LoadPoint
		for i, l := range lat {
			out = append(out, LoadPoint{OfferedRPS: float64(i+1) * 10, LatencyP95: l})
		}
		return out
	}
	assert.Equal(t, 5, knee(pts(0.30, 0.31, 0.32, 0.34, 0.36, 0.9, 2.5, 6.0)), "hockey stick: the level farthest below the chord, where latency leaves its floor")
	assert.Equal(t, -1, knee(pts(0.3, 0.3, 0.3, 0.3)), "flat: no knee")
	assert.Equal(t, -1, knee(pts(0.3, 0.6, 0.9, 1.2)), "linear: no knee")
	assert.Equal(t, -1, knee(pts(0.3, 0.5)), "two levels are not a sweep")
}

func TestNiceTicksCoverTheRange(t *testing.T) {
	for _, hi := range []float64{0.7, 1, 2.31, 63, 75.6, 1234} {
		ticks := niceTicks(0, hi, 5)
		assert.GreaterOrEqual(t, ticks[len(ticks)-1], hi, "the top tick bounds the data (%v)", hi)
		assert.LessOrEqual(t, len(ticks), 12)
	}
}

// TestLoadCurveNeedsSustainedLevels: a steady run whose per-second arrivals
// jitter is not a sweep; stepped arrivals without a stated target are.
func TestLoadCurveNeedsSustainedLevels(t *testing.T) {
	steady := ptrace.NewTraces()
	ss := steady.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	rng := rand.New(rand.NewPCG(1, 2))
	for sec := 0; sec < 60; sec++ {
		n := 40 + rng.IntN(25) // 40–64 per second
		for i := 0; i < n; i++ {
			at := time.Duration(sec)*time.Second + time.Duration(i)*time.Second/time.Duration(n)
			addReq(ss, req{at: at, dur: time.Second, ttft: time.Duration(100+rng.IntN(400)) * time.Millisecond, out: 20, target: "a", model: "m", scenario: "s"})
		}
	}
	st := newTestState(testConfig(t))
	st.consumeTraces(steady)
	assert.Nil(t, st.build(true).LoadCurve)

	td := sweepRun()
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		spans.At(i).Attributes().Remove("llm_loadgen.target_rate")
	}
	st = newTestState(testConfig(t))
	st.consumeTraces(td)
	lc := st.build(true).LoadCurve
	require.NotNil(t, lc)
	assert.Equal(t, "arrival_rate", lc.Basis)
	assert.Len(t, lc.Points, 4)
	require.NotNil(t, lc.Knee)
	assert.InDelta(t, 20, lc.Knee.OfferedRPS, 2)
}
