package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

// Errors returned to the caller. Memory pressure and rate limits are
// retryable (the caller should back off and resend); too many metadata
// combinations is permanent, as in the batch processor.
var (
	errMemoryLimit   = errors.New("span_guard: memory limit reached (memory_limit_mib), data refused; retry later")
	errRateLimited   = errors.New("span_guard: rate limit exceeded (rate_limit), data refused; retry later")
	errTooManyShards = errors.New("span_guard: too many metadata_keys value combinations (metadata_cardinality_limit)")
	errShutdown      = errors.New("span_guard: processor is shut down")
)

// Reasons a trace state is released (otelcol_span_guard_traces_released).
const (
	reasonShutdown = "shutdown"
	reasonWindow   = "window"
	reasonCapacity = "capacity"
)

type spanGuard struct {
	cfg          *Config
	logger       *zap.Logger
	next         consumer.Traces
	tel          *telemetry
	limits       spanLimits
	alwaysLimits bool
	memLimit     int64
	tick         time.Duration
	now          func() time.Time

	mu      sync.Mutex
	shards  map[string]*shard
	traces  *traceTable
	batcher batcher
	held    heldCounters
	rate    *rateLimiter
	closed  bool

	scans     sync.Pool
	started   bool
	stop      chan struct{}
	done      chan struct{}
	startOnce sync.Once
	stopOnce  sync.Once
}

func newSpanGuard(set processor.Settings, cfg *Config, next consumer.Traces) (*spanGuard, error) {
	g := &spanGuard{
		cfg:          cfg,
		logger:       set.Logger,
		next:         next,
		limits:       newSpanLimits(cfg.SpanLimits),
		alwaysLimits: cfg.SpanLimits.Apply == limitsAlways,
		memLimit:     int64(cfg.MemoryLimitMiB) << 20,
		tick:         max(cfg.FlushTimeout/4, time.Millisecond),
		now:          time.Now,
		shards:       map[string]*shard{},
		traces:       newTraceTable(cfg.TraceBudget.MaxTraces, cfg.TraceBudget.Window),
		rate:         newRateLimiter(cfg.RateLimit),
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
	}
	g.batcher = batcher{maxSpans: cfg.MaxBatchSpans, maxBytes: int64(cfg.MaxBatchBytes), held: &g.held}
	g.scans.New = func() any { return &scan{} }
	tel, err := newTelemetry(set.TelemetrySettings, g)
	if err != nil {
		return nil, err
	}
	tel.warm()
	g.tel = tel
	return g, nil
}

func (g *spanGuard) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start starts the flush timer.
func (g *spanGuard) Start(context.Context, component.Host) error {
	g.startOnce.Do(func() {
		g.started = true
		go g.loop()
	})
	return nil
}

// Shutdown stops the timer, releases every trace (sending its summary) and
// flushes every open batch to the next consumer.
func (g *spanGuard) Shutdown(context.Context) error {
	var err error
	g.stopOnce.Do(func() {
		g.startOnce.Do(func() {}) // a later Start does nothing
		if g.started {
			close(g.stop)
			<-g.done
		}
		now := g.now()
		g.mu.Lock()
		g.closed = true
		var out []outBatch
		all := g.traces.all()
		for _, st := range all {
			out = g.release(st, now, out)
		}
		for _, sh := range g.shards {
			out = g.batcher.flush(sh, triggerShutdown, out)
		}
		g.mu.Unlock()
		g.countReleased(len(all), reasonShutdown)
		g.send(out)
		err = g.tel.shutdown()
	})
	return err
}

func (g *spanGuard) loop() {
	defer close(g.done)
	t := time.NewTicker(g.tick)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.onTick(g.now())
		}
	}
}

// onTick sends batches older than flush_timeout and releases traces whose
// window ended.
func (g *spanGuard) onTick(now time.Time) {
	g.mu.Lock()
	var out []outBatch
	expired := g.traces.expired(now)
	for _, st := range expired {
		out = g.release(st, now, out)
	}
	for _, sh := range g.shards {
		if sh.spans > 0 && now.Sub(sh.started) >= g.cfg.FlushTimeout {
			out = g.batcher.flush(sh, triggerTimeout, out)
		}
	}
	g.mu.Unlock()
	g.countReleased(len(expired), reasonWindow)
	g.send(out)
}

