package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"encoding/json"
	"math/bits"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Attributes the processor writes in its own namespace.
const (
	attrDialect          = genai.SemconvAttrDialect
	attrUnmapped         = genai.SemconvAttrUnmapped
	attrConflicts        = genai.SemconvAttrConflicts
	attrOriginalSpanName = "otelcol_llm.semconv.original_span_name"
	attrRollupPrefix     = genai.SemconvAttrRollupPrefix
	attrOriginalSizePfx  = genai.SemconvAttrOriginalSizePrefix
	ownNamespace         = "otelcol_llm"

	attrOperationName = genai.AttrOperationName
	attrProviderName  = genai.AttrProviderName
	attrRequestModel  = genai.AttrRequestModel
	attrResponseModel = genai.AttrResponseModel
	attrFinishReasons = genai.AttrFinishReasons
	attrInputMessages = genai.AttrInputMessages
	attrOutputMsgs    = genai.AttrOutputMessages
	attrSystemInstr   = "gen_ai.system_instructions"
	attrToolDefs      = "gen_ai.tool.definitions"
	attrToolArgs      = "gen_ai.tool.call.arguments"
	attrToolResult    = "gen_ai.tool.call.result"
	attrUsagePrefix   = genai.UsageAttrPrefix
)

// Item outcomes and attribute outcomes counted in self-telemetry.
const (
	outcomeNormalized = iota
	outcomePartial
	outcomeUnchanged
	numItemOutcomes
)

const (
	attrMapped = iota
	attrUnmappedOutcome
	attrConflict
	attrInvalid
	numAttrOutcomes
)

var itemOutcomeNames = [numItemOutcomes]string{"normalized", "partially_mapped", "unchanged"}
var attrOutcomeNames = [numAttrOutcomes]string{"mapped", "unmapped", "conflict", "invalid_value"}

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

// keyClass is what the table knows about one attribute key.
type keyClass struct {
	ki      *keyInfo     // exact entry
	p       *prefixEntry // prefix entry (when no exact entry)
	seg     string       // first key segment (prefix and namespace keys)
	dialect int          // dialect scored by the key
	oid     int          // official names: target id
	content contentGroup // official names: content group
	kind    uint8
	flags   uint8
}

// keyClass flags.
const (
	clsForeign   uint8 = 1 << iota // counts as a foreign key
	clsScored                      // a prefix entry scores the dialect
	clsMarker                      // detection marker (scores 10)
	clsHasOp                       // gen_ai.operation.name
	clsHasOutTok                   // gen_ai.usage.output_tokens
	clsHasModel                    // gen_ai.request.model or gen_ai.response.model
)

const (
	clsNone     uint8 = iota // no exact entry, own namespace or official name
	clsExact                 // ki is set
	clsOwn                   // otelcol_llm.*
	clsOfficial              // an official gen_ai.* name
)

// item is one span or log record.
type item struct {
	attrs  pcommon.Map
	span   ptrace.Span
	isSpan bool
	start  pcommon.Timestamp
	name   string
	// noAnnotate suppresses the otelcol_llm.semconv.* annotations (span events).
	noAnnotate bool
}

// scan is what the first, read-only pass learns about an item.
type scan struct {
	present    [maxTargetIDs / 64]uint64 // official names on the item
	score      [32]int
	foreign    int // keys with a table entry or under a dialect namespace
	events     int
	content    uint8
	hasOp      bool
	hasOutTok  bool
	hasModel   bool
	legacyName bool
}

type normalizer struct {
	cfg     *Config
	t       *table
	policy  *contentPolicy
	prices  *priceTable
	firstEv map[string]bool
	pool    sync.Pool

	// slots hold one long-lived scratch each (with its cache of key
	// classes), so that batches do not depend on sync.Pool, which drops its
	// items at every GC (and at random under the race detector); pool is
	// the fallback when every slot is busy.
	slots []scratchSlot
	next  atomic.Uint32
}

type scratchSlot struct {
	mu sync.Mutex
	s  *scratch
	_  [40]byte // keep slots on separate cache lines
}

