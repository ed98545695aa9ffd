package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// outBatch is a batch ready to be handed to the next consumer.
type outBatch struct {
	ctx       context.Context
	td        ptrace.Traces
	recv      int // received spans in it (composites count once)
	summaries int // summary spans in it
	bytes     int64
	trigger   string
}

// shard batches the data of one metadata combination.
type shard struct {
	key string
	ctx context.Context // carries the combination's client metadata downstream

	td        ptrace.Traces
	spans     int
	recv      int
	summaries int
	bytes     int64 // upper bound of the encoded size of td
	started   time.Time

	// Destinations of the current scan's resources and scopes in td; valid
	// for one add call and until the next flush.
	dstRes   map[int32]ptrace.ResourceSpans
	dstScope map[int32]ptrace.ScopeSpans
}

// batcher cuts batches bounded by spans and by encoded bytes.
type batcher struct {
	maxSpans int
	maxBytes int64
	held     *heldCounters
}

// heldCounters is what sits in open batches (for the memory limit and gauges).
type heldCounters struct {
	spans int64
	bytes int64
}

func newShard(key string, md map[string][]string) *shard {
	ctx := context.Background()
	if len(md) > 0 {
		ctx = client.NewContext(ctx, client.Info{Metadata: client.NewMetadata(md)})
	}
	return &shard{key: key, ctx: ctx, td: ptrace.NewTraces(),
		dstRes: map[int32]ptrace.ResourceSpans{}, dstScope: map[int32]ptrace.ScopeSpans{}}
}

func (b *batcher) flush(sh *shard, trigger string, out []outBatch) []outBatch {
	if sh.spans == 0 {
		return out
	}
	out = append(out, outBatch{ctx: sh.ctx, td: sh.td, recv: sh.recv, summaries: sh.summaries, bytes: sh.bytes, trigger: trigger})
	b.held.spans -= int64(sh.recv)
	b.held.bytes -= sh.bytes
	sh.td = ptrace.NewTraces()
	sh.spans, sh.recv, sh.summaries, sh.bytes = 0, 0, 0, 0
	clear(sh.dstRes)
	clear(sh.dstScope)
	return out
}

// fits reports whether spans/bytes more fit in the shard's open batch, and
// if not, which limit they hit.
func (b *batcher) fits(sh *shard, spans int, bytes int64) (bool, string) {
	if sh.spans+spans > b.maxSpans {
		return false, triggerSpans
	}
	if sh.bytes+bytes > b.maxBytes {
		return false, triggerBytes
	}
	return true, ""
}

func (b *batcher) note(sh *shard, now time.Time) {
	if sh.spans == 0 {
		sh.started = now
	}
}

// addWhole moves all of td into the shard, flushing first if it does not fit.
// td must fit in an empty batch.
func (b *batcher) addWhole(sh *shard, td ptrace.Traces, spans, recv, summaries int, bytes int64, now time.Time, out []outBatch) []outBatch {
	if ok, trigger := b.fits(sh, spans, bytes); !ok {
		out = b.flush(sh, trigger, out)
	}
	b.note(sh, now)
	td.ResourceSpans().MoveAndAppendTo(sh.td.ResourceSpans())
	clear(sh.dstRes)
	clear(sh.dstScope)
	sh.spans += spans
	sh.recv += recv
	sh.summaries += summaries
	sh.bytes += bytes
	b.held.spans += int64(recv)
	b.held.bytes += bytes
	if sh.spans >= b.maxSpans {
		out = b.flush(sh, triggerSpans, out)
	}
	return out
}

// add puts the live spans of sc into the shard's batches. When nothing was
// removed and the request fits a batch, it moves whole; otherwise trace by
// trace, each trace's spans together when they fit a batch, and split in
// parent-first order when they do not.
func (b *batcher) add(sh *shard, sc *scan, now time.Time, out []outBatch) []outBatch {
	live := sc.live()
	if live == 0 {
		return out
	}
	if sc.removed == 0 {
		if total := sc.total(); live <= b.maxSpans && total <= b.maxBytes {
			return b.addWhole(sh, sc.td, live, live, 0, total, now, out)
		}
	}
	clear(sh.dstRes)
	clear(sh.dstScope)
	if sc.chunks[0].order == nil {
		sc.groupChunks()
	}
	for ci := range sc.chunks {
		c := &sc.chunks[ci]
		n, cost := b.chunkCost(sc, c)
		if n == 0 {
			continue
		}
		if ok, trigger := b.fits(sh, n, cost); !ok {
			if n <= b.maxSpans && cost <= b.maxBytes {
				out = b.flush(sh, trigger, out)
			} else {
				order := parentFirst(sc, c.order)
				for _, i := range order {
					out = b.addSpan(sh, sc, i, now, out)
				}
				continue
			}
		}
		for _, i := range c.order {
			out = b.addSpan(sh, sc, i, now, out)
		}
	}
	return out
}

