package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// frameMax is the most a length-delimited field adds around its body: one
// tag byte and a varint length of at most five bytes.
const frameMax = 6

// varintLen is the encoded length of v as a protobuf varint.
func varintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// spanCost is what a span of encoded size s adds to its ScopeSpans message.
func spanCost(s int) int64 { return int64(s + 1 + varintLen(uint64(s))) }

// Span flags.
const (
	flagRemoved  = 1 << iota // dropped or folded: not forwarded
	flagTooLarge             // larger than a batch can hold, even after limits
	flagModified             // changed by the ladder: size must be recomputed
	flagMoved                // moved into a batch
)

type spanRef struct {
	span  ptrace.Span
	scope int32 // index into scan.scopes
	chunk int32 // index into scan.chunks
	size  int32 // encoded size of the span
	flags uint8
}

type scopeRef struct {
	ss       ptrace.ScopeSpans
	resource int32
	header   int32 // encoded size of the ScopeSpans without its spans
}

type resourceRef struct {
	rs     ptrace.ResourceSpans
	header int32 // encoded size of the ResourceSpans without its scopes
	spans  int
	bytes  int64
}

// chunk is the part of one trace that arrived in one request.
type chunk struct {
	tid      pcommon.TraceID
	st       *traceState
	n        int
	bytes    int64 // sum of spanCost
	first    int32 // index of its first span
	contig   bool  // its spans are sc.spans[first:first+n]
	tooLarge bool
	slow     bool    // goes through the ladder
	skip     bool    // not tracked: no trace budget configured
	order    []int32 // span indices, filled only when the chunk needs them
	kept     keptNotes
}

// scan is one request, measured: every span's size and trace, grouped.
type scan struct {
	td        ptrace.Traces
	spans     []spanRef
	scopes    []scopeRef
	resources []resourceRef
	chunks    []chunk
	pairs     []idPair // each span's id and parent id, by span index
	index     map[pcommon.TraceID]int32
	removed   int // spans flagged removed
	limits    limitResult
}

var marshaler = &ptrace.ProtoMarshaler{}

func (sc *scan) reset() {
	sc.td = ptrace.Traces{}
	clear(sc.spans) // drop references to the request's spans
	sc.spans = sc.spans[:0]
	clear(sc.scopes)
	sc.scopes = sc.scopes[:0]
	clear(sc.resources)
	sc.resources = sc.resources[:0]
	for i := range sc.chunks {
		sc.chunks[i] = chunk{}
	}
	sc.chunks = sc.chunks[:0]
	sc.pairs = sc.pairs[:0]
	clear(sc.index)
	sc.removed = 0
	sc.limits = limitResult{}
}

// measure fills sc from td. With limits set, span limits are applied to
// every span first (span_limits.apply: always). A span that cannot fit in a
// batch of maxBatch bytes even alone is flagged; the ladder applies the span
// limits to it and drops it if it still does not fit.
//
// This is the one pass over every span that the common path makes: each
// span's encoded size, its trace, ids and start time.
func (sc *scan) measure(td ptrace.Traces, limits *spanLimits, maxBatch int64) {
	sc.td = td
	if sc.index == nil {
		sc.index = map[pcommon.TraceID]int32{}
	}
	last := int32(-1)
	var lastTID pcommon.TraceID
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		ri := int32(len(sc.resources))
		sc.resources = append(sc.resources, resourceRef{rs: rs, header: int32(resourceHeaderSize(rs))})
		res := &sc.resources[ri]
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			si := int32(len(sc.scopes))
			sc.scopes = append(sc.scopes, scopeRef{ss: ss, resource: ri, header: int32(scopeHeaderSize(ss))})
			headers := int64(res.header) + int64(sc.scopes[si].header) + 2*frameMax
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				size, within := measureSpan(span, limits)
				if limits != nil && !within {
					sc.limits.add(limits.apply(span))
					size = spanSize(span)
				}
				cost := spanCost(size)
				var flags uint8
				if cost+headers > maxBatch {
					flags = flagTooLarge
				}
				tid := span.TraceID()
				if last < 0 || tid != lastTID {
					ci, ok := sc.index[tid]
					if !ok {
						ci = int32(len(sc.chunks))
						sc.chunks = append(sc.chunks, chunk{tid: tid, first: int32(len(sc.spans)), contig: true})
						sc.index[tid] = ci
					} else {
						sc.chunks[ci].contig = false
					}
					last, lastTID = ci, tid
				}
				c := &sc.chunks[last]
				c.n++
				c.bytes += cost
				if flags&flagTooLarge != 0 {
					c.tooLarge = true
				}
				p := idPair{id: sid(span.SpanID()), parent: sid(span.ParentSpanID())}
				c.kept.note(p.id, p.parent, span.StartTimestamp())
				sc.pairs = append(sc.pairs, p)
				res.spans++
				res.bytes += cost
				sc.spans = append(sc.spans, spanRef{span: span, scope: si, chunk: last, size: int32(size), flags: flags})
			}
		}
	}
}

// total is an upper bound of the encoded size of the request's live spans
// with their resources and scopes.
func (sc *scan) total() int64 {
	var t int64
	for _, r := range sc.resources {
		t += int64(r.header) + frameMax
	}
	for _, s := range sc.scopes {
		t += int64(s.header) + frameMax
	}
	for i := range sc.spans {
		if sc.spans[i].flags&flagRemoved == 0 {
			t += spanCost(int(sc.spans[i].size))
		}
	}
	return t
}

// live is the number of spans not removed.
func (sc *scan) live() int { return len(sc.spans) - sc.removed }

// groupChunks fills each chunk's order with its span indices.
func (sc *scan) groupChunks() {
	for i := range sc.chunks {
		sc.chunks[i].order = make([]int32, 0, sc.chunks[i].n)
	}
	for i := range sc.spans {
		c := &sc.chunks[sc.spans[i].chunk]
		c.order = append(c.order, int32(i))
	}
}

// resourceHeaderSize is the encoded size of rs without its ScopeSpans.
func resourceHeaderSize(rs ptrace.ResourceSpans) int {
	tmp := ptrace.NewScopeSpansSlice()
	rs.ScopeSpans().MoveAndAppendTo(tmp)
	n := marshaler.ResourceSpansSize(rs)
	tmp.MoveAndAppendTo(rs.ScopeSpans())
	return n
}

// scopeHeaderSize is the encoded size of ss without its spans.
func scopeHeaderSize(ss ptrace.ScopeSpans) int {
	tmp := ptrace.NewSpanSlice()
	ss.Spans().MoveAndAppendTo(tmp)
	n := marshaler.ScopeSpansSize(ss)
	tmp.MoveAndAppendTo(ss.Spans())
	return n
}
