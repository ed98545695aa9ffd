package loadgen

import (
	"math"
	"math/rand/v2"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"gonum.org/v1/gonum/stat/distuv"
)

// z99 is the standard normal quantile at 0.99: a log-normal with median m and
// 99th percentile q has sigma = ln(q/m) / z99.
var z99 = distuv.UnitNormal.Quantile(0.99)

// Rand64 is the generator's random source: PCG (math/rand/v2), seeded, so
// that a seed reproduces a run.
type Rand64 struct {
	*rand.Rand
	Source rand.Source
}

func NewRand(seed uint64) *Rand64 {
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	return &Rand64{Rand: rand.New(src), Source: src}
}

// Sampler draws from a configured Distribution with gonum's distuv types.
type Sampler struct {
	dist interface{ Rand() float64 }
	// quantile is the distribution's inverse CDF, for tests and docs.
	quantile func(float64) float64
}

func (s Sampler) Sample() float64 {
	v := s.dist.Rand()
	if v < 0 {
		return 0
	}
	return v
}

type constDist float64

func (c constDist) Rand() float64 { return float64(c) }

// NewSampler builds the sampler of d on src. d must have passed validation.
func NewSampler(d config.Distribution, src rand.Source) Sampler {
	switch d.Type {
	case config.DistNormal:
		n := distuv.Normal{Mu: d.Mean, Sigma: d.StdDev, Src: src}
		return Sampler{dist: n, quantile: n.Quantile}
	case config.DistUniform:
		u := distuv.Uniform{Min: d.Min, Max: d.Max, Src: src}
		return Sampler{dist: u, quantile: u.Quantile}
	case config.DistExponential:
		e := distuv.Exponential{Rate: 1 / d.Mean, Src: src}
		return Sampler{dist: e, quantile: e.Quantile}
	case config.DistConstant:
		v := d.Value
		return Sampler{dist: constDist(v), quantile: func(float64) float64 { return v }}
	default:
		mu, sigma := d.Mu, d.Sigma
		if d.P50 > 0 {
			mu = math.Log(d.P50)
			sigma = math.Log(d.P99/d.P50) / z99
		}
		ln := distuv.LogNormal{Mu: mu, Sigma: sigma, Src: src}
		return Sampler{dist: ln, quantile: ln.Quantile}
	}
}

// Tokens draws a token count (at least min).
func (s Sampler) Tokens(lo int) int {
	v := int(math.Round(s.Sample()))
	if v < lo {
		return lo
	}
	return v
}
