package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"encoding/json"
	"runtime"
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

// process normalizes one item and records what happened in st.
func (n *normalizer) process(it *item, st *batchStats) {
	s := n.getScratch()
	n.processWith(it, st, s)
	n.putScratch(s)
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

// mapAttributes is the second pass: it collects target values, resolves
// priorities and conflicts, writes them and removes consumed originals.
func (n *normalizer) mapAttributes(it *item, d int, s *scratch, st *batchStats, sc *scan) bool {
	op, wrapper := n.seedWrites(it, d, s, sc.hasOp)
	s.totals = s.totals[:0]
	i := -1
	it.attrs.Range(func(k string, v pcommon.Value) bool {
		i++
		n.mapKey(it, d, op, i, k, v, s, st)
		return true
	})
	if it.isSpan {
		n.collectEvents(it, s)
	}
	if !s.msgs.empty() {
		n.buildMessages(it, s, st)
	}
	if wrapper {
		n.rollUpUsage(s)
	}
	changed := n.applyWrites(it, s, st, sc)
	for _, tr := range s.totals {
		n.checkTotal(it, tr, s, st, sc)
	}
	// The annotations are written before the originals go, so that they
	// can take the storage of removed string values (the removal set is
	// final once the writes are settled).
	if n.annotate(it, d, s) {
		changed = true
	}
	if n.removeOriginals(it, s) {
		changed = true
	}
	s.unstage(it)
	return changed || len(s.writes) > 0
}

// seedWrites adds the writes that come from the item as a whole rather than
// from one key: gen_ai.operation.name from the dialect's sources (or the
// fixed spelling of the one present, hadOp) and a combined provider value
// (OpenInference llm.provider + llm.system). It returns the operation and
// whether the item is a wrapper span of its dialect.
func (n *normalizer) seedWrites(it *item, d int, s *scratch, hadOp bool) (string, bool) {
	t := n.t
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
	if d < 0 || len(t.dialects[d].pairAttrs) != 2 {
		return op, wrapper
	}
	dl := t.dialects[d]
	a, okA := it.attrs.Get(dl.pairAttrs[0])
	b, okB := it.attrs.Get(dl.pairAttrs[1])
	if okA && okB {
		if p, ok := lookupPair(dl.pairValues, a.AsString(), b.AsString()); ok {
			s.writes = append(s.writes, pendingWrite{tid: t.providerID, dialect: d, target: attrProviderName, v: val{s: p}, priority: 0, srcIdx: -1, srcKeys: dl.pairAttrs[:2:2], srcKeyIx: s.indexes(dl.pairAttrs[:2:2])})
			s.skip = append(s.skip, dl.pairAttrs[0], dl.pairAttrs[1])
		}
	}
	return op, wrapper
}

// mapKey maps the item's attribute k (index i in the scan) under dialect d
// and operation op: a write, a message part, a removal or an unmapped key.
func (n *normalizer) mapKey(it *item, d int, op string, i int, k string, v pcommon.Value, s *scratch, st *batchStats) {
	cl := s.cls[i]
	switch cl.kind {
	case clsOwn, clsOfficial:
		return
	case clsExact:
		n.mapExact(it, op, i, k, v, cl.ki, s, st)
		return
	}
	if p := cl.p; p != nil {
		switch p.kind {
		case prefixMessages:
			if s.msgs.addIndexed(p.msg, k, v.AsString()) {
				return
			}
		case prefixPassthrough:
			return
		}
	}
	t := n.t
	seg := cl.seg
	mask := t.nsMask[seg]
	if mask == 0 {
		return
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
}

// mapExact maps a key with an exact table entry ki.
func (n *normalizer) mapExact(it *item, op string, i int, k string, v pcommon.Value, ki *keyInfo, s *scratch, st *batchStats) {
	switch {
	case ki.rule != nil:
		if !s.skipped(k) {
			n.mapRule(it, op, i, k, v, ki.rule, s, st)
		}
	case ki.json != nil:
		n.mapJSON(ki.json, k, i, v, it, s, st)
	case ki.msg != nil:
		s.msgs.exact = append(s.msgs.exact, exactMsg{src: ki.msg, key: k, value: v.AsString()})
	default:
		// A detection marker with nothing to map: kept; reported
		// unless the dialect declares it as passed through.
		if p := n.t.matchPrefix(firstSegment(k), k); p == nil || p.kind != prefixPassthrough {
			s.unmapped = append(s.unmapped, k)
			st.attr(ki.dialect, attrUnmappedOutcome)
		}
	}
}

// mapRule applies a plain rule r to attribute k.
func (n *normalizer) mapRule(it *item, op string, i int, k string, v pcommon.Value, r *rule, s *scratch, st *batchStats) {
	if r.totalOf != nil {
		s.totals = append(s.totals, totalRef{r: r, idx: i})
		return
	}
	target, tid := r.to, r.toID
	if r.on != nil {
		o := r.on[op]
		target, tid = o.to, o.id
	}
	switch {
	case r.ignore || target == targetIgnore:
		setBit(s.remove, i)
		st.attr(r.dialect, attrMapped)
		return
	case target == "":
		s.unmapped = append(s.unmapped, k)
		st.attr(r.dialect, attrUnmappedOutcome)
		return
	}
	cv, ok := r.convertValue(v, it.start)
	if !ok {
		s.unmapped = append(s.unmapped, k)
		st.attr(r.dialect, attrInvalid)
		return
	}
	s.writes = append(s.writes, pendingWrite{tid: tid, dialect: r.dialect, target: target, v: cv, priority: r.priority, src: k, srcIdx: i, movable: true, alt: r.alt, altID: r.altID})
}

// rollUpUsage moves the usage writes of a wrapper span to the roll-up
// names: outer spans aggregate their children's usage, and keeping it out
// of gen_ai.usage.* means nothing sums it twice.
func (n *normalizer) rollUpUsage(s *scratch) {
	for i := range s.writes {
		if strings.HasPrefix(s.writes[i].target, attrUsagePrefix) {
			s.writes[i].target = attrRollupPrefix + strings.TrimPrefix(s.writes[i].target, attrUsagePrefix)
			s.writes[i].tid = n.t.targetID(s.writes[i].target)
		}
	}
}

// annotate writes the otelcol_llm.semconv.* annotations (dialect, unmapped
// keys, conflicts) when they are on; it reports whether it wrote the dialect.
func (n *normalizer) annotate(it *item, d int, s *scratch) bool {
	if !n.cfg.Annotate || it.noAnnotate {
		return false
	}
	changed := false
	if d >= 0 {
		v := s.dest(it).PutEmpty(attrDialect)
		s.lendStr(v)
		v.SetStr(n.t.dialects[d].name)
		changed = true
	}
	putList(s.dest(it), attrUnmapped, s.unmapped, s)
	putList(s.dest(it), attrConflicts, s.conflicts, s)
	return changed
}

// removeOriginals removes the consumed originals (with remove_originals)
// and the forced ones in one compaction pass; it reports whether any went.
func (n *normalizer) removeOriginals(it *item, s *scratch) bool {
	if !n.removals(s) {
		return false
	}
	// RemoveIf visits the entries in order, so the visit count is the
	// attribute index of the scan (entries added since are past the
	// scanned ones and never removed here).
	j := -1
	it.attrs.RemoveIf(func(string, pcommon.Value) bool {
		j++
		return j < len(s.keys) && (n.cfg.RemoveOriginals && hasBit(s.remove, j) || hasBit(s.force, j))
	})
	return true
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