// ConsumeTraces runs a request through the guard and into the batches.
func (g *spanGuard) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	n := td.SpanCount()
	if n == 0 {
		return nil
	}
	g.tel.received.Add(ctx, int64(n))
	key, md := g.metadataKey(ctx)

	sc := g.scans.Get().(*scan)
	defer func() { sc.reset(); g.scans.Put(sc) }()
	var lim *spanLimits
	if g.alwaysLimits {
		lim = &g.limits
	}
	sc.measure(td, lim, int64(g.cfg.MaxBatchBytes))
	tal := tally{}
	tal.limits(sc.limits)
	now := g.now()

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return g.refuse(ctx, n, reasonShutdown, errShutdown)
	}
	if g.held.bytes+g.traces.mem > g.memLimit {
		g.mu.Unlock()
		return g.refuse(ctx, n, reasonMemoryLimit, errMemoryLimit)
	}
	sh := g.shards[key]
	if sh == nil {
		if len(g.shards) >= max(g.cfg.MetadataCardinalityLimit, 1) {
			g.mu.Unlock()
			return g.refuse(ctx, n, reasonMetadataLimit, consumererror.NewPermanent(errTooManyShards))
		}
		sh = newShard(key, md)
		g.shards[key] = sh
	}
	if g.rate != nil && !g.rate.allow(ctx, sc, now) {
		g.mu.Unlock()
		return g.refuse(ctx, n, reasonRateLimit, errRateLimited)
	}
	out := g.applyBudgets(sc, sh, now, &tal, nil)
	out = g.batcher.add(sh, sc, now, out)
	g.mu.Unlock()

	g.countReleased(tal.evicted, reasonCapacity)
	g.record(ctx, &tal)
	g.send(out)
	return nil
}

func (g *spanGuard) refuse(ctx context.Context, n int, reason string, err error) error {
	g.tel.refused.Add(ctx, int64(n), g.tel.with(attrReason, reason))
	return err
}

// applyBudgets charges each trace of the request to its budget. Traces that
// fit and were never over budget take the fast path; the others go through
// the ladder.
func (g *spanGuard) applyBudgets(sc *scan, sh *shard, now time.Time, tal *tally, out []outBatch) []outBatch {
	b := g.cfg.TraceBudget
	// With no budget at all, traces are tracked only once a span of theirs
	// is too large for a batch (the ladder drops it and keeps its trace
	// connected); the rest is batching alone.
	untracked := b.MaxSpans == 0 && b.MaxBytes == 0
	anySlow := false
	for ci := range sc.chunks {
		c := &sc.chunks[ci]
		if untracked && !c.tooLarge && g.traces.m[c.tid] == nil {
			c.skip = true
			continue
		}
		st, evicted := g.traces.get(c.tid, now, sh)
		if evicted != nil {
			out = g.release(evicted, now, out)
			tal.evicted++
		}
		c.st = st
		st.received += c.n
		if st.ids == nil && !st.guarded {
			st.ids = make([]idPair, 0, c.n)
		}
		// Each forwarded span may still owe its parent a place in the
		// budget, so the fast path stops at half the span budget; past that
		// the ladder accounts for owed parents exactly.
		fits := (b.MaxSpans == 0 || 2*(st.spans+c.n) <= b.MaxSpans) && (b.MaxBytes == 0 || st.bytes+c.bytes <= b.MaxBytes)
		if st.guarded || c.tooLarge || !fits {
			c.slow = true
			anySlow = true
		}
	}
	if anySlow {
		sc.groupChunks()
	}
	// Record the forwarded (span, parent) pairs of the traces that fit: one
	// copy per trace whose spans are contiguous in the request, as they
	// usually are, and one pass over the request for the others.
	scattered := false
	for ci := range sc.chunks {
		c := &sc.chunks[ci]
		if c.skip || c.slow {
			continue
		}
		if c.contig {
			c.st.ids = append(c.st.ids, sc.pairs[c.first:int(c.first)+c.n]...)
		} else {
			scattered = true
		}
	}
	if scattered {
		for i := range sc.spans {
			if c := &sc.chunks[sc.spans[i].chunk]; !c.skip && !c.slow && !c.contig {
				c.st.ids = append(c.st.ids, sc.pairs[i])
			}
		}
	}
	for ci := range sc.chunks {
		c := &sc.chunks[ci]
		if c.skip {
			continue
		}
		if !c.slow {
			st := c.st
			st.mergeKept(&c.kept)
			st.spans += c.n
			st.bytes += c.bytes
		} else {
			l := ladder{cfg: g.cfg, limits: g.limits, sc: sc, c: c, st: c.st, tal: tal}
			l.run()
		}
		g.traces.account(c.st)
	}
	return out
}

