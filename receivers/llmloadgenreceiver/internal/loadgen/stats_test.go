package loadgen

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func draw(s Sampler, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = s.Sample()
	}
	sort.Float64s(out)
	return out
}

// TestSamplersMatchParameters draws from each distribution type and checks
// the sample against the configured parameters.
func TestSamplersMatchParameters(t *testing.T) {
	r := NewRand(1)
	const n = 50000

	ln := draw(NewSampler(config.Distribution{P50: 0.3, P99: 2.5}, r.Source), n)
	assert.InEpsilon(t, 0.3, stat.Quantile(0.5, stat.Empirical, ln, nil), 0.03, "lognormal p50")
	assert.InEpsilon(t, 2.5, stat.Quantile(0.99, stat.Empirical, ln, nil), 0.08, "lognormal p99")

	mu, sigma := math.Log(200), 0.8
	ex := draw(NewSampler(config.Distribution{Mu: mu, Sigma: sigma}, r.Source), n)
	assert.InEpsilon(t, math.Exp(mu+sigma*sigma/2), stat.Mean(ex, nil), 0.03, "explicit lognormal mean")

	no := draw(NewSampler(config.Distribution{Type: config.DistNormal, Mean: 500, StdDev: 50}, r.Source), n)
	m, sd := stat.MeanStdDev(no, nil)
	assert.InEpsilon(t, 500, m, 0.01)
	assert.InEpsilon(t, 50, sd, 0.03)

	un := draw(NewSampler(config.Distribution{Type: config.DistUniform, Min: 10, Max: 20}, r.Source), n)
	assert.GreaterOrEqual(t, un[0], 10.0)
	assert.Less(t, un[n-1], 20.0)
	assert.InEpsilon(t, 15, stat.Mean(un, nil), 0.01)

	e := draw(NewSampler(config.Distribution{Type: config.DistExponential, Mean: 4}, r.Source), n)
	assert.InEpsilon(t, 4, stat.Mean(e, nil), 0.03)

	c := NewSampler(config.Distribution{Type: config.DistConstant, Value: 7}, r.Source)
	assert.Equal(t, 7.0, c.Sample())
}

// TestPoissonArrivalsGoodnessOfFit counts arrivals per 1 s window and
// compares the histogram of counts with the Poisson law by a chi-square test.
func TestPoissonArrivalsGoodnessOfFit(t *testing.T) {
	const rate, windows = 20.0, 4000
	o := NewOpenLoop(config.ArrivalConfig{Type: config.ArrivalPoisson, Rate: rate}, NewRand(7))
	counts := make([]int, windows)
	for {
		at := o.Next()
		if at >= windows {
			break
		}
		counts[int(at)]++
	}
	// Bins 0..maxK, the last one open-ended; merge tails with expected < 5.
	pois := distuv.Poisson{Lambda: rate}
	lo, hi := 10, 31
	observed := make([]float64, hi-lo+1)
	expected := make([]float64, hi-lo+1)
	for _, c := range counts {
		observed[min(max(c, lo), hi)-lo]++
	}
	for k := range expected {
		switch k + lo {
		case lo:
			expected[k] = pois.CDF(float64(lo)) * windows
		case hi:
			expected[k] = (1 - pois.CDF(float64(hi-1))) * windows
		default:
			expected[k] = pois.Prob(float64(k+lo)) * windows
		}
		require.Greater(t, expected[k], 5.0, "bin %d", k+lo)
	}
	chi2 := stat.ChiSquare(observed, expected)
	p := 1 - distuv.ChiSquared{K: float64(len(observed) - 1)}.CDF(chi2)
	t.Logf("chi2=%.2f dof=%d p=%.3f", chi2, len(observed)-1, p)
	assert.Greater(t, p, 0.01, "Poisson goodness of fit rejected")

	// Inter-arrival times are exponential: coefficient of variation 1.
	o = NewOpenLoop(config.ArrivalConfig{Type: config.ArrivalPoisson, Rate: rate}, NewRand(8))
	gaps := interArrivals(o, 50000)
	m, sd := stat.MeanStdDev(gaps, nil)
	assert.InEpsilon(t, 1/rate, m, 0.02)
	assert.InEpsilon(t, 1.0, sd/m, 0.03)
}

