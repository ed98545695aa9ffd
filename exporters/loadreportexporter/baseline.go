package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// The baseline comparison (baseline.path) puts each headline metric of the
// run's total next to an earlier run's report.json and says whether it
// REGRESSED, IMPROVED or stayed the SAME. A change counts when it exceeds
// baseline.tolerance (relative), and never less than twice the sketches'
// relative accuracy for a percentile; rates (error and goodput ratios)
// compare by at least half a percentage point. A regression can decide the
// verdict (baseline.on_regression), so that exit.on_verdict makes a CI
// regression gate.

// Verdicts of the comparison.
const (
	BaselineRegressed = "REGRESSED"
	BaselineImproved  = "IMPROVED"
	BaselineSame      = "SAME"
)

// minRateChange is the least change of a ratio metric that counts.
const minRateChange = 0.005

// baselineMetric is one compared quantity of a row.
type baselineMetric struct {
	name         string
	get          func(*Row) (float64, bool)
	higherBetter bool
	ratio        bool // a rate in 0..1: compared by absolute change
}

func latencyQ(f func(*Row) *Latency, q func(*Latency) float64) func(*Row) (float64, bool) {
	return func(r *Row) (float64, bool) {
		if l := f(r); l != nil && l.Count > 0 {
			return q(l), true
		}
		return 0, false
	}
}

var (
	ttftOf = func(r *Row) *Latency { return r.TTFT }
	itlOf  = func(r *Row) *Latency { return r.ITL }
	tpotOf = func(r *Row) *Latency { return r.TPOT }
	e2eOf  = func(r *Row) *Latency { return r.E2E }
	p50    = func(l *Latency) float64 { return l.P50 }
	p95    = func(l *Latency) float64 { return l.P95 }
	p99    = func(l *Latency) float64 { return l.P99 }
)

var baselineMetrics = []baselineMetric{
	{name: "ttft_p50", get: latencyQ(ttftOf, p50)},
	{name: "ttft_p95", get: latencyQ(ttftOf, p95)},
	{name: "ttft_p99", get: latencyQ(ttftOf, p99)},
	{name: "itl_p95", get: latencyQ(itlOf, p95)},
	{name: "tpot_p95", get: latencyQ(tpotOf, p95)},
	{name: "e2e_p95", get: latencyQ(e2eOf, p95)},
	{name: "error_rate", get: func(r *Row) (float64, bool) { return r.ErrorRate, r.Requests > 0 }, ratio: true},
	{name: "goodput_ratio", get: func(r *Row) (float64, bool) { return r.GoodputRatio, r.Successes > 0 }, higherBetter: true, ratio: true},
	{name: "output_tokens_per_s", get: func(r *Row) (float64, bool) { return r.OutputTokenPS, r.OutputTokenPS > 0 }, higherBetter: true},
}

// loadBaseline reads an earlier report.json.
func loadBaseline(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline.path: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("baseline.path: %s is not a load_report report.json: %w", path, err)
	}
	if r.Total.Requests == 0 {
		return nil, fmt.Errorf("baseline.path: %s reports no requests", path)
	}
	return &r, nil
}

// compareBaseline compares cur's total with the baseline's.
func compareBaseline(base, cur *Report, cfg BaselineConfig, relAcc float64) *BaselineComparison {
	out := &BaselineComparison{Path: cfg.Path, RunID: base.RunID, GeneratedAt: base.GeneratedAt, Tolerance: cfg.Tolerance, Verdict: BaselineSame}
	for _, m := range baselineMetrics {
		b, okB := m.get(&base.Total)
		c, okC := m.get(&cur.Total)
		if !okB || !okC {
			continue
		}
		d := BaselineDelta{Metric: m.name, Baseline: round(b), Current: round(c), Verdict: BaselineSame}
		if b != 0 {
			rel := round((c - b) / b)
			d.Relative = &rel
		}
		worse, better := m.changed(b, c, cfg.Tolerance, relAcc)
		switch {
		case worse:
			d.Verdict, out.Verdict = BaselineRegressed, BaselineRegressed
			out.Regressed = append(out.Regressed, m.name)
		case better:
			d.Verdict = BaselineImproved
			if out.Verdict == BaselineSame {
				out.Verdict = BaselineImproved
			}
		}
		out.Metrics = append(out.Metrics, d)
	}
	return out
}

// changed reports whether c is worse or better than b by more than the
// tolerance.
func (m baselineMetric) changed(b, c, tol, relAcc float64) (worse, better bool) {
	var up bool
	if m.ratio {
		t := max(minRateChange, tol*b)
		if math.Abs(c-b) <= t {
			return false, false
		}
		up = c > b
	} else {
		t := max(tol, 2*relAcc) * math.Abs(b)
		if math.Abs(c-b) <= t || b == 0 && c == 0 {
			return false, false
		}
		up = c > b
	}
	if m.higherBetter {
		return !up, up
	}
	return up, !up
}

// applyBaseline compares r with the baseline and lets a regression set the
// verdict as baseline.on_regression says.
func (s *state) applyBaseline(r *Report) {
	if s.baseline == nil {
		return
	}
	r.Baseline = compareBaseline(s.baseline, r, s.cfg.Baseline, s.cfg.Limits.RelativeAccuracy)
	if r.Baseline.Verdict != BaselineRegressed {
		return
	}
	switch s.cfg.Baseline.OnRegression {
	case "fail":
		r.Verdict = VerdictFail
	case "warn":
		if r.Verdict == VerdictPass || r.Verdict == VerdictNoData {
			r.Verdict = VerdictWarn
		}
	}
	r.Total.Verdict = r.Verdict
}

// describe is the comparison in one line.
func (c *BaselineComparison) describe() string {
	var parts []string
	for _, d := range c.Metrics {
		if d.Verdict == BaselineSame || d.Relative == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %+.0f %%", d.Metric, 100**d.Relative))
	}
	if len(parts) == 0 {
		return c.Verdict + " against " + c.Path
	}
	return c.Verdict + " against " + c.Path + ": " + strings.Join(parts, ", ")
}