// countReleased counts n trace states released for reason, once per
// request or tick rather than once per trace (a counter update costs about
// as much as the rest of releasing a small trace).
func (g *spanGuard) countReleased(n int, reason string) {
	if n > 0 {
		g.tel.tracesReleased.Add(context.Background(), int64(n), g.tel.with(attrReason, reason))
	}
}

// release ends a trace's state and, if the processor changed the trace,
// queues its summary span. The caller counts the release (countReleased).
func (g *spanGuard) release(st *traceState, now time.Time, out []outBatch) []outBatch {
	if !g.cfg.Summary.Enabled || !st.affected() {
		return out
	}
	td := g.summary(st, now)
	size := int64(marshaler.TracesSize(td))
	if size > g.batcher.maxBytes {
		// Too large for a batch: shed the name list, then the resource
		// attributes other than service.name.
		span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		span.Attributes().Remove(attrSumNames)
		span.Attributes().Remove(attrSumNameCounts)
		td.ResourceSpans().At(0).Resource().Attributes().RemoveIf(func(k string, _ pcommon.Value) bool { return k != "service.name" })
		size = int64(marshaler.TracesSize(td))
		if size > g.batcher.maxBytes {
			g.tel.summaries.Add(context.Background(), 1, g.tel.with("outcome", "too_large"))
			g.logger.Warn("summary span larger than max_batch_bytes; not sent", zap.Stringer("trace_id", st.id))
			return out
		}
	}
	return g.batcher.addWhole(st.shard, td, 1, 0, 1, size, now, out)
}

// Attributes of the summary span. Those another component reads (load_report)
// are defined in internal/genai.
const (
	summarySpanName      = genai.SpanGuardSummarySpanName
	attrSummary          = "span_guard.summary"
	attrSumReceived      = genai.SpanGuardAttrSpansReceived
	attrSumForwarded     = "span_guard.spans.forwarded"
	attrSumFolded        = genai.SpanGuardAttrSpansFolded
	attrSumDropped       = genai.SpanGuardAttrSpansDropped
	attrSumDroppedPrefix = genai.SpanGuardAttrSpansDroppedPrefix
	attrSumDroppedBytes  = "span_guard.bytes.dropped"
	attrSumComposites    = "span_guard.composite_spans"
	attrSumReparented    = "span_guard.spans.reparented"
	attrSumTruncated     = "span_guard.attribute_values.truncated"
	attrSumItems         = "span_guard.span_items.dropped"
	attrSumNames         = "span_guard.dropped.names"
	attrSumNameCounts    = "span_guard.dropped.name_counts"
	attrSumOtherNames    = "span_guard.dropped.other_names"
	attrSumBudgetSpans   = "span_guard.budget.max_spans"
	attrSumBudgetBytes   = "span_guard.budget.max_bytes"
	attrSumRootSeen      = "span_guard.root_seen"
)

// summary builds the one span that records what the processor did to a
// trace: a child of the root (or, when the root was not seen, of the parent
// of the earliest forwarded span), spanning the removed spans' time range.
func (g *spanGuard) summary(st *traceState, now time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	if st.hasResource {
		st.resource.CopyTo(rs.Resource())
	}
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	span := ss.Spans().AppendEmpty()
	span.SetTraceID(st.id)
	span.SetSpanID(newSpanID())
	switch {
	case st.rootSeen:
		span.SetParentSpanID(spanID(st.rootID))
	case st.anchorSet:
		span.SetParentSpanID(spanID(st.anchorID))
	}
	span.SetName(summarySpanName)
	span.SetKind(ptrace.SpanKindInternal)
	start, end := st.firstTS, st.lastTS
	if start == 0 || end < start {
		start = pcommon.NewTimestampFromTime(now)
		end = start
	}
	span.SetStartTimestamp(start)
	span.SetEndTimestamp(end)
	a := span.Attributes()
	a.PutBool(attrSummary, true)
	a.PutBool(attrSumRootSeen, st.rootSeen)
	a.PutInt(attrSumReceived, int64(st.received))
	a.PutInt(attrSumForwarded, int64(st.spans))
	a.PutInt(attrSumFolded, int64(st.folded))
	a.PutInt(attrSumDropped, int64(st.dropTotal()))
	for i, r := range dropReasons {
		a.PutInt(attrSumDroppedPrefix+r, int64(st.droppedBy[i]))
	}
	a.PutInt(attrSumDroppedBytes, st.droppedBytes)
	a.PutInt(attrSumComposites, int64(st.composites))
	a.PutInt(attrSumReparented, int64(st.reparented))
	a.PutInt(attrSumTruncated, int64(st.truncated))
	a.PutInt(attrSumItems, int64(st.itemsRemoved))
	a.PutInt(attrSumBudgetSpans, int64(g.cfg.TraceBudget.MaxSpans))
	a.PutInt(attrSumBudgetBytes, g.cfg.TraceBudget.MaxBytes)
	if len(st.names) > 0 {
		names := make([]string, 0, len(st.names))
		for n := range st.names {
			names = append(names, n)
		}
		sortNamesByCount(names, st.names)
		ns := a.PutEmptySlice(attrSumNames)
		cs := a.PutEmptySlice(attrSumNameCounts)
		for _, n := range names {
			ns.AppendEmpty().SetStr(n)
			cs.AppendEmpty().SetInt(int64(st.names[n]))
		}
		a.PutInt(attrSumOtherNames, int64(st.otherNames))
	}
	return td
}

