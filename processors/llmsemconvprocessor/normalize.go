package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"

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

	attrOperationName = "gen_ai.operation.name"
	attrProviderName  = "gen_ai.provider.name"
	attrRequestModel  = "gen_ai.request.model"
	attrResponseModel = "gen_ai.response.model"
	attrFinishReasons = "gen_ai.response.finish_reasons"
	attrInputMessages = "gen_ai.input.messages"
	attrOutputMsgs    = "gen_ai.output.messages"
	attrSystemInstr   = "gen_ai.system_instructions"
	attrToolDefs      = "gen_ai.tool.definitions"
	attrToolArgs      = "gen_ai.tool.call.arguments"
	attrToolResult    = "gen_ai.tool.call.result"
	attrUsagePrefix   = "gen_ai.usage."
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

func isInference(op string) bool {
	switch op {
	case "chat", "text_completion", "generate_content", "embeddings":
		return true
	}
	return false
}

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
	srcKeys  []string
}

// scratch is the per-item working memory, reused through a pool.
type scratch struct {
	writes    []pendingWrite
	remove    map[string]struct{}
	unmapped  []string
	conflicts []string
	skip      []string
	force     []string // originals removed whatever remove_originals says (content policy)
	best      []int32  // per target id: index of the winning write, -1 none
	touched   []int
	msgs      msgBuilder
	events    []any
}

func (s *scratch) reset() {
	s.writes = s.writes[:0]
	clear(s.remove)
	s.unmapped = s.unmapped[:0]
	s.conflicts = s.conflicts[:0]
	s.skip = s.skip[:0]
	s.force = s.force[:0]
	for _, id := range s.touched {
		s.best[id] = -1
	}
	s.touched = s.touched[:0]
	s.msgs.reset()
	s.events = s.events[:0]
}

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
	n.pool.New = func() any {
		s := &scratch{remove: map[string]struct{}{}, best: make([]int32, len(t.names))}
		for i := range s.best {
			s.best[i] = -1
		}
		return s
	}
	return n, nil
}

