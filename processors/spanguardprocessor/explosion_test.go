package spanguardprocessor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// streamingTrace is an LLM streaming call: a request span, one model call,
// and one short span per streamed token, in end order (tokens first).
func streamingTrace(b *traceBuilder, tokens int) (specs []spanSpec, root uint64) {
	root, call := b.id(), b.id()
	for i := 0; i < tokens; i++ {
		specs = append(specs, spanSpec{id: b.id(), parent: call, name: "gen_ai.chunk",
			start: 100*time.Millisecond + time.Duration(i)*20*time.Millisecond, dur: 15 * time.Millisecond})
	}
	end := 100*time.Millisecond + time.Duration(tokens)*20*time.Millisecond
	specs = append(specs,
		spanSpec{id: call, parent: root, name: "chat gpt-test", start: 50 * time.Millisecond, dur: end},
		spanSpec{id: root, name: "POST /v1/chat/completions", dur: end + 100*time.Millisecond})
	return specs, root
}

func TestPerTokenChunkSpansAreCompressed(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TraceBudget.MaxSpans = 100 })
	b := newTraceBuilder(1, "chat-app")
	specs, root := streamingTrace(b, 2000)
	b.send(t, h.g, specs, 512) // as an SDK batch exporter would: 4 requests
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	var composites, folded int64
	for _, s := range out {
		if v, ok := s.Attributes().Get(attrCompositeCount); ok {
			composites++
			folded += v.Int()
		}
	}
	assert.Equal(t, int64(2000), folded, "every token span is inside a composite")
	assert.Equal(t, int64(4), composites, "one composite per request of chunk spans")
	assert.Equal(t, int64(2000-4), h.sum("otelcol_span_guard_spans_folded", "reason", reasonSiblingCompression))
	assert.Zero(t, h.sum("otelcol_span_guard_spans_dropped"))
	assert.LessOrEqual(t, len(out), 100+1)
	assertConnected(t, out, root)

	sum := summaryOf(t, h.sink.AllTraces(), b.tid)
	assert.Equal(t, spanID(root), sum.ParentSpanID(), "summary is a child of the root")
	assert.Equal(t, int64(2002), intAttr(t, sum, attrSumReceived))
	assert.Equal(t, int64(1996), intAttr(t, sum, attrSumFolded))
	assert.Equal(t, int64(6), intAttr(t, sum, attrSumForwarded))
}

func TestCompositeCorrectness(t *testing.T) {
	// 13 spans against a budget of 7: compression alone brings it to 7.
	h := newHarness(t, func(c *Config) { c.TraceBudget.MaxSpans = 7 })
	b := newTraceBuilder(2, "svc")
	root, parent := b.id(), b.id()
	ms := time.Millisecond
	run := []spanSpec{ // consecutive siblings, durations 10..50 ms
		{id: b.id(), parent: parent, name: "tool.read", start: 10 * ms, dur: 10 * ms},
		{id: b.id(), parent: parent, name: "tool.read", start: 30 * ms, dur: 20 * ms},
		{id: b.id(), parent: parent, name: "tool.read", start: 60 * ms, dur: 30 * ms},
		{id: b.id(), parent: parent, name: "tool.read", start: 100 * ms, dur: 40 * ms},
		{id: b.id(), parent: parent, name: "tool.read", start: 150 * ms, dur: 50 * ms},
	}
	breaker := spanSpec{id: b.id(), parent: parent, name: "tool.write", start: 210 * ms, dur: 5 * ms}
	errSpan := spanSpec{id: b.id(), parent: parent, name: "tool.read", start: 220 * ms, dur: 5 * ms, err: true}
	tail := []spanSpec{
		{id: b.id(), parent: parent, name: "tool.read", start: 230 * ms, dur: 5 * ms},
		{id: b.id(), parent: parent, name: "tool.read", start: 240 * ms, dur: 5 * ms},
	}
	long := spanSpec{id: b.id(), parent: parent, name: "tool.read", start: 250 * ms, dur: 500 * ms}
	specs := append(append([]spanSpec{}, run...), breaker, errSpan)
	specs = append(specs, tail...)
	specs = append(specs, long,
		spanSpec{id: parent, parent: root, name: "agent.step", start: 5 * ms, dur: 800 * ms},
		spanSpec{id: root, name: "agent.run", dur: time.Second})
	b.send(t, h.g, specs, len(specs))
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	first := out[run[0].id]
	require.True(t, first != ptrace.Span{}, "the run's first span carries the composite")
	assert.Equal(t, int64(5), intAttr(t, first, attrCompositeCount))
	assert.Equal(t, int64(150*ms), intAttr(t, first, attrCompositeSum))
	assert.Equal(t, int64(10*ms), intAttr(t, first, attrCompositeMin))
	assert.Equal(t, int64(50*ms), intAttr(t, first, attrCompositeMax))
	assert.Equal(t, t0.Add(10*ms), first.StartTimestamp().AsTime(), "first start")
	assert.Equal(t, t0.Add(200*ms), first.EndTimestamp().AsTime(), "last end")
	for _, s := range run[1:] {
		assert.NotContains(t, out, s.id, "folded span forwarded")
	}
	// The different name breaks the run, the error span is never folded,
	// the two after it form their own composite, the long one stays alone.
	assert.Contains(t, out, breaker.id)
	assert.Contains(t, out, errSpan.id)
	assert.Equal(t, int64(2), intAttr(t, out[tail[0].id], attrCompositeCount))
	_, isComposite := out[long.id].Attributes().Get(attrCompositeCount)
	assert.False(t, isComposite)
	assertConnected(t, out, root)
	assert.Equal(t, int64(5), h.sum("otelcol_span_guard_spans_folded"))
	assert.Equal(t, int64(2), h.sum("otelcol_span_guard_composite_spans"))
	assert.Zero(t, h.sum("otelcol_span_guard_spans_dropped"))
}

