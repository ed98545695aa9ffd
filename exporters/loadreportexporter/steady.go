package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import "fmt"

// The steady state of a run with an in-flight bound (a closed loop's
// virtual users, or live.max_concurrency): the longest stretch of the
// timeline in which requests in flight stay at 95 % of the bound or more,
// as vllm-bench defines it. A run's start (ramping up to the bound) and end
// (draining) are not in it, so its percentiles are the server's under that
// load alone.

// steadyShare is the share of the bound that counts as steady.
const steadyShare = 0.95

// steadyState finds the window; nil when the spans carry no bound, and a
// report without a window when in-flight requests never reached it.
func (s *state) steadyState() *SteadyState {
	tl := s.timeline
	res := float64(tl.res) / 1e9
	capNow, peakCap, peakInFlight := 0.0, 0.0, 0.0
	bestFrom, bestTo, from := -1, -1, -1
	for i, p := range tl.points {
		if p.cap > 0 {
			capNow = p.cap // the bound holds until a request says otherwise
		}
		peakCap = max(peakCap, capNow)
		inFlight := p.busy / res
		peakInFlight = max(peakInFlight, inFlight)
		if capNow > 0 && inFlight >= steadyShare*capNow {
			if from < 0 {
				from = i
			}
			if bestFrom < 0 || i-from > bestTo-bestFrom {
				bestFrom, bestTo = from, i
			}
			continue
		}
		from = -1
	}
	if peakCap == 0 {
		return nil
	}
	out := &SteadyState{Cap: round(peakCap), Share: steadyShare, PeakInFlight: round(peakInFlight)}
	if bestFrom < 0 {
		out.Note = fmt.Sprintf("requests in flight never stayed at %.0f %% of the bound (peak %.3g of %.3g): no steady state", steadyShare*100, peakInFlight, peakCap)
		return out
	}
	ttft, e2e := s.timelineSpec.newSketch(), s.timelineSpec.newSketch()
	for _, p := range tl.points[bestFrom : bestTo+1] {
		out.Requests += p.started
		if p.ttft != nil {
			ttft.merge(p.ttft)
		}
		if p.e2e != nil {
			e2e.merge(p.e2e)
		}
	}
	out.StartS, out.EndS = ptr(float64(bestFrom)*res), ptr(float64(bestTo+1)*res)
	out.TTFT, out.E2E = latencyOf(ttft), latencyOf(e2e)
	return out
}
