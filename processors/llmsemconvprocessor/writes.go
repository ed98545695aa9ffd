package llmsemconvprocessor

import (
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// pendingWrite is one target value found on an item.
type pendingWrite struct {
	tid      int // interned target
	dialect  int
	target   string
	v        val
	priority int
	alt      string // target when the winner of target disagrees
	altID    int
	src      string // foreign key, "" for derived values
	srcIdx   int    // attribute index of src; -1 when unknown or none
	srcKeys  []string
	srcKeyIx []int32 // attribute indices of srcKeys (-1: not on the item)
	// movable: src is a plain rule's attribute that feeds this write only,
	// so its value can be moved to the target instead of copied.
	movable bool
	// validJSON: v is JSON this processor wrote (rebuilt messages), which
	// fixPlainContent need not validate again.
	validJSON bool
}

// removals reports whether any original is to be removed.
func (n *normalizer) removals(s *scratch) bool {
	for i := range s.force {
		if s.force[i] != 0 || n.cfg.RemoveOriginals && s.remove[i] != 0 {
			return true
		}
	}
	return false
}

// consume marks an original as mapped: removed with the originals.
func (n *normalizer) consume(s *scratch, k string) {
	setBit(s.remove, s.index(k))
}

// forceRemove marks originals that must go whatever remove_originals says.
func (n *normalizer) forceRemove(s *scratch, keys []string) {
	for _, k := range keys {
		setBit(s.force, s.index(k))
	}
}

// applyWrites resolves the pending writes: per target, the lowest priority
// wins (the first on ties); an official value already on the item wins
// unless overwrite is set. Losers that carry the same value are consumed,
// others go to their alternative target or are kept as conflicts.
func (n *normalizer) applyWrites(it *item, s *scratch, st *batchStats, sc *scan) bool {
	for i := range s.writes {
		w := &s.writes[i]
		if w.tid < 0 {
			continue
		}
		b := s.best[w.tid]
		if b < 0 {
			s.touched = append(s.touched, w.tid)
			s.best[w.tid] = int32(i)
		} else if w.priority < s.writes[b].priority {
			s.best[w.tid] = int32(i)
		}
	}
	changed := false
	if n.cfg.RemoveOriginals && len(s.writes) > 0 {
		// The values read below stay where they are while the winners
		// are staged, so that they can be moved.
		s.stage()
		it.attrs.Range(func(_ string, v pcommon.Value) bool {
			s.vals = append(s.vals, v)
			return true
		})
		n.markKept(it, s, sc)
	}
	// Winners first, so that losers compare with the value that stays.
	for i := range s.writes {
		w := &s.writes[i]
		if w.tid >= 0 && s.best[w.tid] != int32(i) {
			continue
		}
		existing, ok := n.lookup(it, s, w.tid, w.target, sc)
		if ok && !n.cfg.Overwrite {
			n.settle(it, s, st, w, existing, &changed)
			continue
		}
		n.put(it, s, w)
		n.consumeWrite(s, w)
		if w.src != "" || len(w.srcKeys) > 0 {
			st.attr(w.dialect, attrMapped)
		}
		changed = true
	}
	for i := range s.writes {
		w := &s.writes[i]
		if w.tid < 0 || s.best[w.tid] == int32(i) {
			continue
		}
		n.settle(it, s, st, w, valueOf(it, s, w.target), &changed)
	}
	return changed
}

// markKept marks in s.kept the originals that a conflict may still keep:
// the sources of writes that will be settled against a value on the item
// (losers, targets already present, targets that an alternative may fill,
// untracked targets). Only the other consumed originals lend their values.
func (n *normalizer) markKept(it *item, s *scratch, sc *scan) {
	s.kept = resetBits(s.kept, len(s.remove))
	s.free = resetBits(s.free, len(s.remove))
	// Targets some write may fill as its alternative (by target id).
	var altTargets [maxTargetIDs / 64]uint64
	anyAlt := false
	for i := range s.writes {
		if w := &s.writes[i]; w.alt != "" {
			anyAlt = true
			if w.altID >= 0 && w.altID < maxTargetIDs {
				altTargets[w.altID>>6] |= 1 << (w.altID & 63)
			}
		}
	}
	for i := range s.writes {
		w := &s.writes[i]
		risky := w.tid < 0 || s.best[w.tid] != int32(i)
		if !risky && !n.cfg.Overwrite {
			_, risky = n.lookup(it, s, w.tid, w.target, sc)
		}
		if !risky && anyAlt {
			if w.tid < maxTargetIDs {
				risky = altTargets[w.tid>>6]&(1<<(w.tid&63)) != 0
			} else {
				for j := range s.writes {
					if s.writes[j].alt == w.target {
						risky = true
						break
					}
				}
			}
		}
		if !risky {
			// Sources whose value the write does not move itself are
			// removed once it is written: any other write may take their
			// storage.
			if w.src != "" && !w.movable && !s.skipped(w.src) {
				setBit(s.free, w.srcIndex(s))
			}
			for _, j := range w.srcKeyIx {
				setBit(s.free, int(j))
			}
			continue
		}
		if w.src != "" {
			setBit(s.kept, w.srcIndex(s))
		}
		for _, j := range w.srcKeyIx {
			setBit(s.kept, int(j))
		}
	}
	for i := range s.free {
		s.free[i] |= s.remove[i] | s.force[i] // ignored and policed originals
		s.free[i] &^= s.kept[i]
	}
}

// put writes a winner. When one of its sources is an original that goes
// away, that original's value is moved to the target and set there, which
// reuses its storage instead of allocating: a renamed attribute moves its
// own value; messages, provider pairs and JSON fields take the value of
// one of their consumed sources of the same type.
func (n *normalizer) put(it *item, s *scratch, w *pendingWrite) {
	n.putTo(it, s, w, w.target, w.tid)
}

// putTo is put to target (the write's own or its alternative).
func (n *normalizer) putTo(it *item, s *scratch, w *pendingWrite, target string, tid int) {
	s.noteJSON(n.t, tid, w.validJSON)
	if len(s.vals) > 0 && w.v.kind != typeStringArray {
		j := -1
		if w.movable && w.srcIdx >= 0 && w.srcIdx < len(s.vals) && !s.skipped(w.src) {
			j = w.srcIdx
		} else {
			j = s.donor(w)
		}
		if j >= 0 {
			dst := s.dest(it).PutEmpty(target)
			s.vals[j].MoveTo(dst)
			clearBit(s.free, j)
			w.v.set(dst)
			return
		}
	}
	if w.v.kind == typeStringArray {
		// A renamed string (a finish reason given as one string) lends its
		// storage to the array's first element.
		var donor pcommon.Value
		if j := w.srcIdx; len(s.vals) > 0 && w.movable && j >= 0 && j < len(s.vals) && !s.skipped(w.src) && s.vals[j].Type() == pcommon.ValueTypeStr {
			donor = s.vals[j]
			clearBit(s.free, j)
		}
		w.v.putArray(s.dest(it).PutEmptySlice(target), donor)
		return
	}
	w.v.put(s.dest(it), target)
}

// donor finds a source of w that is removed once w is written and holds
// a value of the type w writes, -1 when there is none.
func (s *scratch) donor(w *pendingWrite) int {
	want := w.v.valueType()
	ok := func(j int) bool {
		return j >= 0 && j < len(s.vals) && !hasBit(s.kept, j) && s.vals[j].Type() == want
	}
	if w.src != "" && !s.skipped(w.src) {
		if j := w.srcIndex(s); ok(j) {
			return j
		}
	}
	for _, j := range w.srcKeyIx {
		if ok(int(j)) {
			return int(j)
		}
	}
	// Any other original that goes away whatever happens (s.free).
	for wi, word := range s.free {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			if j := wi<<6 | b; j < len(s.vals) && s.vals[j].Type() == want {
				return j
			}
		}
	}
	return -1
}