// agentLoop is an agent run of steps, each with a model call and a tool
// call (too long to compress), every errEvery-th tool call failing. Spans
// are listed in end order: children before their parents, the root last.
func agentLoop(b *traceBuilder, steps, errEvery int) (specs []spanSpec, root uint64) {
	root = b.id()
	at := time.Duration(0)
	for i := 0; i < steps; i++ {
		step := b.id()
		start := at
		specs = append(specs,
			spanSpec{id: b.id(), parent: step, name: "chat gpt-test", start: at, dur: 800 * time.Millisecond},
			spanSpec{id: b.id(), parent: step, name: "execute_tool search", start: at + 800*time.Millisecond,
				dur: 1200 * time.Millisecond, err: errEvery > 0 && i%errEvery == errEvery-1})
		at += 2 * time.Second
		specs = append(specs, spanSpec{id: step, parent: root, name: "invoke_agent step", start: start, dur: at - start})
	}
	specs = append(specs, spanSpec{id: root, name: "invoke_agent planner", dur: at})
	return specs, root
}

func TestAgentLoopKeepsTreeConnected(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TraceBudget.MaxSpans = 200 })
	b := newTraceBuilder(3, "agent")
	specs, root := agentLoop(b, 300, 50) // 901 spans, 6 errors
	b.send(t, h.g, specs, 128)
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	assertConnected(t, out, root)
	sum := summaryOf(t, h.sink.AllTraces(), b.tid)
	delete(out, sid(sum.SpanID()))
	// Error spans are never dropped, nor the parents owed to them: they may
	// go past the budget.
	assert.LessOrEqual(t, len(out), 200+2*6, "forwarded spans within the budget")
	assert.Contains(t, out, root, "root kept")
	errors := 0
	for _, s := range specs {
		if s.err {
			errors++
			assert.Contains(t, out, s.id, "error span kept")
		}
	}
	assert.Equal(t, 6, errors)
	dropped := h.sum("otelcol_span_guard_spans_dropped", "reason", reasonSpanBudget)
	assert.Equal(t, int64(901-len(out)), dropped)
	assert.Equal(t, dropped, intAttr(t, sum, attrSumDroppedPrefix+reasonSpanBudget))
	names, _ := sum.Attributes().Get(attrSumNames)
	assert.Positive(t, names.Slice().Len())
}

