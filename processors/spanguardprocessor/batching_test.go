package spanguardprocessor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// smallTraces sends n traces of k spans each, every trace in its own
// request, with a payload attribute of payload bytes per span.
func smallTraces(t *testing.T, h *harness, first byte, n, k, payload int) []*traceBuilder {
	var out []*traceBuilder
	for i := 0; i < n; i++ {
		b := newTraceBuilder(first+byte(i), "svc")
		root := b.id()
		specs := []spanSpec{}
		for j := 1; j < k; j++ {
			specs = append(specs, spanSpec{id: b.id(), parent: root, name: "child", start: time.Duration(j), dur: time.Second,
				attrs: map[string]any{"payload": strings.Repeat("x", payload)}})
		}
		specs = append(specs, spanSpec{id: root, name: "root", dur: time.Minute})
		b.send(t, h.g, specs, k)
		out = append(out, b)
	}
	return out
}

func TestBatchesBoundedBySpansAndBytesKeepTracesTogether(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.MaxBatchSpans = 100
		c.MaxBatchBytes = 32 << 10
	})
	traces := smallTraces(t, h, 1, 60, 30, 200) // 60 traces of ~6.5 KiB
	h.shutdown()
	assert.Greater(t, len(h.sink.AllTraces()), 1)

	// A trace that fits a batch is never split across batches.
	for _, b := range traces {
		batches := 0
		for _, td := range h.sink.AllTraces() {
			if len(output([]ptrace.Traces{td}, b.tid)) > 0 {
				batches++
			}
		}
		assert.Equal(t, 1, batches, "trace %s in %d batches", b.tid, batches)
	}
	assert.Positive(t, h.sum("otelcol_span_guard_batches_sent", "trigger", triggerBytes)+h.sum("otelcol_span_guard_batches_sent", "trigger", triggerSpans))
	assert.Equal(t, int64(60*30), h.sum("otelcol_span_guard_spans_forwarded"))
}

func TestOversizeTraceIsSplitParentFirst(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.MaxBatchBytes = 16 << 10
		c.MaxBatchSpans = 1000
		c.TraceBudget.MaxSpans = 0
		c.TraceBudget.MaxBytes = 0
	})
	b := newTraceBuilder(9, "svc")
	root := b.id()
	var specs []spanSpec
	parents := []uint64{root}
	for i := 0; i < 300; i++ {
		id := b.id()
		specs = append(specs, spanSpec{id: id, parent: parents[i/3], name: "n", start: time.Duration(i), dur: time.Second,
			attrs: map[string]any{"payload": strings.Repeat("y", 300)}})
		parents = append(parents, id)
	}
	// Children first, as SDKs export them.
	for i, j := 0, len(specs)-1; i < j; i, j = i+1, j-1 {
		specs[i], specs[j] = specs[j], specs[i]
	}
	specs = append(specs, spanSpec{id: root, name: "root", dur: time.Hour})
	b.send(t, h.g, specs, len(specs))
	h.shutdown()

	tds := h.sink.AllTraces()
	require.Greater(t, len(tds), 3, "the trace does not fit one batch")
	seen := map[uint64]bool{}
	for _, td := range tds {
		batch := output([]ptrace.Traces{td}, b.tid)
		for id := range batch {
			seen[id] = true
		}
		for _, s := range batch {
			if p := sid(s.ParentSpanID()); p != 0 {
				assert.True(t, seen[p], "span sent before its parent")
			}
		}
	}
	assert.Len(t, seen, 301)
	assert.Zero(t, h.sum("otelcol_span_guard_spans_dropped"))
}

func TestShutdownFlushesEverything(t *testing.T) {
	h := newHarness(t, nil) // flush timeout of an hour
	smallTraces(t, h, 1, 5, 10, 10)
	assert.Zero(t, h.sink.SpanCount(), "nothing sent before the batch fills or times out")
	assert.Equal(t, int64(50), h.sum("otelcol_span_guard_held_spans"))
	h.shutdown()
	assert.Equal(t, 50, h.sink.SpanCount())
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_batches_sent", "trigger", triggerShutdown))
	assert.Zero(t, h.sum("otelcol_span_guard_held_spans"))
	assert.Equal(t, int64(5), h.sum("otelcol_span_guard_traces_released", "reason", "shutdown"))

	// After shutdown, data is refused and counted.
	td, spans := newTraceBuilder(99, "svc").request()
	newTraceBuilder(99, "svc").put(spans, spanSpec{id: 1, name: "late"})
	assert.ErrorIs(t, h.g.ConsumeTraces(context.Background(), td), errShutdown)
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_spans_refused", "reason", reasonShutdown))
}