// lookup finds an attribute on the item as it was scanned (presence bits
// for official names) or among this pass's writes to untracked names.
func (n *normalizer) lookup(it *item, s *scratch, tid int, name string, sc *scan) (pcommon.Value, bool) {
	if tid >= 0 && tid < n.t.nTracked && sc.present[tid>>6]&(1<<(tid&63)) == 0 {
		return pcommon.Value{}, false
	}
	return s.get(it, name)
}

// settle handles a write whose target already holds a value.
func (n *normalizer) settle(it *item, s *scratch, st *batchStats, w *pendingWrite, existing pcommon.Value, changed *bool) {
	switch {
	case w.v.equal(existing):
		n.consumeWrite(s, w)
		st.attr(w.dialect, attrMapped)
	case w.alt != "" && !hasKey(it, s, w.alt):
		// The source goes with this write: it can lend its own value.
		if w.movable {
			clearBit(s.kept, w.srcIndex(s))
		}
		w.validJSON = false
		n.putTo(it, s, w, w.alt, w.altID)
		n.consumeWrite(s, w)
		st.attr(w.dialect, attrMapped)
		*changed = true
	default:
		n.conflict(s, w, st, w.dialect)
	}
}

func hasKey(it *item, s *scratch, k string) bool {
	_, ok := s.get(it, k)
	return ok
}