func TestDroppedParentsAreReparented(t *testing.T) {
	// Everything in one request: the ladder must re-parent kept error spans
	// whose parents it drops to their nearest kept ancestor.
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxSpans = 3
		c.Compression.Enabled = false
	})
	b := newTraceBuilder(4, "svc")
	root, a, bb, c := b.id(), b.id(), b.id(), b.id()
	leafErr := b.id()
	specs := []spanSpec{
		{id: root, name: "root", dur: time.Second},
		{id: a, parent: root, name: "a", start: 1, dur: time.Millisecond},
		{id: b.id(), parent: root, name: "a2", start: 2, dur: time.Millisecond},
		{id: bb, parent: a, name: "b", start: 3, dur: time.Millisecond},
		{id: c, parent: bb, name: "c", start: 4, dur: time.Millisecond},
		{id: leafErr, parent: c, name: "failing", start: 5, dur: time.Millisecond, err: true},
	}
	b.send(t, h.g, specs, len(specs))
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	require.Contains(t, out, leafErr)
	e := out[leafErr]
	p := sid(e.ParentSpanID())
	assert.Contains(t, []uint64{root, a, bb, c}, p)
	assert.Contains(t, out, p, "re-parented to a kept ancestor")
	orig, ok := e.Attributes().Get(attrOriginalParent)
	if p != c {
		require.True(t, ok)
		assert.Equal(t, spanID(c).String(), orig.Str())
		assert.Positive(t, h.sum("otelcol_span_guard_spans_reparented"))
	}
	assertConnected(t, out, root)
}

func TestLateParentOwedToForwardedChildrenIsKept(t *testing.T) {
	// Children forwarded under budget name a parent that arrives after the
	// trace went over budget: it is kept so they are not orphaned.
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxSpans = 10
		c.Compression.Enabled = false
	})
	b := newTraceBuilder(5, "svc")
	root, parent := b.id(), b.id()
	var first []spanSpec
	for i := 0; i < 8; i++ {
		first = append(first, spanSpec{id: b.id(), parent: parent, name: "leaf", start: time.Duration(i), dur: time.Second})
	}
	var flood []spanSpec
	for i := 0; i < 100; i++ {
		flood = append(flood, spanSpec{id: b.id(), parent: root, name: "noise", start: time.Duration(i), dur: time.Second})
	}
	b.send(t, h.g, first, 8)
	b.send(t, h.g, flood, 50)
	b.send(t, h.g, []spanSpec{{id: parent, parent: root, name: "parent", dur: time.Minute}}, 1)
	b.send(t, h.g, []spanSpec{{id: root, name: "root", dur: time.Hour}}, 1)
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	assert.Contains(t, out, parent)
	assert.Contains(t, out, root)
	assertConnected(t, out, root)
	assert.LessOrEqual(t, len(out), 10+1)
}

func TestHugePromptAttributesAreTruncated(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TraceBudget.MaxBytes = 1 << 20
		c.SpanLimits.MaxAttributeBytes = 4096
	})
	b := newTraceBuilder(6, "rag")
	prompt := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
	root := b.id()
	var specs []spanSpec
	for i := 0; i < 8; i++ {
		specs = append(specs, spanSpec{id: b.id(), parent: root, name: "chat gpt-test", start: time.Duration(i) * time.Second,
			dur: time.Second, attrs: map[string]any{"gen_ai.input.messages": prompt, "gen_ai.request.model": "gpt-test"}})
	}
	specs = append(specs, spanSpec{id: root, name: "rag.query", dur: 10 * time.Second})
	b.send(t, h.g, specs, 3)
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	truncated := 0
	for _, s := range out {
		v, ok := s.Attributes().Get("gen_ai.input.messages")
		if !ok {
			continue
		}
		if len(v.Str()) == len(prompt) {
			continue // sent while the trace was under its byte budget
		}
		truncated++
		assert.LessOrEqual(t, len(v.Str()), 4096)
		assert.True(t, strings.HasSuffix(v.Str(), "…"))
		assert.True(t, strings.HasPrefix(v.Str(), "éé"))
		keys, ok := s.Attributes().Get(attrTruncatedKeys)
		require.True(t, ok)
		assert.Equal(t, "gen_ai.input.messages", keys.Slice().At(0).Str())
		lens, _ := s.Attributes().Get(attrTruncatedOrigBytes)
		assert.Equal(t, int64(len(prompt)), lens.Slice().At(0).Int())
	}
	assert.Positive(t, truncated)
	assert.Equal(t, int64(truncated), h.sum("otelcol_span_guard_attribute_values_truncated"))
	assert.Equal(t, 9, len(out)-1, "no span dropped, only truncated (plus the summary)")
}