func TestFlushTimeout(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.FlushTimeout = 20 * time.Millisecond })
	smallTraces(t, h, 1, 2, 5, 10)
	// The batch counter is recorded after the export returns, so wait for
	// both rather than read the counter the moment the spans arrive.
	require.Eventually(t, func() bool {
		return h.sink.SpanCount() == 10 && h.sum("otelcol_span_guard_batches_sent", "trigger", triggerTimeout) > 0
	}, 30*time.Second, 5*time.Millisecond, "the open batch is sent by its flush timeout")
	h.shutdown()
}

func TestMemoryLimitRefusesRetryably(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MemoryLimitMiB = 1 })
	smallTraces(t, h, 1, 1, 400, 3000) // ~1.2 MiB held in the open batch
	b := newTraceBuilder(50, "svc")
	td, spans := b.request()
	b.put(spans, spanSpec{id: b.id(), name: "refused"})
	err := h.g.ConsumeTraces(context.Background(), td)
	require.ErrorIs(t, err, errMemoryLimit)
	assert.False(t, consumererror.IsPermanent(err), "memory pressure is retryable")
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_spans_refused", "reason", reasonMemoryLimit))
	h.shutdown()
}

func TestRateLimitPerService(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.RateLimit.SpansPerSecond = 0.001 // no refill within the test
		c.RateLimit.BurstSpans = 100
	})
	now := t0
	h.g.now = func() time.Time { return now }
	send := func(service string, n int, tid byte) error {
		b := newTraceBuilder(tid, service)
		td, spans := b.request()
		for i := 0; i < n; i++ {
			b.put(spans, spanSpec{id: b.id(), name: "s"})
		}
		return h.g.ConsumeTraces(context.Background(), td)
	}
	require.NoError(t, send("noisy", 80, 1))
	err := send("noisy", 80, 2)
	require.ErrorIs(t, err, errRateLimited)
	assert.False(t, consumererror.IsPermanent(err))
	require.NoError(t, send("quiet", 80, 3), "another service has its own bucket")
	require.NoError(t, send("noisy", 20, 4), "what is left of the bucket")
	assert.Equal(t, int64(80), h.sum("otelcol_span_guard_spans_refused", "reason", reasonRateLimit))
	h.shutdown()
}

func TestMetadataBatchingAndCardinalityLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.MetadataKeys = []string{"x-tenant"}
		c.MetadataCardinalityLimit = 2
	})
	send := func(tenant string, tid byte) error {
		ctx := client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{"x-tenant": {tenant}})})
		b := newTraceBuilder(tid, "svc")
		td, spans := b.request()
		b.put(spans, spanSpec{id: b.id(), name: tenant})
		return h.g.ConsumeTraces(ctx, td)
	}
	require.NoError(t, send("a", 1))
	require.NoError(t, send("b", 2))
	require.NoError(t, send("a", 3))
	err := send("c", 4)
	require.ErrorIs(t, err, errTooManyShards)
	assert.True(t, consumererror.IsPermanent(err))
	h.shutdown()

	// One batch per tenant, each sent with its tenant's metadata.
	require.Len(t, h.sink.AllTraces(), 2)
	for i, td := range h.sink.AllTraces() {
		tenant := client.FromContext(h.sink.Contexts()[i]).Metadata.Get("x-tenant")
		require.Len(t, tenant, 1)
		forEachSpan([]ptrace.Traces{td}, func(_ pcommon.Resource, s ptrace.Span) {
			assert.Equal(t, tenant[0], s.Name(), "span batched with another tenant")
		})
	}
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_spans_refused", "reason", reasonMetadataLimit))
}

