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
	w := s.timeline.steadyWindow()
	if w.peakCap == 0 {
		return nil
	}
	out := &SteadyState{Cap: round(w.peakCap), Share: steadyShare, PeakInFlight: round(w.peakInFlight)}
	if w.from < 0 {
		out.Note = fmt.Sprintf("requests in flight never stayed at %.0f %% of the bound (peak %.3g of %.3g): no steady state", steadyShare*100, w.peakInFlight, w.peakCap)
		return out
	}
	s.summarizeSteady(out, w)
	return out
}

// steadyWindowOf is the longest steady stretch of a timeline, as point
// indexes from..to (from < 0 when there is none), with the peak bound and
// the peak requests in flight over the whole run.
type steadyWindowOf struct {
	from, to              int
	peakCap, peakInFlight float64
}

// steadyWindow scans the timeline for the longest stretch in which
// requests in flight stay at steadyShare of the bound or more.
func (tl *timeline) steadyWindow() steadyWindowOf {
	res := float64(tl.res) / 1e9
	w := steadyWindowOf{from: -1, to: -1}
	capNow, from := 0.0, -1
	for i, p := range tl.points {
		if p.cap > 0 {
			capNow = p.cap // the bound holds until a request says otherwise
		}
		w.peakCap = max(w.peakCap, capNow)
		inFlight := p.busy / res
		w.peakInFlight = max(w.peakInFlight, inFlight)
		if capNow > 0 && inFlight >= steadyShare*capNow {
			if from < 0 {
				from = i
			}
			if w.from < 0 || i-from > w.to-w.from {
				w.from, w.to = from, i
			}
			continue
		}
		from = -1
	}
	return w
}

// summarizeSteady fills out's request count, bounds and latency
// percentiles from the timeline points inside the window.
func (s *state) summarizeSteady(out *SteadyState, w steadyWindowOf) {
	tl := s.timeline
	res := float64(tl.res) / 1e9
	ttft, e2e := s.timelineSpec.newSketch(), s.timelineSpec.newSketch()
	for _, p := range tl.points[w.from : w.to+1] {
		out.Requests += p.started
		if p.ttft != nil {
			ttft.merge(p.ttft)
		}
		if p.e2e != nil {
			e2e.merge(p.e2e)
		}
	}
	out.StartS, out.EndS = ptr(float64(w.from)*res), ptr(float64(w.to+1)*res)
	out.TTFT, out.E2E = latencyOf(ttft), latencyOf(e2e)
}
