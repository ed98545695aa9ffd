package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"encoding/binary"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Accounted memory of a trace state, in bytes. They are estimates of what the
// Go runtime holds for each structure (map slots include their overhead).
const (
	stateBaseBytes    = 320
	idPairBytes       = 16
	setEntryBytes     = 24
	droppedEntryBytes = 32
	nameEntryBytes    = 48
	resourceBytes     = 512
)

// sid turns a span id into a map key; 0 is the empty id.
func sid(id pcommon.SpanID) uint64 { return binary.LittleEndian.Uint64(id[:]) }

// spanID turns a key back into a span id.
func spanID(v uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.LittleEndian.PutUint64(id[:], v)
	return id
}

// idPair is a forwarded span and its parent, recorded while the trace is
// under budget so that, once it goes over, the processor knows which parents
// it must still keep.
type idPair struct{ id, parent uint64 }

// traceState is one trace's budget within its window, and what the processor
// removed from it (for the summary span).
type traceState struct {
	id      pcommon.TraceID
	shard   *shard
	created time.Time
	// intrusive lists: least recently used, and creation order (window expiry)
	lruPrev, lruNext   *traceState
	fifoPrev, fifoNext *traceState

	spans int   // forwarded spans counted against the budget
	bytes int64 // their encoded bytes

	// Under budget: forwarded (span, parent) pairs.
	ids []idPair
	// Over budget (guarded): forwarded span ids, parents owed to forwarded
	// spans, and removed spans mapped to the span that replaces them as parent.
	guarded bool
	kept    map[uint64]struct{}
	pending map[uint64]struct{}
	dropped map[uint64]uint64

	rootSeen  bool
	rootID    uint64
	anchorSet bool
	anchorTS  pcommon.Timestamp
	anchorID  uint64 // parent of the earliest kept span, used when the root is not seen

	// What happened to the trace.
	overBudget   bool
	received     int
	folded       int
	composites   int
	droppedBy    [numDropReasons]int
	droppedBytes int64
	truncated    int
	itemsRemoved int
	reparented   int
	firstTS      pcommon.Timestamp
	lastTS       pcommon.Timestamp
	names        map[string]int
	otherNames   int
	resource     pcommon.Resource
	hasResource  bool

	mem int64 // accounted bytes, as last reported to the table
}

func (s *traceState) affected() bool {
	return s.folded > 0 || s.truncated > 0 || s.itemsRemoved > 0 || s.reparented > 0 || s.dropTotal() > 0
}

func (s *traceState) dropTotal() int {
	n := 0
	for _, v := range s.droppedBy {
		n += v
	}
	return n
}

func (s *traceState) memory() int64 {
	m := int64(stateBaseBytes) + int64(cap(s.ids))*idPairBytes +
		int64(len(s.kept)+len(s.pending))*setEntryBytes + int64(len(s.dropped))*droppedEntryBytes +
		int64(len(s.names))*nameEntryBytes
	if s.hasResource {
		m += resourceBytes
	}
	return m
}

// guard switches the state to over-budget bookkeeping: every span forwarded so
// far is known, and every parent they name that was not forwarded is owed.
func (s *traceState) guard() {
	if s.guarded {
		return
	}
	s.guarded = true
	s.kept = make(map[uint64]struct{}, len(s.ids))
	s.pending = map[uint64]struct{}{}
	s.dropped = map[uint64]uint64{}
	for _, p := range s.ids {
		s.kept[p.id] = struct{}{}
	}
	for _, p := range s.ids {
		if p.parent == 0 {
			continue
		}
		if _, ok := s.kept[p.parent]; !ok {
			s.pending[p.parent] = struct{}{}
		}
	}
	s.ids = nil
}

// noteRemoved records a span the processor dropped or folded.
func (s *traceState) noteRemoved(name string, start, end pcommon.Timestamp, maxNames int) {
	if s.firstTS == 0 || start < s.firstTS {
		s.firstTS = start
	}
	if end > s.lastTS {
		s.lastTS = end
	}
	if maxNames <= 0 {
		return
	}
	if s.names == nil {
		s.names = map[string]int{}
	}
	if _, ok := s.names[name]; ok || len(s.names) < maxNames {
		s.names[name]++
		return
	}
	s.otherNames++
}

// noteKept records a forwarded span: the root, or the earliest span's parent
// (where the summary attaches when the root is not seen).
func (s *traceState) noteKept(id, parent uint64, start pcommon.Timestamp) {
	if parent == 0 {
		s.rootSeen, s.rootID = true, id
		return
	}
	if !s.anchorSet || start < s.anchorTS {
		s.anchorSet, s.anchorTS, s.anchorID = true, start, parent
	}
}

