package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"math"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
)

// Summary is the part of the report a person reads first.
type Summary struct {
	Verdict string `json:"verdict"`
	// DecidedBy is the SLO that decided the verdict: of the SLOs with the
	// overall verdict, the one closest to (or farthest past) its threshold.
	DecidedBy string `json:"decided_by,omitempty"`
	// Reason says why, with the value and the objective in units.
	Reason string `json:"reason"`
	// KeyMetric and KeyValue are the one number to look at: the latency
	// percentile of the deciding SLO, else TTFT p95, else E2E p95.
	KeyMetric string `json:"key_metric,omitempty"`
	KeyValue  string `json:"key_value,omitempty"`
	// Headline is one sentence with the run's size and rate.
	Headline string `json:"headline"`
	// Notes are further facts worth a look: the knee, errors, SLOs not
	// evaluated, an interim report.
	Notes []string `json:"notes,omitempty"`
	// ClientBound is set when the load generator's own delay was large
	// (clientBound): its numbers stay true (kernel timestamps keep the
	// delay out of them) but it could not keep its schedule; add cores or
	// shards.
	ClientBound bool `json:"client_bound,omitempty"`
}

// Client-bound thresholds: the generator's delay at the first token, at
// p99, of at least clientBoundDelay or clientBoundShare of the TTFT p50; or
// its process using clientBoundCPU of its CPUs or more for the median
// request.
const (
	clientBoundDelay = 0.005
	clientBoundShare = 0.1
	clientBoundCPU   = 0.9
)

// clientBound tells whether row r's client delay or the generator's CPU
// says the generator was the bottleneck.
func clientBound(r Row) bool {
	return delayBound(r) || cpuBound(r)
}

func delayBound(r Row) bool {
	cd := r.ClientDelay
	if cd == nil {
		return false
	}
	return cd.P99 >= clientBoundDelay || (r.TTFT != nil && cd.P99 >= clientBoundShare*r.TTFT.P50)
}

func cpuBound(r Row) bool { return r.GeneratorCPU != nil && r.GeneratorCPU.P50 >= clientBoundCPU }

// pressure is how close value v is to c's PASS boundary: below 1 inside
// it, above 1 past it.
func pressure(c *SLOConfig, v float64) float64 {
	if c.Quantity == QuantityGoodputRatio {
		t := firstNonNil(c.PassAtOrAbove, c.FailBelow)
		if t == nil || v <= 0 {
			return math.Inf(1)
		}
		return *t / v
	}
	t := firstNonNil(c.PassBelow, c.FailAbove, c.FailAtOrAbove)
	if t == nil || *t <= 0 {
		return v
	}
	return v / *t
}

// decidingSLO returns the SLO result that decided the verdict, or nil when
// no SLO could be measured.
func decidingSLO(r *Report) *SLOResult {
	var best *SLOResult
	bestP := math.Inf(-1)
	for i := range r.SLOs {
		s := &r.SLOs[i]
		if s.Value == nil || s.Verdict != r.Verdict || s.cfg == nil {
			continue
		}
		if p := pressure(s.cfg, *s.Value); p > bestP {
			best, bestP = s, p
		}
	}
	return best
}

func sloLabel(s SLOResult) string {
	switch {
	case s.Percentile == 100:
		return s.Quantity + " max"
	case s.Percentile != 0:
		return s.Quantity + " p" + fmtNum(s.Percentile)
	}
	return s.Quantity
}

func summarize(r *Report) Summary {
	sum := Summary{Verdict: r.Verdict}
	sum.decide(r)
	t := r.Total
	sum.Headline = fmt.Sprintf("%s requests over %s at %s req/s (%s output tokens/s), error rate %s",
		humanfmt.Int(t.Requests), humanfmt.Seconds(r.Run.DurationS), humanfmt.Sig(t.RequestRate), humanfmt.Sig(t.OutputTokenPS), humanfmt.Percent(t.ErrorRate))
	sum.Notes = summaryNotes(r)
	sum.ClientBound = clientBound(t)
	return sum
}

// decide says what decided the verdict (the baseline, an SLO, or no data)
// and why, and picks the key metric: the deciding SLO's latency, else the
// TTFT or E2E p95.
func (sum *Summary) decide(r *Report) {
	if b := r.Baseline; b != nil && b.Verdict == BaselineRegressed && r.Verdict != VerdictPass && decidingSLO(r) == nil {
		sum.DecidedBy = "baseline"
		sum.Reason = "regressed against the baseline (" + strings.Join(b.Regressed, ", ") + ")"
	} else if d := decidingSLO(r); d != nil {
		sum.DecidedBy = d.Name
		sum.Reason = fmt.Sprintf("%s is %s (%s)", d.Name, fmtSLOValue(d.Unit, *d.Value), d.Objective)
		if d.Unit == "s" {
			sum.KeyMetric, sum.KeyValue = strings.ToUpper(d.Quantity)+strings.TrimPrefix(sloLabel(*d), d.Quantity), fmtSLOValue(d.Unit, *d.Value)
		}
	} else {
		sum.Reason = "no SLO could be measured; the verdict follows exit.no_data"
	}
	if sum.KeyMetric == "" {
		switch {
		case r.Total.TTFT != nil:
			sum.KeyMetric, sum.KeyValue = "TTFT p95", humanfmt.Seconds(r.Total.TTFT.P95)
		case r.Total.E2E != nil:
			sum.KeyMetric, sum.KeyValue = "E2E p95", humanfmt.Seconds(r.Total.E2E.P95)
		}
	}
}

// summaryNotes are the summary's notes: the knee, the errors by type, the
// SLOs not evaluated, the baseline and whether the report is interim.
func summaryNotes(r *Report) []string {
	var notes []string
	t := r.Total
	if lc := r.LoadCurve; lc != nil && lc.Knee != nil {
		notes = append(notes, fmt.Sprintf("%s p95 bends upwards at %s req/s offered (knee; %s there)",
			strings.ToUpper(lc.Knee.Latency), humanfmt.Sig(lc.Knee.OfferedRPS), humanfmt.Seconds(lc.Knee.LatencyP95)))
	}
	if len(t.ErrorsByType) > 0 {
		parts := make([]string, 0, len(t.ErrorsByType))
		for _, e := range t.ErrorsByType {
			parts = append(parts, fmt.Sprintf("%s %s", e.Type, humanfmt.Int(e.Count)))
		}
		notes = append(notes, "errors by type: "+strings.Join(parts, ", "))
	}
	for _, name := range r.SLOsNotEvaluated {
		notes = append(notes, name+" not evaluated: this pipeline has no span_guard data")
	}
	if delayBound(t) {
		notes = append(notes, fmt.Sprintf("client-bound: the load generator saw the first token %s after the kernel received it (p99); TTFT and ITL exclude that delay, but the generator could not keep up: give it more cores or shards",
			humanfmt.Seconds(t.ClientDelay.P99)))
	}
	if cpuBound(t) {
		notes = append(notes, fmt.Sprintf("client-bound: the load generator's process used %s of its CPUs (median over requests); its own delays are in every number it measured without kernel timestamps: give it more cores or shards",
			humanfmt.Percent(t.GeneratorCPU.P50)))
	}
	if r.Baseline != nil {
		notes = append(notes, "baseline: "+r.Baseline.describe())
	}
	if !r.Final {
		notes = append(notes, "interim report: the run is still going")
	}
	return notes
}
