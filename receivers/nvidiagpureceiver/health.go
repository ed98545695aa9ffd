package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"sort"
)

// The readings that tell whether a GPU is healthy: active clock-event
// (throttle) reasons, remapped memory rows, the events the event goroutine
// counted, and the health state derived from them.

// clockEventReasons emits one 0/1 point per clock-event reason.
func (r *gpuRead) clockEventReasons() {
	if !r.b.on(mClockEventReason) || !r.can("GetCurrentClocksEventReasons") {
		return
	}
	mask, ret := r.g.dev.GetCurrentClocksEventReasons()
	if !r.ok("GetCurrentClocksEventReasons", ret) {
		return
	}
	for _, reason := range clockEventReasons {
		var v int64
		if mask&reason.bit != 0 {
			v = 1
		}
		r.b.int(mClockEventReason, v, "nvidia.gpu.clock.event_reason", reason.name)
	}
}

// remappedRows reads the remapped-row counters and keeps the pending and
// failed flags for the health state.
func (r *gpuRead) remappedRows() {
	if !(r.b.on(mRemappedRows) || r.b.on(mStatus)) || !r.can("GetRemappedRows") {
		return
	}
	if corr, unc, pending, failed, ret := r.g.dev.GetRemappedRows(); r.ok("GetRemappedRows", ret) {
		r.b.int(mRemappedRows, int64(corr), "nvidia.gpu.memory.remap_cause", "correctable")
		r.b.int(mRemappedRows, int64(unc), "nvidia.gpu.memory.remap_cause", "uncorrectable")
		r.remapPending, r.remapFailed = pending, failed
	}
}

// eventCounts emits the XID and event counters of the GPU and returns (and
// forgets) the most severe XID since the previous scrape.
func (r *gpuRead) eventCounts() (recent string) {
	s, uuid := r.sc.s, r.g.uuid
	s.evMu.Lock()
	defer s.evMu.Unlock()
	if r.b.on(mXIDErrors) {
		codes := make([]uint64, 0, len(s.xidCounts[uuid]))
		for c := range s.xidCounts[uuid] {
			codes = append(codes, c)
		}
		sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
		for _, c := range codes {
			dp := r.b.point(mXIDErrors)
			dp.SetIntValue(s.xidCounts[uuid][c])
			dp.Attributes().PutInt("nvidia.gpu.xid.code", int64(c))
		}
	}
	if r.b.on(mEvents) {
		types := make([]string, 0, len(s.eventCounts[uuid]))
		for t := range s.eventCounts[uuid] {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			r.b.int(mEvents, s.eventCounts[uuid][t], "nvidia.gpu.event.type", t)
		}
	}
	recent = s.recentSev[uuid]
	delete(s.recentSev, uuid)
	return recent
}

// healthStates are the values of hw.state, each reported as 0 or 1.
var healthStates = []string{"ok", "degraded", "failed"}

// status emits the health state: failed when the GPU is lost, degraded
// after a serious XID or while memory rows wait for (or failed) remapping.
func (r *gpuRead) status(recent string) {
	state := "ok"
	switch {
	case r.lost:
		state = "failed"
	case r.remapFailed || r.remapPending || severityRank(recent) >= severityRank("error"):
		state = "degraded"
	}
	for _, st := range healthStates {
		var v int64
		if st == state {
			v = 1
		}
		r.b.int(mStatus, v, "hw.type", "gpu", "hw.state", st)
	}
}