func TestSpanLargerThanABatchIsTruncatedOrDropped(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.MaxBatchBytes = 64 << 10
		c.SpanLimits.MaxAttributeBytes = 1024
		c.SpanLimits.MaxAttributes = 200
	})
	b := newTraceBuilder(7, "svc")
	root, fixable, hopeless := b.id(), b.id(), b.id()
	many := map[string]any{}
	for i := 0; i < 200; i++ {
		many[strings.Repeat("k", 10)+string(rune('a'+i%26))+strings.Repeat("x", i)] = strings.Repeat("v", 1000)
	}
	specs := []spanSpec{
		{id: fixable, parent: root, name: "big-prompt", dur: time.Second, attrs: map[string]any{"prompt": strings.Repeat("p", 1<<20)}},
		{id: hopeless, parent: root, name: "too-many", dur: time.Second, attrs: many},
		{id: root, name: "root", dur: time.Minute},
	}
	b.send(t, h.g, specs, 3)
	h.shutdown()
	out := output(h.sink.AllTraces(), b.tid)
	assert.Contains(t, out, fixable, "truncation made it fit")
	assert.NotContains(t, out, hopeless, "still larger than a batch after the limits")
	assert.Equal(t, int64(1), h.sum("otelcol_span_guard_spans_dropped", "reason", reasonSpanTooLarge))
}

func TestMillionSpanTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000 spans")
	}
	n := 1_000_000
	if raceEnabled {
		n = 100_000
	}
	h := newHarness(t, func(c *Config) { c.TraceBudget.MaxSpans = 10000 })
	b := newTraceBuilder(8, "agent")
	total, root := explode(t, h.g, b, n, 5000)
	h.shutdown()

	out := output(h.sink.AllTraces(), b.tid)
	assert.LessOrEqual(t, len(out), 10000+1, "budget plus the summary")
	sum := summaryOf(t, h.sink.AllTraces(), b.tid)
	assert.Equal(t, int64(total), intAttr(t, sum, attrSumReceived))
	assert.Equal(t, int64(total), intAttr(t, sum, attrSumForwarded)+intAttr(t, sum, attrSumFolded)+intAttr(t, sum, attrSumDropped))
	assertConnected(t, out, root)
}

// explode sends a trace of n spans shaped like a runaway agent (steps of
// a model call and a tool call each, tool calls long) in requests of per
// spans, generated request by request as an SDK would export them. It
// returns how many spans it sent.
func explode(t testing.TB, c interface {
	ConsumeTraces(context.Context, ptrace.Traces) error
}, b *traceBuilder, n, per int) (sent int, root uint64) {
	root = b.id()
	at := time.Duration(0)
	pending := []spanSpec{}
	flush := func(force bool) {
		for len(pending) >= per || (force && len(pending) > 0) {
			k := min(per, len(pending))
			td, spans := b.request()
			for _, s := range pending[:k] {
				b.put(spans, s)
			}
			if err := c.ConsumeTraces(context.Background(), td); err != nil {
				t.Fatal(err)
			}
			sent += k
			pending = pending[k:]
		}
	}
	for sent+len(pending) < n-1 {
		step := b.id()
		start := at
		pending = append(pending,
			spanSpec{id: b.id(), parent: step, name: "chat gpt-test", start: at, dur: 300 * time.Millisecond},
			spanSpec{id: b.id(), parent: step, name: "execute_tool fetch", start: at + 300*time.Millisecond, dur: 700 * time.Millisecond})
		at += time.Second
		pending = append(pending, spanSpec{id: step, parent: root, name: "invoke_agent step", start: start, dur: at - start})
		flush(false)
	}
	pending = append(pending, spanSpec{id: root, name: "invoke_agent runaway", dur: at})
	flush(true)
	return sent, root
}
