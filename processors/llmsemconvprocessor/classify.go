package llmsemconvprocessor

import "go.opentelemetry.io/collector/pdata/pcommon"

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
