package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// z99 is the standard normal quantile at 0.99: a log-normal with median m and
// 99th percentile q has sigma = ln(q/m) / z99.
var z99 = distuv.UnitNormal.Quantile(0.99)

// rand64 is the generator's random source: PCG (math/rand/v2), seeded, so
// that a seed reproduces a run.
type rand64 struct {
	*rand.Rand
	src rand.Source
}

func newRand(seed uint64) *rand64 {
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	return &rand64{Rand: rand.New(src), src: src}
}

// sampler draws from a configured Distribution with gonum's distuv types.
type sampler struct {
	dist interface{ Rand() float64 }
	// quantile is the distribution's inverse CDF, for tests and docs.
	quantile func(float64) float64
}

func (s sampler) sample() float64 {
	v := s.dist.Rand()
	if v < 0 {
		return 0
	}
	return v
}

type constDist float64

func (c constDist) Rand() float64 { return float64(c) }

// newSampler builds the sampler of d on src. d must have passed validation.
func newSampler(d Distribution, src rand.Source) sampler {
	switch d.Type {
	case distNormal:
		n := distuv.Normal{Mu: d.Mean, Sigma: d.StdDev, Src: src}
		return sampler{dist: n, quantile: n.Quantile}
	case distUniform:
		u := distuv.Uniform{Min: d.Min, Max: d.Max, Src: src}
		return sampler{dist: u, quantile: u.Quantile}
	case distExponential:
		e := distuv.Exponential{Rate: 1 / d.Mean, Src: src}
		return sampler{dist: e, quantile: e.Quantile}
	case distConstant:
		v := d.Value
		return sampler{dist: constDist(v), quantile: func(float64) float64 { return v }}
	default:
		mu, sigma := d.Mu, d.Sigma
		if d.P50 > 0 {
			mu = math.Log(d.P50)
			sigma = math.Log(d.P99/d.P50) / z99
		}
		ln := distuv.LogNormal{Mu: mu, Sigma: sigma, Src: src}
		return sampler{dist: ln, quantile: ln.Quantile}
	}
}

// tokens draws a token count (at least min).
func (s sampler) tokens(lo int) int {
	v := int(math.Round(s.sample()))
	if v < lo {
		return lo
	}
	return v
}