func interArrivals(o *OpenLoop, n int) []float64 {
	gaps := make([]float64, n)
	prev := 0.0
	for i := range gaps {
		at := o.Next()
		gaps[i] = at - prev
		prev = at
	}
	return gaps
}

// TestGammaBurstiness checks the coefficient of variation of gamma
// inter-arrivals, 1/sqrt(burstiness), and constant arrivals' exact spacing.
func TestGammaBurstiness(t *testing.T) {
	for _, b := range []float64{0.25, 1, 4} {
		gaps := interArrivals(NewOpenLoop(config.ArrivalConfig{Type: config.ArrivalGamma, Rate: 10, Burstiness: b}, NewRand(3)), 50000)
		m, sd := stat.MeanStdDev(gaps, nil)
		assert.InEpsilon(t, 0.1, m, 0.03, "burstiness %v mean", b)
		assert.InEpsilon(t, 1/math.Sqrt(b), sd/m, 0.05, "burstiness %v CV", b)
	}
	gaps := interArrivals(NewOpenLoop(config.ArrivalConfig{Type: config.ArrivalConstant, Rate: 8}, NewRand(3)), 100)
	for _, g := range gaps {
		assert.InDelta(t, 0.125, g, 1e-9)
	}
}

// TestStagesRamp checks that arrivals follow linear ramps: 0 → 100 req/s
// over 10 s gives 500 requests, then a 10 s hold gives 1000 more, then a ramp
// down to 0 gives 500 and arrivals stop.
func TestStagesRamp(t *testing.T) {
	a := config.ArrivalConfig{Type: config.ArrivalConstant, Rate: 0, Stages: []config.StageConfig{
		{Duration: 10 * time.Second, Target: 100},
		{Duration: 10 * time.Second, Target: 100},
		{Duration: 10 * time.Second, Target: 0},
	}}
	o := NewOpenLoop(a, NewRand(1))
	var perStage [3]int
	for {
		at := o.Next()
		if math.IsInf(at, 1) {
			break
		}
		require.Less(t, at, 30.0)
		perStage[int(at/10)]++
	}
	assert.InDelta(t, 500, perStage[0], 1)
	assert.InDelta(t, 1000, perStage[1], 1)
	assert.InDelta(t, 500, perStage[2], 1)

	p := NewProfile(a)
	assert.InDelta(t, 50, p.At(5), 1e-9)
	assert.InDelta(t, 100, p.At(15), 1e-9)
	assert.InDelta(t, 25, p.At(27.5), 1e-9)
}

// TestRateAccuracy: a 10 000 req/s target over a simulated minute is met
// within ±1 % for the open-loop processes.
func TestRateAccuracy(t *testing.T) {
	for _, typ := range []string{config.ArrivalConstant, config.ArrivalPoisson, config.ArrivalGamma} {
		n := countArrivals(config.ArrivalConfig{Type: typ, Rate: 10000, Burstiness: 0.5}, 60, 11)
		assert.InEpsilon(t, 600000, n, 0.01, typ)
	}
}

func countArrivals(a config.ArrivalConfig, seconds float64, seed uint64) float64 {
	o := NewOpenLoop(a, NewRand(seed))
	n := 0
	for o.Next() < seconds {
		n++
	}
	return float64(n)
}

// TestClosedLoopConcurrency: N users with requests of fixed duration D and
// no think time issue N/D requests per second; with think time T, N/(D+T).
func TestClosedLoopConcurrency(t *testing.T) {
	for _, tc := range []struct {
		think time.Duration
		want  float64
	}{{0, 10 * 60 / 0.5}, {500 * time.Millisecond, 10 * 60 / 1.0}} {
		c := NewClosedLoop(config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: 10, ThinkTime: tc.think}, NewRand(5))
		n := 0
		for {
			at := c.Next()
			if at >= 60 {
				break
			}
			n++
			c.Done(at + 0.5)
		}
		assert.InEpsilon(t, tc.want, float64(n), 0.03, "think %v", tc.think)
	}
}