// chunkCost is the live span count of c and an upper bound of the bytes it
// adds to a batch, counting its resources and scopes as new.
func (b *batcher) chunkCost(sc *scan, c *chunk) (int, int64) {
	n := 0
	var cost int64
	lastScope := int32(-1)
	lastRes := int32(-1)
	for _, i := range c.order {
		r := &sc.spans[i]
		if r.flags&flagRemoved != 0 {
			continue
		}
		n++
		cost += spanCost(int(r.size))
		if r.scope != lastScope {
			lastScope = r.scope
			s := &sc.scopes[r.scope]
			cost += int64(s.header) + frameMax
			if s.resource != lastRes {
				lastRes = s.resource
				cost += int64(sc.resources[s.resource].header) + frameMax
			}
		}
	}
	return n, cost
}

// addSpan moves one live span into the shard's open batch, creating its
// resource and scope there when needed and flushing first when it would not fit.
func (b *batcher) addSpan(sh *shard, sc *scan, i int32, now time.Time, out []outBatch) []outBatch {
	r := &sc.spans[i]
	if r.flags&(flagRemoved|flagMoved) != 0 {
		return out
	}
	scope := &sc.scopes[r.scope]
	res := &sc.resources[scope.resource]
	need := spanCost(int(r.size))
	_, haveScope := sh.dstScope[r.scope]
	_, haveRes := sh.dstRes[scope.resource]
	if !haveScope {
		need += int64(scope.header) + frameMax
		if !haveRes {
			need += int64(res.header) + frameMax
		}
	}
	if ok, trigger := b.fits(sh, 1, need); !ok {
		out = b.flush(sh, trigger, out)
		need = spanCost(int(r.size)) + int64(scope.header) + int64(res.header) + 2*frameMax
	}
	b.note(sh, now)
	dst, ok := sh.dstScope[r.scope]
	if !ok {
		drs, ok := sh.dstRes[scope.resource]
		if !ok {
			drs = sh.td.ResourceSpans().AppendEmpty()
			res.rs.Resource().CopyTo(drs.Resource())
			drs.SetSchemaUrl(res.rs.SchemaUrl())
			sh.dstRes[scope.resource] = drs
		}
		dst = drs.ScopeSpans().AppendEmpty()
		scope.ss.Scope().CopyTo(dst.Scope())
		dst.SetSchemaUrl(scope.ss.SchemaUrl())
		sh.dstScope[r.scope] = dst
	}
	r.span.MoveTo(dst.Spans().AppendEmpty())
	r.flags |= flagMoved
	sh.spans++
	sh.recv++
	sh.bytes += need
	b.held.spans++
	b.held.bytes += need
	if sh.spans >= b.maxSpans {
		out = b.flush(sh, triggerSpans, out)
	}
	return out
}

// parentFirst orders a chunk's span indices so that a span comes after its
// parent when both are in the chunk (by depth, stable otherwise); a trace
// split across batches then never sends a child before its parent.
func parentFirst(sc *scan, order []int32) []int32 {
	idx := make(map[uint64]int32, len(order))
	for k, i := range order {
		idx[sid(sc.spans[i].span.SpanID())] = int32(k)
	}
	parents := make([]int32, len(order))
	for k, i := range order {
		parents[k] = -1
		if p, ok := idx[sid(sc.spans[i].span.ParentSpanID())]; ok && p != int32(k) {
			parents[k] = p
		}
	}
	d := depths(parents)
	pos := make([]int32, len(order))
	for k := range pos {
		pos[k] = int32(k)
	}
	slices.SortStableFunc(pos, func(a, b int32) int { return int(d[a] - d[b]) })
	out := make([]int32, len(order))
	for k, p := range pos {
		out[k] = order[p]
	}
	return out
}