func newNormalizer(cfg *Config) (*normalizer, error) {
	t, err := compileTable(mappingYAML, cfg.Target, cfg.Dialects)
	if err != nil {
		return nil, err
	}
	pol, err := newContentPolicy(&cfg.Content)
	if err != nil {
		return nil, err
	}
	n := &normalizer{cfg: cfg, t: t, policy: pol, prices: newPriceTable(cfg.Derive.Prices), firstEv: map[string]bool{}}
	for _, e := range cfg.Derive.FirstChunkEvents {
		n.firstEv[e] = true
	}
	n.pool.New = func() any { return n.newScratch() }
	n.slots = make([]scratchSlot, min(max(runtime.GOMAXPROCS(0), 2), 64))
	return n, nil
}

func (n *normalizer) newScratch() *scratch {
	s := &scratch{best: make([]int32, len(n.t.names))}
	for i := range s.best {
		s.best[i] = -1
	}
	return s
}

// classify finds what the table knows about key k.
func (t *table) classify(k string) keyClass {
	if ki, ok := t.exact[k]; ok {
		c := keyClass{ki: ki, kind: clsExact, dialect: ki.dialect, flags: clsForeign}
		if ki.marker {
			c.flags |= clsMarker
		}
		return c
	}
	seg := firstSegment(k)
	if seg == ownNamespace {
		return keyClass{kind: clsOwn}
	}
	if seg == "gen_ai" {
		if oi, ok := t.official[k]; ok {
			c := keyClass{kind: clsOfficial, oid: oi.id, content: oi.content}
			switch k {
			case attrOperationName:
				c.flags |= clsHasOp
			case attrUsageOutput:
				c.flags |= clsHasOutTok
			case attrRequestModel, attrResponseModel:
				c.flags |= clsHasModel
			}
			return c
		}
	}
	c := keyClass{p: t.matchPrefix(seg, k), seg: seg}
	if c.p != nil {
		c.dialect, c.flags = c.p.dialect, clsForeign|clsScored
		if c.p.marker {
			c.flags |= clsMarker
		}
	} else if t.nsMask[seg] != 0 {
		c.flags = clsForeign
	}
	return c
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

// scanItem is the read-only first pass: it records every key and its
// class in s. It allocates nothing once s has seen the item's keys.
func (n *normalizer) scanItem(it *item, sc *scan, s *scratch) {
	t := n.t
	s.keys, s.cls, s.hint = s.keys[:0], s.cls[:0], 0
	it.attrs.Range(func(k string, _ pcommon.Value) bool {
		s.keys = append(s.keys, k)
		c := s.class(t, k)
		s.cls = append(s.cls, c)
		switch c.kind {
		case clsOwn:
		case clsOfficial:
			sc.present[c.oid>>6] |= 1 << (c.oid & 63)
			sc.content |= 1 << c.content
			sc.hasOp = sc.hasOp || c.flags&clsHasOp != 0
			sc.hasOutTok = sc.hasOutTok || c.flags&clsHasOutTok != 0
			sc.hasModel = sc.hasModel || c.flags&clsHasModel != 0
		default:
			if c.flags&clsForeign != 0 {
				sc.foreign++
			}
			if c.kind == clsExact || c.flags&clsScored != 0 {
				if c.flags&clsMarker != 0 {
					sc.score[c.dialect] += 10
				} else {
					sc.score[c.dialect]++
				}
			}
		}
		return true
	})
	if it.isSpan {
		for _, d := range t.dialects {
			if d.spanNames[it.name] {
				sc.score[d.idx] += 10
				sc.legacyName = true
			}
		}
		evs := it.span.Events()
		for i := 0; i < evs.Len(); i++ {
			if ei, ok := t.events[evs.At(i).Name()]; ok {
				sc.events++
				sc.score[ei.dialect]++
			}
		}
	}
}

// detect picks the item's dialect: the highest score, where the deprecated
// OTel names only win when no library-specific dialect is present.
func (n *normalizer) detect(sc *scan) int {
	best, bestScore := -1, 0
	for i := range n.t.dialects {
		s := sc.score[i]
		if i == n.t.legacyIdx {
			continue
		}
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	if best == -1 && n.t.legacyIdx >= 0 && sc.score[n.t.legacyIdx] > 0 {
		best = n.t.legacyIdx
	}
	return best
}

// needsWork reports whether the item needs the second pass at all.
func (n *normalizer) needsWork(it *item, sc *scan) bool {
	if sc.foreign > 0 || sc.events > 0 || sc.legacyName {
		return true
	}
	if n.policy.active(sc.content) {
		return true
	}
	if it.isSpan && n.cfg.Derive.Timing && sc.hasOp && (sc.hasOutTok || len(n.firstEv) > 0 && it.span.Events().Len() > 0) {
		return true
	}
	return it.isSpan && n.prices.enabled() && sc.hasModel
}

// process normalizes one item and records what happened in st.
func (n *normalizer) process(it *item, st *batchStats) {
	s := n.getScratch()
	n.processWith(it, st, s)
	n.putScratch(s)
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

// processWith is process with the caller's scratch.
func (n *normalizer) processWith(it *item, st *batchStats, s *scratch) {
	var sc scan
	n.scanItem(it, &sc, s)
	if !n.needsWork(it, &sc) {
		st.item(-1, outcomeUnchanged)
		return
	}
	s.reset()
	d := n.detect(&sc)
	changed := n.mapAttributes(it, d, s, st, &sc)
	if it.isSpan && n.finishSpan(it, d, s) {
		changed = true
	}
	if n.fixPlainContent(it, d, s, st, &sc) {
		changed = true
	}
	if n.policy.apply(it.attrs, st) {
		changed = true
	}
	outcome := outcomeUnchanged
	if changed {
		outcome = outcomeNormalized
	}
	if len(s.unmapped) > 0 {
		outcome = outcomePartial
	}
	st.item(d, outcome)
}

// processEventAttrs normalizes the attributes of one span event: the same
// mapping as for spans, without span-level fixes; events are not counted as
// items.
func (n *normalizer) processEventAttrs(it *item, st *batchStats, s *scratch) {
	var sc scan
	n.scanItem(it, &sc, s)
	if !n.needsWork(it, &sc) {
		return
	}
	s.reset()
	it.noAnnotate = true
	d := n.detect(&sc)
	n.mapAttributes(it, d, s, st, &sc)
	n.fixPlainContent(it, d, s, st, &sc)
	n.policy.apply(it.attrs, st)
}

// operation finds gen_ai.operation.name from the dialect's sources.
func (n *normalizer) operation(it *item, d int, hadOp bool) string {
	if hadOp {
		if v, ok := it.attrs.Get(attrOperationName); ok {
			return v.AsString()
		}
	}
	if d < 0 {
		return ""
	}
	for _, op := range n.t.dialects[d].ops {
		if op.attribute != "" {
			if v, ok := it.attrs.Get(op.attribute); ok {
				if o, ok := lookupFold(op.values, v.AsString()); ok {
					return o
				}
			}
		}
		if op.spanName != nil && it.isSpan {
			if o, ok := op.spanName[it.name]; ok {
				return o
			}
		}
	}
	return ""
}

// lookupFold looks up a key as it is, else lower-cased (lookupLower),
// without allocating.
func lookupFold[V any](m map[string]V, k string) (V, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	return lookupLower(m, k)
}

// lookupPair looks up "a/b", lower-cased, without allocating.
func lookupPair(m map[string]string, a, b string) (string, bool) {
	var buf [128]byte
	if len(a)+len(b)+1 > len(buf) {
		v, ok := m[lowerASCII(a)+"/"+lowerASCII(b)]
		return v, ok
	}
	k := appendLower(buf[:0], a)
	k = append(k, '/')
	k = appendLower(k, b)
	v, ok := m[string(k)]
	return v, ok
}

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func (n *normalizer) isWrapper(it *item, d int) bool {
	if d < 0 {
		return false
	}
	dl := n.t.dialects[d]
	if dl.wrapperAttr == "" {
		return false
	}
	v, ok := it.attrs.Get(dl.wrapperAttr)
	if !ok {
		return false
	}
	w, _ := lookupFold(dl.wrapperValues, v.AsString())
	return w
}

func (s *scratch) skipped(k string) bool {
	for _, x := range s.skip {
		if x == k {
			return true
		}
	}
	return false
}

// mapAttributes is the second pass: it collects target values, resolves
// priorities and conflicts, writes them and removes consumed originals.
func (n *normalizer) mapAttributes(it *item, d int, s *scratch, st *batchStats, sc *scan) bool {
	t := n.t
	hadOp := sc.hasOp // the scan saw gen_ai.operation.name
	op := n.operation(it, d, hadOp)
	wrapper := n.isWrapper(it, d)
	if op != "" && !hadOp && !wrapper {
		s.writes = append(s.writes, pendingWrite{tid: t.opID, dialect: d, target: attrOperationName, v: val{s: op}, priority: 0, srcIdx: -1})
	} else if hadOp {
		if fixed, ok := lookupLower(t.values["operation"], op); ok && fixed != op {
			it.attrs.PutStr(attrOperationName, fixed)
			op = fixed
		}
	}
	// Combined provider values (OpenInference llm.provider + llm.system).
	if d >= 0 && len(t.dialects[d].pairAttrs) == 2 {
		dl := t.dialects[d]
		a, okA := it.attrs.Get(dl.pairAttrs[0])
		b, okB := it.attrs.Get(dl.pairAttrs[1])
		if okA && okB {
			if p, ok := lookupPair(dl.pairValues, a.AsString(), b.AsString()); ok {
				s.writes = append(s.writes, pendingWrite{tid: t.providerID, dialect: d, target: attrProviderName, v: val{s: p}, priority: 0, srcIdx: -1, srcKeys: dl.pairAttrs[:2:2], srcKeyIx: s.indexes(dl.pairAttrs[:2:2])})
				s.skip = append(s.skip, dl.pairAttrs[0], dl.pairAttrs[1])
			}
		}
	}
	s.totals = s.totals[:0]
	i := -1
	it.attrs.Range(func(k string, v pcommon.Value) bool {
		i++
		cl := s.cls[i]
		switch cl.kind {
		case clsOwn, clsOfficial:
			return true
		case clsExact:
			ki := cl.ki
			switch {
			case ki.rule != nil:
				if s.skipped(k) {
					return true
				}
				r := ki.rule
				if r.totalOf != nil {
					s.totals = append(s.totals, totalRef{r: r, idx: i})
					return true
				}
				if r.ignore {
					setBit(s.remove, i)
					st.attr(r.dialect, attrMapped)
					return true
				}
				target, tid := r.to, r.toID
				if r.on != nil {
					o := r.on[op]
					target, tid = o.to, o.id
				}
				if target == targetIgnore {
					setBit(s.remove, i)
					st.attr(r.dialect, attrMapped)
					return true
				}
				if target == "" {
					s.unmapped = append(s.unmapped, k)
					st.attr(r.dialect, attrUnmappedOutcome)
					return true
				}
				cv, ok := r.convertValue(v, it.start)
				if !ok {
					s.unmapped = append(s.unmapped, k)
					st.attr(r.dialect, attrInvalid)
					return true
				}
				s.writes = append(s.writes, pendingWrite{tid: tid, dialect: r.dialect, target: target, v: cv, priority: r.priority, src: k, srcIdx: i, movable: true, alt: r.alt, altID: r.altID})
			case ki.json != nil:
				n.mapJSON(ki.json, k, i, v, it, s, st)
			case ki.msg != nil:
				s.msgs.exact = append(s.msgs.exact, exactMsg{src: ki.msg, key: k, value: v.AsString()})
			default:
				// A detection marker with nothing to map: kept; reported
				// unless the dialect declares it as passed through.
				if p := t.matchPrefix(firstSegment(k), k); p == nil || p.kind != prefixPassthrough {
					s.unmapped = append(s.unmapped, k)
					st.attr(ki.dialect, attrUnmappedOutcome)
				}
			}
			return true
		}
		if p := cl.p; p != nil {
			switch p.kind {
			case prefixMessages:
				if s.msgs.addIndexed(p.msg, k, v.AsString()) {
					return true
				}
			case prefixPassthrough:
				return true
			}
		}
		seg := cl.seg
		mask := t.nsMask[seg]
		if mask == 0 {
			return true
		}
		// Under a foreign namespace with no rule: reported, kept. Generic
		// namespaces (input, session, ...) only count for the detected dialect.
		if seg == "gen_ai" || (d >= 0 && mask&(1<<uint(d)) != 0) {
			s.unmapped = append(s.unmapped, k)
			dd := d
			if seg == "gen_ai" && d < 0 {
				dd = t.legacyIdx
			}
			st.attr(dd, attrUnmappedOutcome)
		}
		return true
	})
	if it.isSpan {
		n.collectEvents(it, s)
	}
	if !s.msgs.empty() {
		n.buildMessages(it, s, st)
	}
	if wrapper {
		// Outer spans aggregate their children's usage: keep it out of
		// gen_ai.usage.* so that nothing sums it twice.
		for i := range s.writes {
			if strings.HasPrefix(s.writes[i].target, attrUsagePrefix) {
				s.writes[i].target = attrRollupPrefix + strings.TrimPrefix(s.writes[i].target, attrUsagePrefix)
				s.writes[i].tid = t.targetID(s.writes[i].target)
			}
		}
	}
	changed := n.applyWrites(it, s, st, sc)
	for _, tr := range s.totals {
		n.checkTotal(it, tr, s, st, sc)
	}
	// The annotations are written before the originals go, so that they
	// can take the storage of removed string values (the removal set is
	// final once the writes are settled).
	if n.cfg.Annotate && !it.noAnnotate {
		if d >= 0 {
			v := it.attrs.PutEmpty(attrDialect)
			s.lendStr(v)
			v.SetStr(t.dialects[d].name)
			changed = true
		}
		putList(it.attrs, attrUnmapped, s.unmapped, s)
		putList(it.attrs, attrConflicts, s.conflicts, s)
	}
	if rm := n.removals(s); rm {
		// One compaction pass; RemoveIf visits the entries in order, so the
		// visit count is the attribute index of the scan (entries added
		// since are past the scanned ones and never removed here).
		j := -1
		it.attrs.RemoveIf(func(string, pcommon.Value) bool {
			j++
			return j < len(s.keys) && (n.cfg.RemoveOriginals && hasBit(s.remove, j) || hasBit(s.force, j))
		})
		changed = true
	}
	return changed || len(s.writes) > 0
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

// mapJSON parses a JSON attribute (llm.invocation_parameters, ...) into its
// fields' targets. Unknown fields keep the attribute and are reported.
func (n *normalizer) mapJSON(jr *jsonRule, k string, idx int, v pcommon.Value, it *item, s *scratch, st *batchStats) {
	complete := true
	field := func(f string, x any) {
		r, ok := jr.fields[f]
		if !ok || r.ignore {
			complete = complete && ok
			return
		}
		switch t := x.(type) {
		case json.Number:
			x = string(t)
		case rawValue:
			var arr []any
			if json.Unmarshal([]byte(t), &arr) != nil {
				complete = false
				return
			}
			x = arr
		}
		cv, ok := r.convert(x, it.start)
		if !ok {
			complete = false
			return
		}
		s.writes = append(s.writes, pendingWrite{tid: r.toID, dialect: jr.dialect, target: r.to, v: cv, priority: r.priority, src: k, srcIdx: idx, altID: -1})
	}
	ok := true
	before := len(s.writes)
	if v.Type() == pcommon.ValueTypeMap {
		for f, x := range v.Map().AsRaw() {
			field(f, x)
		}
	} else {
		// Strings and numbers (the usual members) are converted without
		// boxing them into interfaces.
		ok = scanMembers(v.AsString(), func(f string, kind byte, text string) {
			switch kind {
			case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				r, found := jr.fields[f]
				if !found || r.ignore {
					complete = complete && found
					return
				}
				cv, good := r.convertString(text, it.start)
				if !good {
					complete = false
					return
				}
				s.writes = append(s.writes, pendingWrite{tid: r.toID, dialect: jr.dialect, target: r.to, v: cv, priority: r.priority, src: k, srcIdx: idx, altID: -1})
			case 't':
				field(f, true)
			case 'f':
				field(f, false)
			case 'n':
				field(f, nil)
			default:
				field(f, rawValue(text))
			}
		})
	}
	if !ok {
		s.writes = s.writes[:before] // nothing from a malformed value
		s.unmapped = append(s.unmapped, k)
		st.attr(jr.dialect, attrInvalid)
		s.skip = append(s.skip, k)
		return
	}
	if !complete {
		// Some fields have no GenAI equivalent: the attribute stays.
		s.unmapped = append(s.unmapped, k)
		st.attr(jr.dialect, attrUnmappedOutcome)
		s.skip = append(s.skip, k)
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
		// Room for every write and the annotations and derived values that
		// follow: the values read below stay where they are while the
		// winners are appended, so that they can be moved.
		it.attrs.EnsureCapacity(it.attrs.Len() + len(s.writes) + 16)
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
		existing, ok := n.lookup(it.attrs, w.tid, w.target, sc)
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
		n.settle(it, s, st, w, valueOf(it.attrs, w.target), &changed)
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
			_, risky = n.lookup(it.attrs, w.tid, w.target, sc)
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
			dst := it.attrs.PutEmpty(target)
			s.vals[j].MoveTo(dst)
			clearBit(s.free, j)
			w.v.set(dst)
			return
		}
	}
	w.v.put(it.attrs, target)
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

// lookup finds an attribute, using the scan's presence bits for official names.
func (n *normalizer) lookup(m pcommon.Map, tid int, name string, sc *scan) (pcommon.Value, bool) {
	if tid >= 0 && tid < n.t.nTracked && sc.present[tid>>6]&(1<<(tid&63)) == 0 {
		return pcommon.Value{}, false
	}
	return m.Get(name)
}

// settle handles a write whose target already holds a value.
func (n *normalizer) settle(it *item, s *scratch, st *batchStats, w *pendingWrite, existing pcommon.Value, changed *bool) {
	switch {
	case w.v.equal(existing):
		n.consumeWrite(s, w)
		st.attr(w.dialect, attrMapped)
	case w.alt != "" && !hasKey(it.attrs, w.alt):
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

func hasKey(m pcommon.Map, k string) bool {
	_, ok := m.Get(k)
	return ok
}

func valueOf(m pcommon.Map, k string) pcommon.Value {
	if v, ok := m.Get(k); ok {
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

// dialectOf is dialectOfKey from the scan's classes for the item's keys.
func (n *normalizer) dialectOf(s *scratch, k string) int {
	i := s.index(k)
	if i < 0 || i >= len(s.cls) {
		return n.dialectOfKey(k)
	}
	switch c := s.cls[i]; {
	case c.kind == clsExact:
		return c.ki.dialect
	case c.p != nil:
		return c.p.dialect
	}
	return n.dialectOfKey(k)
}

func (n *normalizer) dialectOfKey(k string) int {
	if ki, ok := n.t.exact[k]; ok {
		return ki.dialect
	}
	if k != "" {
		if p := n.t.matchPrefix(firstSegment(k), k); p != nil {
			return p.dialect
		}
	}
	return -1
}

// checkTotal drops a foreign total when it equals the sum of its parts, and
// keeps and reports it otherwise.
func (n *normalizer) checkTotal(it *item, tr totalRef, s *scratch, st *batchStats, sc *scan) {
	r := tr.r
	var tv pcommon.Value
	if tr.idx < len(s.vals) {
		tv = s.vals[tr.idx]
	} else {
		tv, _ = it.attrs.Get(r.key)
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
		pv, found := it.attrs.Get(p)
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
