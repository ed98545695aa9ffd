package servermetrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fit is a least-squares line y = a + b·x with the half-width of b's
// two-sided confidence interval (Student's t, n−2 degrees of freedom).
type Fit struct {
	Slope, Margin float64
	N             int
}

// FitSlope fits the line through (xs[i], ys[i]); false with fewer than four
// points or all xs equal.
func FitSlope(xs, ys []float64, confidence float64) (Fit, bool) {
	n := len(xs)
	if n < 4 || len(ys) != n {
		return Fit{}, false
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/float64(n), sy/float64(n)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return Fit{}, false
	}
	b := sxy / sxx
	var sse float64
	for i := range xs {
		r := ys[i] - (my + b*(xs[i]-mx))
		sse += r * r
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(1 - (1-confidence)/2)
	return Fit{Slope: b, Margin: t * se, N: n}, true
}

// Rising reports whether the slope is above zero beyond its margin and the
// line rises by at least minRise over span.
func (f Fit) Rising(span, minRise float64) bool {
	return f.Slope-f.Margin > 0 && f.Slope*span >= minRise
}