func TestWindowEndReleasesTraceWithSummary(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxSpans = 10
		c.TraceBudget.Window = time.Minute
	})
	now := t0
	h.g.now = func() time.Time { return now }
	b := newTraceBuilder(1, "svc")
	specs, _ := agentLoop(b, 20, 0)
	b.send(t, h.g, specs, 61)
	h.g.onTick(now.Add(30 * time.Second))
	assert.Equal(t, 1, h.g.traces.len(), "window not over yet")
	h.g.onTick(now.Add(61 * time.Second))
	assert.Zero(t, h.g.traces.len())
	assert.Zero(t, h.sum("otelcol_span_guard_trace_state_bytes"))
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_traces_released", "reason", "window"))

	// The next spans of the same trace start a new window and budget.
	more, _ := agentLoop(b, 2, 0)
	b.send(t, h.g, more, 10)
	h.shutdown()
	assert.Equal(t, int64(61+7), h.sum("otelcol_span_guard_spans_received"))
	summaryOf(t, h.sink.AllTraces(), b.tid) // one: the second window stayed within budget
}

func TestMaxTracesEvictsLeastRecentlyUsed(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxTraces = 2
		c.TraceBudget.MaxSpans = 4
	})
	a, b, c := newTraceBuilder(1, "svc"), newTraceBuilder(2, "svc"), newTraceBuilder(3, "svc")
	over := func(tb *traceBuilder) []spanSpec {
		root := tb.id()
		s := []spanSpec{{id: root, name: "root", dur: time.Second}}
		for i := 0; i < 6; i++ {
			s = append(s, spanSpec{id: tb.id(), parent: root, name: "x", start: time.Duration(i), dur: time.Second})
		}
		return s
	}
	a.send(t, h.g, over(a), 7)
	b.send(t, h.g, over(b), 7)
	a.send(t, h.g, []spanSpec{{id: a.id(), name: "touch"}}, 1) // a is now more recent than b
	c.send(t, h.g, over(c), 7)                                 // evicts b
	_, hasA := h.g.traces.m[a.tid]
	_, hasB := h.g.traces.m[b.tid]
	assert.True(t, hasA)
	assert.False(t, hasB)
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_traces_released", "reason", "capacity"))
	h.shutdown()
	summaryOf(t, h.sink.AllTraces(), b.tid)
}

func TestExportFailureIsCounted(t *testing.T) {
	h := newHarnessWithNext(t, func(c *Config) { c.MaxBatchSpans = 10 }, consumertest.NewErr(errors.New("backend down")))
	smallTraces(t, h, 1, 3, 10, 10)
	h.shutdown()
	assert.Equal(t, int64(30), h.sum("otelcol_span_guard_spans_dropped", "reason", reasonExportFailed))
	assert.Zero(t, h.sum("otelcol_span_guard_spans_forwarded"))
}

func TestSpanLimitsAlways(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.SpanLimits.Apply = limitsAlways
		c.SpanLimits.MaxAttributeBytes = 16
		c.SpanLimits.MaxAttributes = 3
		c.SpanLimits.MaxEvents = 1
		c.SpanLimits.MaxLinks = 1
	})
	b := newTraceBuilder(1, "svc")
	td, spans := b.request()
	s := b.put(spans, spanSpec{id: b.id(), name: "s"})
	s.Attributes().PutStr("a", "short")
	s.Attributes().PutStr("b", strings.Repeat("z", 40))
	sl := s.Attributes().PutEmptySlice("c")
	sl.AppendEmpty().SetStr(strings.Repeat("q", 30))
	sl.AppendEmpty().SetStr("ok")
	s.Attributes().PutInt("d", 1)
	s.Attributes().PutInt("e", 2)
	for i := 0; i < 3; i++ {
		ev := s.Events().AppendEmpty()
		ev.SetName("gen_ai.choice")
		ev.Attributes().PutStr("content", strings.Repeat("w", 100))
		s.Links().AppendEmpty().SetTraceID(b.tid)
	}
	require.NoError(t, h.g.ConsumeTraces(context.Background(), td))
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	require.Len(t, out, 1)
	for _, got := range out {
		v, _ := got.Attributes().Get("b")
		assert.Equal(t, strings.Repeat("z", 13)+"…", v.Str())
		assert.Equal(t, uint32(2), got.DroppedAttributesCount())
		assert.Equal(t, 1, got.Events().Len())
		assert.Equal(t, uint32(2), got.DroppedEventsCount())
		assert.Equal(t, 1, got.Links().Len())
		assert.Equal(t, uint32(2), got.DroppedLinksCount())
		ev, _ := got.Events().At(0).Attributes().Get("content")
		assert.Len(t, ev.Str(), 16)
	}
	assert.Equal(t, int64(3), h.sum("otelcol_span_guard_attribute_values_truncated"))
	assert.Equal(t, int64(2), h.sum("otelcol_span_guard_span_items_dropped", "kind", "event"))
	assert.Equal(t, int64(2), h.sum("otelcol_span_guard_span_items_dropped", "kind", "link"))
}

