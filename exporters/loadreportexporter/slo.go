package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
)

var verdictRank = map[string]int{VerdictPass: 0, VerdictNoData: 1, VerdictWarn: 2, VerdictFail: 3}

// worse reports whether verdict a is worse than b.
func worse(a, b string) bool { return verdictRank[a] > verdictRank[b] }

// atLeast reports whether verdict v reaches the exit level ("warn" or "fail").
func atLeast(v, level string) bool {
	switch level {
	case "warn":
		return v == VerdictWarn || v == VerdictFail
	case "fail":
		return v == VerdictFail
	}
	return false
}

// measure returns the SLO quantity of a row (nil when it cannot be measured).
func measure(c SLOConfig, row *Row, loss *SpanLoss) *float64 {
	switch c.Quantity {
	case QuantityTTFT:
		return percentileOf(row.TTFT, c.Percentile)
	case QuantityITL:
		return percentileOf(row.ITL, c.Percentile)
	case QuantityTPOT:
		return percentileOf(row.TPOT, c.Percentile)
	case QuantityE2E:
		return percentileOf(row.E2E, c.Percentile)
	case QuantityErrorRate:
		return perRequest(row, row.ErrorRate)
	case QuantityCancelledRate:
		return perRequest(row, row.CancelledRate)
	case QuantityGoodputRatio:
		return perRequest(row, row.GoodputRatio)
	case QuantitySpanLoss:
		if loss == nil || loss.Received == 0 {
			return nil
		}
		v := loss.Ratio
		return &v
	}
	return nil
}

// percentileOf is percentile p (50, 90, 95, 99 or 100 for the maximum) of
// a latency; nil when nothing was measured.
func percentileOf(l *Latency, p float64) *float64 {
	if l == nil || l.Count == 0 {
		return nil
	}
	v := map[float64]float64{50: l.P50, 90: l.P90, 95: l.P95, 99: l.P99, 100: l.Max}[p]
	return &v
}

