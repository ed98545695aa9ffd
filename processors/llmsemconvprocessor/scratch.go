package llmsemconvprocessor

import (
	"sort"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// scratch is the per-item working memory, reused through a pool (one
// scratch per batch).
type scratch struct {
	writes    []pendingWrite
	unmapped  []string
	conflicts []string
	skip      []string
	best      []int32 // per target id: index of the winning write, -1 none
	touched   []int
	msgs      msgBuilder
	events    []any
	finish    []string // span-level finish reasons read for the messages

	// Filled by the scan, by attribute index: the keys and what the table
	// knows about each, so that every key is looked up once per item.
	keys []string
	cls  []*keyClass
	hint int     // where index starts looking
	ixs  []int32 // storage of the writes' srcKeyIx
	// Originals to remove, by attribute index: consumed ones (removed when
	// remove_originals is set) and forced ones (content policy).
	remove, force []uint64
	kept          []uint64        // consumed originals a conflict may still keep
	free          []uint64        // originals removed whatever happens: storage any write may take
	totals        []totalRef      // total rules found on the item
	vals          []pcommon.Value // attribute values by index, for moves
	lend          int             // next index lendStr looks at
	classes       map[string]*keyClass
	slot          *scratchSlot // the slot holding this scratch; nil for pooled ones
	textJSON      []byte       // fixPlainContent's buffer
	out           pcommon.Map  // staged writes (see stage)
	staged        bool
	// Official JSON attributes (jsonKeys order) written on the item: by a
	// write of JSON built here (valid) or of a value from elsewhere (raw).
	jsonValid, jsonRaw uint8
}

func (s *scratch) reset() {
	s.writes = s.writes[:0]
	s.unmapped = s.unmapped[:0]
	s.conflicts = s.conflicts[:0]
	s.skip = s.skip[:0]
	for _, id := range s.touched {
		s.best[id] = -1
	}
	s.touched = s.touched[:0]
	s.msgs.reset()
	s.events = s.events[:0]
	n := (len(s.keys) + 63) / 64
	s.remove = resetBits(s.remove, n)
	s.force = resetBits(s.force, n)
	clear(s.vals)
	s.vals, s.lend = s.vals[:0], 0
	s.jsonValid, s.jsonRaw = 0, 0
	s.ixs = s.ixs[:0]
}

// indexes returns the attribute indices of keys (-1 for a key not on the
// item), carved from the scratch's storage.
func (s *scratch) indexes(keys []string) []int32 {
	start := len(s.ixs)
	for _, k := range keys {
		s.ixs = append(s.ixs, int32(s.index(k)))
	}
	return s.ixs[start:len(s.ixs):len(s.ixs)]
}

// noteJSON records a write to one of the official JSON attributes.
func (s *scratch) noteJSON(t *table, tid int, valid bool) {
	if tid < 0 || tid >= len(t.jsonGroup) || t.jsonGroup[tid] < 0 {
		return
	}
	g := t.jsonGroup[tid]
	if valid {
		s.jsonValid |= 1 << g
		s.jsonRaw &^= 1 << g
	} else {
		s.jsonRaw |= 1 << g
		s.jsonValid &^= 1 << g
	}
}

func resetBits(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	b = b[:n]
	clear(b)
	return b
}

func setBit(b []uint64, i int) {
	if i >= 0 && i>>6 < len(b) {
		b[i>>6] |= 1 << (i & 63)
	}
}

func clearBit(b []uint64, i int) {
	if i >= 0 && i>>6 < len(b) {
		b[i>>6] &^= 1 << (i & 63)
	}
}

func hasBit(b []uint64, i int) bool { return i>>6 < len(b) && b[i>>6]&(1<<(i&63)) != 0 }

// index returns the attribute index of key k as seen by the scan, -1 when
// the item has no such key.
func (s *scratch) index(k string) int {
	// Keys are mostly asked for in scan order (the sources of one message
	// write, for instance): start after the last one found.
	n := len(s.keys)
	for j := 0; j < n; j++ {
		i := s.hint + j
		if i >= n {
			i -= n
		}
		if s.keys[i] == k {
			s.hint = i + 1
			return i
		}
	}
	return -1
}

// totalRef is a total rule found on an item, with its attribute index.
type totalRef struct {
	r   *rule
	idx int
}

type scratchSlot struct {
	mu sync.Mutex
	s  *scratch
	_  [40]byte // keep slots on separate cache lines
}

func (n *normalizer) newScratch() *scratch {
	s := &scratch{best: make([]int32, len(n.t.names))}
	for i := range s.best {
		s.best[i] = -1
	}
	return s
}

// maxClassCache bounds the per-scratch cache of key classes.
const maxClassCache = 4096

// class is classify through the scratch's cache: attribute keys repeat
// from span to span, so most keys cost one map lookup.
func (s *scratch) class(t *table, k string) *keyClass {
	if c, ok := s.classes[k]; ok {
		return c
	}
	c := t.classify(k)
	if s.classes == nil || len(s.classes) >= maxClassCache {
		s.classes = make(map[string]*keyClass, 64)
	}
	s.classes[k] = &c
	return &c
}

// getScratch takes a free slot's scratch, or one from the pool when all
// slots are busy; putScratch gives it back.
func (n *normalizer) getScratch() *scratch {
	start := int(n.next.Add(1))
	for k := range n.slots {
		sl := &n.slots[(start+k)%len(n.slots)]
		if sl.mu.TryLock() {
			if sl.s == nil {
				sl.s = n.newScratch()
				sl.s.slot = sl
			}
			return sl.s
		}
	}
	return n.pool.Get().(*scratch)
}

func (n *normalizer) putScratch(s *scratch) {
	if s.slot != nil {
		s.slot.mu.Unlock()
		return
	}
	n.pool.Put(s)
}

func (s *scratch) skipped(k string) bool {
	for _, x := range s.skip {
		if x == k {
			return true
		}
	}
	return false
}

// lendStr moves the value of a string original that is about to be removed
// into v, whose SetStr then reuses its storage. Only originals whose
// removal is final may lend: call it once the writes are settled.
func (s *scratch) lendStr(v pcommon.Value) {
	for ; s.lend < len(s.vals); s.lend++ {
		j := s.lend
		if (hasBit(s.remove, j) || hasBit(s.force, j)) && s.vals[j].Type() == pcommon.ValueTypeStr {
			s.vals[j].MoveTo(v)
			s.lend++
			return
		}
	}
}

func putList(m pcommon.Map, k string, list []string, s *scratch) {
	if len(list) == 0 {
		return
	}
	sort.Strings(list)
	sl := m.PutEmptySlice(k)
	sl.EnsureCapacity(len(list))
	for _, e := range list {
		v := sl.AppendEmpty()
		s.lendStr(v)
		v.SetStr(e)
	}
}