// scanItem is the read-only first pass. It allocates nothing.
func (n *normalizer) scanItem(it *item, sc *scan) {
	t := n.t
	it.attrs.Range(func(k string, _ pcommon.Value) bool {
		if ki, ok := t.exact[k]; ok {
			sc.foreign++
			if ki.marker {
				sc.score[ki.dialect] += 10
			} else {
				sc.score[ki.dialect]++
			}
			return true
		}
		seg := firstSegment(k)
		if seg == ownNamespace {
			return true
		}
		if seg == "gen_ai" {
			if oi, ok := t.official[k]; ok {
				sc.present[oi.id>>6] |= 1 << (oi.id & 63)
				sc.content |= 1 << oi.content
				switch k {
				case attrOperationName:
					sc.hasOp = true
				case "gen_ai.usage.output_tokens":
					sc.hasOutTok = true
				case attrRequestModel, attrResponseModel:
					sc.hasModel = true
				}
				return true
			}
		}
		if p := t.matchPrefix(seg, k); p != nil {
			if p.marker {
				sc.score[p.dialect] += 10
			} else {
				sc.score[p.dialect]++
			}
			sc.foreign++
			return true
		}
		if t.nsMask[seg] != 0 {
			sc.foreign++
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
	var sc scan
	n.scanItem(it, &sc)
	if !n.needsWork(it, &sc) {
		st.item(-1, outcomeUnchanged)
		return
	}
	s := n.pool.Get().(*scratch)
	defer n.pool.Put(s)
	s.reset()
	d := n.detect(&sc)
	changed := n.mapAttributes(it, d, s, st, &sc)
	if it.isSpan && n.finishSpan(it, d, s) {
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
func (n *normalizer) processEventAttrs(it *item, st *batchStats) {
	var sc scan
	n.scanItem(it, &sc)
	if !n.needsWork(it, &sc) {
		return
	}
	s := n.pool.Get().(*scratch)
	defer n.pool.Put(s)
	s.reset()
	it.noAnnotate = true
	n.mapAttributes(it, n.detect(&sc), s, st, &sc)
	n.policy.apply(it.attrs, st)
}

// operation finds gen_ai.operation.name from the dialect's sources.
func (n *normalizer) operation(it *item, d int) string {
	if v, ok := it.attrs.Get(attrOperationName); ok {
		return v.AsString()
	}
	if d < 0 {
		return ""
	}
	for _, op := range n.t.dialects[d].ops {
		if op.attribute != "" {
			if v, ok := it.attrs.Get(op.attribute); ok {
				if o, ok := op.values[lowerASCII(v.AsString())]; ok {
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

func (n *normalizer) isWrapper(it *item, d int) bool {
	if d < 0 {
		return false
	}
	dl := n.t.dialects[d]
	if dl.wrapperAttr == "" {
		return false
	}
	v, ok := it.attrs.Get(dl.wrapperAttr)
	return ok && dl.wrapperValues[lowerASCII(v.AsString())]
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
	op := n.operation(it, d)
	_, hadOp := it.attrs.Get(attrOperationName)
	wrapper := n.isWrapper(it, d)
	if op != "" && !hadOp && !wrapper {
		s.writes = append(s.writes, pendingWrite{tid: t.targetID(attrOperationName), dialect: d, target: attrOperationName, v: val{s: op}, priority: 0})
	} else if hadOp {
		if fixed, ok := t.values["operation"][lowerASCII(op)]; ok && fixed != op {
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
			if p, ok := dl.pairValues[lowerASCII(a.AsString())+"/"+lowerASCII(b.AsString())]; ok {
				s.writes = append(s.writes, pendingWrite{tid: t.targetID(attrProviderName), dialect: d, target: attrProviderName, v: val{s: p}, priority: 0, srcKeys: []string{dl.pairAttrs[0], dl.pairAttrs[1]}})
				s.skip = append(s.skip, dl.pairAttrs[0], dl.pairAttrs[1])
			}
		}
	}
	var totals []*rule
	it.attrs.Range(func(k string, v pcommon.Value) bool {
		if ki, ok := t.exact[k]; ok {
			switch {
			case ki.rule != nil:
				if s.skipped(k) {
					return true
				}
				r := ki.rule
				if r.totalOf != nil {
					totals = append(totals, r)
					return true
				}
				if r.ignore {
					n.consume(s, k)
					st.attr(r.dialect, attrMapped)
					return true
				}
				target := r.to
				if r.on != nil {
					target = r.on[op]
				}
				if target == targetIgnore {
					n.consume(s, k)
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
				tid := r.toID
				if r.on != nil {
					tid = t.targetID(target)
				}
				s.writes = append(s.writes, pendingWrite{tid: tid, dialect: r.dialect, target: target, v: cv, priority: r.priority, src: k, alt: r.alt, altID: r.altID})
			case ki.json != nil:
				n.mapJSON(ki.json, k, v, it, s, st)
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
		seg := firstSegment(k)
		if seg == ownNamespace {
			return true
		}
		if seg == "gen_ai" {
			if _, ok := t.official[k]; ok {
				return true
			}
		}
		if p := t.matchPrefix(seg, k); p != nil {
			switch p.kind {
			case prefixMessages:
				if s.msgs.addIndexed(p.msg, k, v.AsString()) {
					return true
				}
			case prefixPassthrough:
				return true
			}
		}
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
	for _, r := range totals {
		n.checkTotal(it, r, s, st)
	}
	if (n.cfg.RemoveOriginals && len(s.remove) > 0) || len(s.force) > 0 {
		it.attrs.RemoveIf(func(k string, _ pcommon.Value) bool {
			if _, ok := s.remove[k]; ok && n.cfg.RemoveOriginals {
				return true
			}
			for _, f := range s.force {
				if f == k {
					return true
				}
			}
			return false
		})
		changed = true
	}
	if n.cfg.Annotate && !it.noAnnotate {
		if d >= 0 {
			it.attrs.PutStr(attrDialect, t.dialects[d].name)
			changed = true
		}
		putList(it.attrs, attrUnmapped, s.unmapped)
		putList(it.attrs, attrConflicts, s.conflicts)
	}
	return changed || len(s.writes) > 0
}

func putList(m pcommon.Map, k string, list []string) {
	if len(list) == 0 {
		return
	}
	sort.Strings(list)
	sl := m.PutEmptySlice(k)
	sl.EnsureCapacity(len(list))
	for _, e := range list {
		sl.AppendEmpty().SetStr(e)
	}
}

func (n *normalizer) consume(s *scratch, keys ...string) {
	for _, k := range keys {
		s.remove[k] = struct{}{}
	}
}

// mapJSON parses a JSON attribute (llm.invocation_parameters, ...) into its
// fields' targets. Unknown fields keep the attribute and are reported.
func (n *normalizer) mapJSON(jr *jsonRule, k string, v pcommon.Value, it *item, s *scratch, st *batchStats) {
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
		s.writes = append(s.writes, pendingWrite{tid: r.toID, dialect: jr.dialect, target: r.to, v: cv, priority: r.priority, src: k, altID: -1})
	}
	ok := true
	before := len(s.writes)
	if v.Type() == pcommon.ValueTypeMap {
		for f, x := range v.Map().AsRaw() {
			field(f, x)
		}
	} else {
		ok = scanObject(v.AsString(), field)
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
		w.v.put(it.attrs, w.target)
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
		w.v.put(it.attrs, w.alt)
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
	delete(s.remove, w.src)
	for _, k := range w.srcKeys {
		delete(s.remove, k)
	}
}

func (n *normalizer) consumeWrite(s *scratch, w *pendingWrite) {
	if w.src != "" && !s.skipped(w.src) {
		s.remove[w.src] = struct{}{}
	}
	for _, k := range w.srcKeys {
		s.remove[k] = struct{}{}
	}
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
func (n *normalizer) checkTotal(it *item, r *rule, s *scratch, st *batchStats) {
	tv, _ := it.attrs.Get(r.key)
	total, ok := toInt(rawOf(tv))
	var sum int64
	for _, p := range r.totalOf {
		pv, found := it.attrs.Get(p)
		if !found {
			ok = false
			break
		}
		x, good := toInt(rawOf(pv))
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