// keptNotes is what noteKept would record for a run of spans, gathered
// while a request is measured, so that a trace forwarded whole needs one
// merge instead of one call per span.
type keptNotes struct {
	rootSeen  bool
	rootID    uint64
	anchorSet bool
	anchorTS  pcommon.Timestamp
	anchorID  uint64
}

func (k *keptNotes) note(id, parent uint64, start pcommon.Timestamp) {
	if parent == 0 {
		k.rootSeen, k.rootID = true, id
		return
	}
	if !k.anchorSet || start < k.anchorTS {
		k.anchorSet, k.anchorTS, k.anchorID = true, start, parent
	}
}

// mergeKept records the spans of k as forwarded, as calling noteKept on each
// of them in order would (the last root wins, the first earliest span wins).
func (s *traceState) mergeKept(k *keptNotes) {
	if k.rootSeen {
		s.rootSeen, s.rootID = true, k.rootID
	}
	if k.anchorSet && (!s.anchorSet || k.anchorTS < s.anchorTS) {
		s.anchorSet, s.anchorTS, s.anchorID = true, k.anchorTS, k.anchorID
	}
}

// traceTable holds trace states: bounded in number (least recently used
// evicted first) and in time (released when their window ends).
type traceTable struct {
	m         map[pcommon.TraceID]*traceState
	lru       traceState // sentinel: lruNext is the most recent
	fifo      traceState // sentinel: fifoNext is the oldest
	mem       int64
	maxTraces int
	window    time.Duration
}

func newTraceTable(maxTraces int, window time.Duration) *traceTable {
	t := &traceTable{m: map[pcommon.TraceID]*traceState{}, maxTraces: maxTraces, window: window}
	t.lru.lruNext, t.lru.lruPrev = &t.lru, &t.lru
	t.fifo.fifoNext, t.fifo.fifoPrev = &t.fifo, &t.fifo
	return t
}

func (t *traceTable) len() int { return len(t.m) }

// get returns the trace's state, creating it; a state created beyond
// max_traces evicts the least recently used one, returned in evicted.
func (t *traceTable) get(id pcommon.TraceID, now time.Time, sh *shard) (st, evicted *traceState) {
	if st = t.m[id]; st != nil {
		// move to the front of the LRU list
		st.lruPrev.lruNext, st.lruNext.lruPrev = st.lruNext, st.lruPrev
		t.pushLRU(st)
		return st, nil
	}
	if len(t.m) >= t.maxTraces {
		evicted = t.lru.lruPrev
		t.remove(evicted)
	}
	st = &traceState{id: id, shard: sh, created: now}
	t.m[id] = st
	t.pushLRU(st)
	st.fifoPrev, st.fifoNext = t.fifo.fifoPrev, &t.fifo
	t.fifo.fifoPrev.fifoNext = st
	t.fifo.fifoPrev = st
	st.mem = st.memory()
	t.mem += st.mem
	return st, evicted
}

func (t *traceTable) pushLRU(st *traceState) {
	st.lruPrev, st.lruNext = &t.lru, t.lru.lruNext
	t.lru.lruNext.lruPrev = st
	t.lru.lruNext = st
}

func (t *traceTable) remove(st *traceState) {
	delete(t.m, st.id)
	st.lruPrev.lruNext, st.lruNext.lruPrev = st.lruNext, st.lruPrev
	st.fifoPrev.fifoNext, st.fifoNext.fifoPrev = st.fifoNext, st.fifoPrev
	st.lruPrev, st.lruNext, st.fifoPrev, st.fifoNext = nil, nil, nil, nil
	t.mem -= st.mem
}

// account refreshes the accounted memory of st.
func (t *traceTable) account(st *traceState) {
	m := st.memory()
	if st.lruNext == nil { // released while its request was still running
		st.mem = m
		return
	}
	t.mem += m - st.mem
	st.mem = m
}

// expired removes and returns the states whose window ended by now.
func (t *traceTable) expired(now time.Time) []*traceState {
	var out []*traceState
	for st := t.fifo.fifoNext; st != &t.fifo; {
		if now.Sub(st.created) < t.window {
			break
		}
		next := st.fifoNext
		t.remove(st)
		out = append(out, st)
		st = next
	}
	return out
}

// all removes and returns every state, oldest first.
func (t *traceTable) all() []*traceState {
	out := make([]*traceState, 0, len(t.m))
	for st := t.fifo.fifoNext; st != &t.fifo; {
		next := st.fifoNext
		t.remove(st)
		out = append(out, st)
		st = next
	}
	return out
}
