package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// The workload breakdown splits the TTFT of successful requests by what
// llm_loadgen's live workloads record on their spans: the turn of a
// multi-turn session (turn 2 on is where a prefix cache shows), and the
// share of the prompt a cache could serve (a session's history, a
// shared-prefix group's system prompt). Spans without these attributes
// take no part.

// maxTurnRows bounds the turn rows; later turns share the last one.
const maxTurnRows = 32

// shareBounds are the upper bounds of the cacheable-share rows.
var shareBounds = []float64{0, 0.25, 0.5, 0.75, 1}

var shareLabels = []string{"0 %", "0–25 %", "25–50 %", "50–75 %", "75–100 %"}

type workloadState struct {
	byTurn  map[int]*sketch
	byShare []*sketch // one per shareBounds entry, allocated on first use
}

// add files a successful request's TTFT (seconds) under its turn and its
// cacheable share of input tokens (in ≤ 0: unknown).
func (w *workloadState) add(spec sketchSpec, attrs pcommon.Map, ttft float64, in int64) {
	if turn, ok := intAttr(attrs, genai.AttrLoadgenSessionTurn); ok && turn > 0 {
		t := int(min(turn, maxTurnRows))
		if w.byTurn == nil {
			w.byTurn = map[int]*sketch{}
		}
		if w.byTurn[t] == nil {
			w.byTurn[t] = spec.newSketch()
		}
		w.byTurn[t].add(ttft)
	}
	cacheable, ok := intAttr(attrs, genai.AttrLoadgenCacheableTokens, genai.AttrLoadgenHistoryTokens)
	if !ok || in <= 0 || cacheable < 0 {
		return
	}
	share := min(float64(cacheable)/float64(in), 1)
	i := 0
	for i < len(shareBounds)-1 && share > shareBounds[i] {
		i++
	}
	if w.byShare == nil {
		w.byShare = make([]*sketch, len(shareBounds))
	}
	if w.byShare[i] == nil {
		w.byShare[i] = spec.newSketch()
	}
	w.byShare[i].add(ttft)
}

// report is the breakdown's section of the report, nil when no span had
// the attributes.
func (w *workloadState) report() *WorkloadBreakdown {
	if len(w.byTurn) == 0 && w.byShare == nil {
		return nil
	}
	out := &WorkloadBreakdown{}
	for t := 1; t <= maxTurnRows; t++ {
		if sk := w.byTurn[t]; sk != nil {
			label := strconv.Itoa(t)
			if t == maxTurnRows {
				label += "+"
			}
			out.ByTurn = append(out.ByTurn, BreakdownRow{Label: label, TTFT: latencyOf(sk)})
		}
	}
	for i, sk := range w.byShare {
		if sk != nil {
			out.ByCacheableShare = append(out.ByCacheableShare, BreakdownRow{Label: shareLabels[i], TTFT: latencyOf(sk)})
		}
	}
	return out
}