func sortNamesByCount(names []string, counts map[string]int) {
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

func newSpanID() pcommon.SpanID {
	for {
		if v := rand.Uint64(); v != 0 {
			return spanID(v)
		}
	}
}

// send hands batches to the next consumer and counts the outcome. A batch
// the next consumer refuses is lost here (its data came from several
// callers), and counted as dropped with reason export_failed.
func (g *spanGuard) send(out []outBatch) {
	for _, b := range out {
		err := g.next.ConsumeTraces(b.ctx, b.td)
		g.tel.batches.Add(b.ctx, 1, g.tel.with("trigger", b.trigger))
		g.tel.batchBytes.Record(b.ctx, b.bytes)
		if err != nil {
			g.logger.Warn("next consumer refused a batch; its spans are counted as dropped (reason export_failed)",
				zap.Int("spans", b.recv), zap.Int("summary_spans", b.summaries), zap.Error(err))
			if b.recv > 0 {
				g.tel.dropped.Add(b.ctx, int64(b.recv), g.tel.with(attrReason, reasonExportFailed))
			}
			if b.summaries > 0 {
				g.tel.summaries.Add(b.ctx, int64(b.summaries), g.tel.with("outcome", "export_failed"))
			}
			continue
		}
		if b.recv > 0 {
			g.tel.forwarded.Add(b.ctx, int64(b.recv))
		}
		if b.summaries > 0 {
			g.tel.summaries.Add(b.ctx, int64(b.summaries), g.tel.with("outcome", "forwarded"))
		}
	}
}

// record turns a request's tally into counters.
func (g *spanGuard) record(ctx context.Context, t *tally) {
	tel := g.tel
	if t.folded > 0 {
		tel.folded.Add(ctx, int64(t.folded), tel.with(attrReason, reasonSiblingCompression))
	}
	for i, r := range dropReasons {
		if t.dropped[i] > 0 {
			tel.dropped.Add(ctx, int64(t.dropped[i]), tel.with(attrReason, r))
		}
	}
	if t.composites > 0 {
		tel.composites.Add(ctx, int64(t.composites))
	}
	if t.reparented > 0 {
		tel.reparented.Add(ctx, int64(t.reparented))
	}
	if t.truncated > 0 {
		tel.truncatedValues.Add(ctx, int64(t.truncated))
	}
	for _, k := range []struct {
		kind string
		n    int
	}{{"attribute", t.attrs}, {"event", t.events}, {"link", t.links}} {
		if k.n > 0 {
			tel.itemsDropped.Add(ctx, int64(k.n), tel.with("kind", k.kind))
		}
	}
	if t.overBudget > 0 {
		tel.tracesOverBudget.Add(ctx, int64(t.overBudget))
	}
}

// metadataKey is the batching key of the caller's client metadata.
func (g *spanGuard) metadataKey(ctx context.Context) (string, map[string][]string) {
	if len(g.cfg.MetadataKeys) == 0 {
		return "", nil
	}
	info := client.FromContext(ctx)
	md := make(map[string][]string, len(g.cfg.MetadataKeys))
	var sb strings.Builder
	for _, k := range g.cfg.MetadataKeys {
		vs := info.Metadata.Get(k)
		md[k] = vs
		sb.WriteString(k)
		sb.WriteByte(0)
		for _, v := range vs {
			sb.WriteString(v)
			sb.WriteByte(1)
		}
		sb.WriteByte(2)
	}
	return sb.String(), md
}

// stats is what the gauges report.
type stats struct {
	heldSpans, heldBytes, traces, stateBytes int64
}

func (g *spanGuard) snapshot() stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return stats{heldSpans: g.held.spans, heldBytes: g.held.bytes, traces: int64(g.traces.len()), stateBytes: g.traces.mem}
}