// perRequest is a share of the row's requests; nil when it had none.
func perRequest(row *Row, v float64) *float64 {
	if row.Requests == 0 {
		return nil
	}
	return &v
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// sloUnit is the unit of an SLO's value: seconds for latencies, else a ratio.
func sloUnit(c SLOConfig) string {
	if slices.Contains(latencyQuantities, c.Quantity) {
		return "s"
	}
	return "ratio"
}

// fmtSLOValue renders an SLO value for people: "612 ms", "0.310 %".
func fmtSLOValue(unit string, v float64) string {
	if unit == "s" {
		return humanfmt.Seconds(v)
	}
	return humanfmt.Percent(v)
}

// objective renders the thresholds with units, e.g. "PASS < 2.10 s; FAIL > 3.80 s".
func objective(c SLOConfig) string {
	unit := sloUnit(c)
	var parts []string
	for _, t := range []struct {
		label string
		p     *float64
	}{{"PASS < ", c.PassBelow}, {"PASS ≥ ", c.PassAtOrAbove}, {"FAIL > ", c.FailAbove}, {"FAIL ≥ ", c.FailAtOrAbove}, {"FAIL < ", c.FailBelow}} {
		if t.p != nil {
			parts = append(parts, t.label+fmtSLOValue(unit, *t.p))
		}
	}
	return strings.Join(parts, "; ")
}

// judge applies the thresholds to v.
func judge(c SLOConfig, v float64) string {
	if c.Quantity == QuantityGoodputRatio {
		switch {
		case c.FailBelow != nil && v < *c.FailBelow:
			return VerdictFail
		case c.PassAtOrAbove == nil || v >= *c.PassAtOrAbove:
			return VerdictPass
		}
		return VerdictWarn
	}
	switch {
	case c.FailAbove != nil && v > *c.FailAbove:
		return VerdictFail
	case c.FailAtOrAbove != nil && v >= *c.FailAtOrAbove:
		return VerdictFail
	case c.PassBelow == nil || v < *c.PassBelow:
		return VerdictPass
	}
	return VerdictWarn
}

// evaluateSLOs judges each SLO on row. An SLO on a signal the pipeline does
// not have at all (span_loss without any span_guard data) is not evaluated:
// its name is returned in skipped instead of a NO_DATA row.
func evaluateSLOs(slos []SLOConfig, row *Row, loss *SpanLoss) (out []SLOResult, skipped []string) {
	out = make([]SLOResult, 0, len(slos))
	for i, c := range slos {
		if c.Quantity == QuantitySpanLoss && loss == nil {
			skipped = append(skipped, c.Name)
			continue
		}
		res := SLOResult{Name: c.Name, Quantity: c.Quantity, Percentile: c.Percentile, Objective: objective(c), Unit: sloUnit(c), cfg: &slos[i]}
		if v := measure(c, row, loss); v != nil {
			res.Value = ptr(*v)
			res.Verdict = judge(c, *v)
		} else {
			res.Verdict = VerdictNoData
		}
		out = append(out, res)
	}
	return out, skipped
}

// overall is the worst verdict among the SLOs that could be measured; when
// none could, it is NO_DATA mapped by exit.no_data (fail → FAIL, pass → PASS).
func overall(results []SLOResult, noData string) string {
	v := ""
	for _, r := range results {
		if r.Verdict == VerdictNoData {
			continue
		}
		if v == "" || worse(r.Verdict, v) {
			v = r.Verdict
		}
	}
	if v != "" {
		return v
	}
	if noData == "pass" {
		return VerdictPass
	}
	return VerdictFail
}

// loadCurve groups timeline points by offered load (the target rate when
// the generator states it, else the arrival rate of sustained levels) and
// finds the knee: the
// level after which latency grows fastest (the point farthest below the
// chord of the normalized latency-vs-load curve, as in Kneedle). It needs
// three or more levels (a sweep or stepped stages).
func (s *state) loadCurve() *LoadCurve {
	res := float64(s.timeline.res) / 1e9
	basis, useTTFT := s.timeline.curveBasis()
	levels := s.loadLevels(basis, useTTFT, res)
	if basis == "arrival_rate" && !sustainedSweep(levels) {
		return nil
	}
	if len(levels) < 3 {
		return nil
	}
	name := "e2e"
	if useTTFT {
		name = "ttft"
	}
	curve := &LoadCurve{Basis: basis}
	for _, lv := range levels {
		curve.Points = append(curve.Points, LoadPoint{
			OfferedRPS: round(lv.offered / float64(lv.n)), AchievedRPS: round(float64(lv.completed) / (res * float64(lv.n))),
			Requests: lv.started, LatencyP95: round(lv.lat.quantile(0.95)), Latency: name,
		})
	}
	sort.Slice(curve.Points, func(i, j int) bool { return curve.Points[i].OfferedRPS < curve.Points[j].OfferedRPS })
	if k := knee(curve.Points); k >= 0 {
		kp := curve.Points[k]
		curve.Knee = &kp
	}
	return curve
}

// curveBasis says what measures offered load ("target_rate" when any point
// states one, else "arrival_rate") and whether latency is the TTFT (when any
// point has one) rather than the duration.
func (tl *timeline) curveBasis() (basis string, useTTFT bool) {
	basis = "arrival_rate"
	for _, p := range tl.points {
		if p.targetRate > 0 {
			basis = "target_rate"
			break
		}
	}
	for _, p := range tl.points {
		if p.ttft != nil && p.ttft.count > 0 {
			useTTFT = true
			break
		}
	}
	return basis, useTTFT
}

// loadLevel is the timeline points of one offered load.
type loadLevel struct {
	offered   float64 // sum over the points
	started   int64
	completed int64
	n         int // points
	lat       *sketch
}

// loadLevels groups the timeline points (of res seconds each) that carry a
// latency by offered load: the target rate, or the arrival rate by basis.
// The latency is the TTFT when useTTFT, else the duration.
func (s *state) loadLevels(basis string, useTTFT bool, res float64) map[string]*loadLevel {
	levels := map[string]*loadLevel{}
	for _, p := range s.timeline.points {
		offered := p.targetRate
		if basis == "arrival_rate" {
			offered = float64(p.started) / res
		}
		lat := p.e2e
		if useTTFT {
			lat = p.ttft
		}
		if offered <= 0 || lat == nil || lat.count == 0 {
			continue
		}
		// Stated target rates are exact levels; measured arrival rates are
		// noisy and are grouped in 20 %-wide logarithmic bins.
		key := strconv.FormatFloat(offered, 'g', 2, 64)
		if basis == "arrival_rate" {
			key = strconv.Itoa(int(math.Round(math.Log(offered) / math.Log(1.2))))
		}
		lv, ok := levels[key]
		if !ok {
			lv = &loadLevel{lat: s.timelineSpec.newSketch()}
			levels[key] = lv
		}
		lv.offered += offered
		lv.n++
		lv.started += p.started
		lv.completed += p.completed
		lv.lat.merge(lat)
	}
	return levels
}

// sustainedSweep drops the arrival-rate levels too brief to count and
// reports whether those left span a real range. Without a stated target,
// only sustained levels over a real range (at least 2×) make a sweep; the
// second-to-second noise of a steady run does not.
func sustainedSweep(levels map[string]*loadLevel) bool {
	total := 0
	for _, lv := range levels {
		total += lv.n
	}
	minPts := max(3, int(math.Ceil(0.05*float64(total))))
	lo, hi := math.Inf(1), 0.0
	for k, lv := range levels {
		if lv.n < minPts {
			delete(levels, k)
			continue
		}
		lo, hi = math.Min(lo, lv.offered/float64(lv.n)), math.Max(hi, lv.offered/float64(lv.n))
	}
	return !(hi < 2*lo)
}

// knee returns the index of the knee of an increasing latency curve, or -1.
func knee(pts []LoadPoint) int {
	n := len(pts)
	if n < 3 {
		return -1
	}
	x0, x1 := pts[0].OfferedRPS, pts[n-1].OfferedRPS
	y0, y1 := pts[0].LatencyP95, pts[n-1].LatencyP95
	if x1 <= x0 || y1 <= y0 {
		return -1 // latency does not grow with load: no knee
	}
	best, bestD := -1, 0.0
	for i := 1; i < n-1; i++ {
		x := (pts[i].OfferedRPS - x0) / (x1 - x0)
		y := (pts[i].LatencyP95 - y0) / (y1 - y0)
		// A convex (hockey-stick) curve lies below the chord y = x.
		if d := x - y; d > bestD {
			best, bestD = i, d
		}
	}
	if bestD < 0.05 || math.IsNaN(bestD) {
		return -1
	}
	return best
}

// describe is a one-line summary for logs.
func (r *Report) describe() string {
	parts := make([]string, 0, len(r.SLOs))
	for _, s := range r.SLOs {
		v := "n/a"
		if s.Value != nil {
			v = fmtNum(*s.Value)
		}
		parts = append(parts, fmt.Sprintf("%s=%s %s", s.Name, v, s.Verdict))
	}
	return fmt.Sprintf("verdict %s over %d requests (%s)", r.Verdict, r.Total.Requests, strings.Join(parts, ", "))
}