func TestTruncateStringKeepsUTF8(t *testing.T) {
	assert.Equal(t, "ab…", truncateString("abcdef", 5, "…"))
	assert.Equal(t, "é…", truncateString("éééé", 6, "…")) // 3 bytes left: one é fits, not half of the next
	assert.Equal(t, "…", truncateString("éééé", 4, "…"))
}

func TestByteBudgetDropsWhenTruncationCannotHelp(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxBytes = 20 << 10
		c.SpanLimits.MaxAttributeBytes = 0 // truncation off
		c.Compression.Enabled = false
	})
	b := newTraceBuilder(1, "svc")
	root := b.id()
	var specs []spanSpec
	for i := 0; i < 40; i++ {
		specs = append(specs, spanSpec{id: b.id(), parent: root, name: "retrieval", start: time.Duration(i) * time.Second,
			dur: time.Second, attrs: map[string]any{"document": strings.Repeat("d", 2000)}})
	}
	specs = append(specs, spanSpec{id: root, name: "root", dur: time.Minute})
	b.send(t, h.g, specs, 10)
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	sum := summaryOf(t, h.sink.AllTraces(), b.tid)
	delete(out, sid(sum.SpanID()))
	assert.Contains(t, out, root)
	var bytes int
	for _, s := range out {
		bytes += int(spanCost(marshaler.SpanSize(s)))
	}
	assert.LessOrEqual(t, bytes, 20<<10, "forwarded bytes within the budget")
	dropped := h.sum("otelcol_span_guard_spans_dropped", "reason", reasonByteBudget)
	assert.Equal(t, int64(41-len(out)), dropped)
	assert.Equal(t, dropped, intAttr(t, sum, attrSumDroppedPrefix+reasonByteBudget))
	assert.Positive(t, intAttr(t, sum, attrSumDroppedBytes))
}

func TestConcurrentCallers(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.FlushTimeout = 5 * time.Millisecond
		c.MaxBatchSpans = 64
		c.TraceBudget.MaxSpans = 50
	})
	done := make(chan struct{})
	for w := 0; w < 8; w++ {
		go func(w int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 10; i++ {
				b := newTraceBuilder(byte(w*10+i+1), "svc")
				specs, _ := agentLoop(b, 30, 7) // 91 spans: over the budget
				b.send(t, h.g, specs, 16)
			}
		}(w)
	}
	for w := 0; w < 8; w++ {
		<-done
	}
	h.shutdown()
	assert.Equal(t, int64(8*10*91), h.sum("otelcol_span_guard_spans_received"))
	assert.Equal(t, 80, countSummaries(h.sink.AllTraces()))
}

func TestNoBudgetKeepsNoTraceState(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxSpans, c.TraceBudget.MaxBytes = 0, 0
		c.MaxBatchBytes = 8 << 10
		c.SpanLimits.MaxAttributeBytes = 0
	})
	smallTraces(t, h, 1, 20, 10, 10)
	assert.Zero(t, h.g.traces.len(), "batching only: no trace state")
	// A span too large for any batch is still dropped, counted and
	// summarized, its trace tracked from then on.
	b := newTraceBuilder(99, "svc")
	root, big := b.id(), b.id()
	b.send(t, h.g, []spanSpec{
		{id: big, parent: root, name: "huge", dur: time.Second, attrs: map[string]any{"blob": strings.Repeat("b", 16<<10)}},
		{id: root, name: "root", dur: time.Minute},
	}, 2)
	assert.Equal(t, 1, h.g.traces.len())
	h.shutdown()
	out := output(h.sink.AllTraces(), b.tid)
	assert.NotContains(t, out, big)
	assert.Contains(t, out, root)
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_spans_dropped", "reason", reasonSpanTooLarge))
	assert.Equal(t, int64(1), intAttr(t, summaryOf(t, h.sink.AllTraces(), b.tid), attrSumDroppedPrefix+reasonSpanTooLarge))
}