func valueOf(it *item, s *scratch, k string) pcommon.Value {
	if v, ok := s.get(it, k); ok {
		return v
	}
	return pcommon.NewValueEmpty()
}

func (n *normalizer) conflict(s *scratch, w *pendingWrite, st *batchStats, dl int) {
	if w.src == "" && len(w.srcKeys) == 0 {
		return
	}
	if w.src != "" {
		s.conflicts = append(s.conflicts, w.src)
	}
	s.conflicts = append(s.conflicts, w.srcKeys...)
	st.attr(dl, attrConflict)
	// A conflicting source keeps its attribute: make sure it is not removed.
	if w.src != "" {
		clearBit(s.remove, w.srcIndex(s))
	}
	for _, j := range w.srcKeyIx {
		clearBit(s.remove, int(j))
	}
}

func (n *normalizer) consumeWrite(s *scratch, w *pendingWrite) {
	if w.src != "" && !s.skipped(w.src) {
		setBit(s.remove, w.srcIndex(s))
	}
	for _, j := range w.srcKeyIx {
		setBit(s.remove, int(j))
	}
}

// srcIndex is the attribute index of the write's source.
func (w *pendingWrite) srcIndex(s *scratch) int {
	if w.srcIdx >= 0 || w.src == "" {
		return w.srcIdx
	}
	return s.index(w.src)
}

// checkTotal drops a foreign total when it equals the sum of its parts, and
// keeps and reports it otherwise.
func (n *normalizer) checkTotal(it *item, tr totalRef, s *scratch, st *batchStats, sc *scan) {
	r := tr.r
	var tv pcommon.Value
	if tr.idx < len(s.vals) {
		tv = s.vals[tr.idx]
	} else {
		tv, _ = s.get(it, r.key)
	}
	total, ok := intOf(tv)
	var sum int64
	for pi, p := range r.totalOf {
		// A part this pass wrote: its value is the winning write's.
		if tid := r.totalIDs[pi]; tid >= 0 && tid < n.t.nTracked && sc.present[tid>>6]&(1<<(tid&63)) == 0 {
			if b := s.best[tid]; b >= 0 && s.writes[b].v.kind == typeInt {
				sum += s.writes[b].v.i
				continue
			}
		}
		pv, found := s.get(it, p)
		if !found {
			ok = false
			break
		}
		x, good := intOf(pv)
		ok = ok && good
		sum += x
	}
	if ok && total == sum {
		n.consume(s, r.key)
		st.attr(r.dialect, attrMapped)
		return
	}
	if ok {
		s.conflicts = append(s.conflicts, r.key)
		st.attr(r.dialect, attrConflict)
	} else {
		s.unmapped = append(s.unmapped, r.key)
		st.attr(r.dialect, attrUnmappedOutcome)
	}
}
