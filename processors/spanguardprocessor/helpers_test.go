package spanguardprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

// t0 is the start of every generated trace.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// traceBuilder writes spans of one trace into requests.
type traceBuilder struct {
	tid     pcommon.TraceID
	service string
	nextID  uint64
}

func newTraceBuilder(n byte, service string) *traceBuilder {
	var tid pcommon.TraceID
	tid[0], tid[15] = 0xab, n
	return &traceBuilder{tid: tid, service: service, nextID: uint64(n)<<40 + 1}
}

// id reserves the next span id.
func (b *traceBuilder) id() uint64 {
	b.nextID++
	return b.nextID
}

// spanSpec describes one span to append.
type spanSpec struct {
	id, parent uint64
	name       string
	start, dur time.Duration
	err        bool
	attrs      map[string]any
}

// request starts a new request holding one resource and scope for b.
func (b *traceBuilder) request() (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", b.service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("test")
	return td, ss.Spans()
}

func (b *traceBuilder) put(spans ptrace.SpanSlice, s spanSpec) ptrace.Span {
	span := spans.AppendEmpty()
	span.SetTraceID(b.tid)
	span.SetSpanID(spanID(s.id))
	span.SetParentSpanID(spanID(s.parent))
	span.SetName(s.name)
	span.SetKind(ptrace.SpanKindInternal)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(s.start)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(s.start + s.dur)))
	if s.err {
		span.Status().SetCode(ptrace.StatusCodeError)
	}
	if s.attrs != nil {
		if err := span.Attributes().FromRaw(s.attrs); err != nil {
			panic(err)
		}
	}
	return span
}

// send splits specs into requests of at most per spans and sends them.
func (b *traceBuilder) send(t testing.TB, c consumer.Traces, specs []spanSpec, per int) {
	t.Helper()
	for len(specs) > 0 {
		n := min(per, len(specs))
		td, spans := b.request()
		for _, s := range specs[:n] {
			b.put(spans, s)
		}
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		specs = specs[n:]
	}
}

// harness runs one processor against a sink, with its own telemetry.
type harness struct {
	t    *testing.T
	cfg  *Config
	tel  *componenttest.Telemetry
	sink *consumertest.TracesSink
	g    *spanGuard
	next consumer.Traces
}

func newHarness(t *testing.T, mutate func(*Config)) *harness {
	return newHarnessWithNext(t, mutate, nil)
}

func newHarnessWithNext(t *testing.T, mutate func(*Config), next consumer.Traces) *harness {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.FlushTimeout = time.Hour // tests flush explicitly unless they say otherwise
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	h := &harness{t: t, cfg: cfg, tel: componenttest.NewTelemetry(), sink: &consumertest.TracesSink{}}
	if next == nil {
		next = h.sink
	}
	h.next = next
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	h.g = p.(*spanGuard)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = h.tel.Shutdown(context.Background()) })
	return h
}

// shutdown flushes everything and checks the conservation law and the batch
// limits on everything the sink received.
func (h *harness) shutdown() {
	h.t.Helper()
	require.NoError(h.t, h.g.Shutdown(context.Background()))
	h.checkConservation()
	h.checkBatches()
}

// sum adds the data points of a counter, optionally only those whose
// attribute key has value.
func (h *harness) sum(name string, kv ...string) int64 {
	h.t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var total int64
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			if len(kv) == 2 {
				v, ok := dp.Attributes.Value(attribute.Key(kv[0]))
				if !ok || v.AsString() != kv[1] {
					continue
				}
			}
			total += dp.Value
		}
	case metricdata.Gauge[int64]:
		for _, dp := range d.DataPoints {
			total += dp.Value
		}
	default:
		h.t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	return total
}

// checkConservation: received = forwarded + folded + dropped + refused, and
// the sink holds exactly the forwarded spans plus the summary spans.
func (h *harness) checkConservation() {
	h.t.Helper()
	recv := h.sum("otelcol_span_guard_spans_received")
	fwd := h.sum("otelcol_span_guard_spans_forwarded")
	folded := h.sum("otelcol_span_guard_spans_folded")
	dropped := h.sum("otelcol_span_guard_spans_dropped")
	refused := h.sum("otelcol_span_guard_spans_refused")
	held := h.sum("otelcol_span_guard_held_spans")
	assert.Equal(h.t, recv, fwd+folded+dropped+refused+held,
		"conservation: received %d != forwarded %d + folded %d + dropped %d + refused %d + held %d",
		recv, fwd, folded, dropped, refused, held)
	if h.next == consumer.Traces(h.sink) {
		summaries := h.sum("otelcol_span_guard_summary_spans", "outcome", "forwarded")
		assert.Equal(h.t, fwd+summaries, int64(h.sink.SpanCount()), "spans at the sink")
		assert.Equal(h.t, summaries, int64(countSummaries(h.sink.AllTraces())), "summary spans at the sink")
	}
}

func (h *harness) checkBatches() {
	h.t.Helper()
	for i, td := range h.sink.AllTraces() {
		if marshaler.TracesSize(td) > h.cfg.MaxBatchBytes {
			forEachSpan([]ptrace.Traces{td}, func(r pcommon.Resource, s ptrace.Span) {
				h.t.Logf("span %s size %d res %d attrs %d", s.Name(), marshaler.SpanSize(s), r.Attributes().Len(), s.Attributes().Len())
			})
			h.t.Logf("rs %d", td.ResourceSpans().Len())
		}
		assert.LessOrEqual(h.t, marshaler.TracesSize(td), h.cfg.MaxBatchBytes, "batch %d bytes", i)
		assert.LessOrEqual(h.t, td.SpanCount(), h.cfg.MaxBatchSpans, "batch %d spans", i)
	}
}

func countSummaries(tds []ptrace.Traces) int {
	n := 0
	forEachSpan(tds, func(_ pcommon.Resource, s ptrace.Span) {
		if s.Name() == summarySpanName {
			n++
		}
	})
	return n
}

func forEachSpan(tds []ptrace.Traces, f func(pcommon.Resource, ptrace.Span)) {
	for _, td := range tds {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					f(rs.Resource(), spans.At(k))
				}
			}
		}
	}
}

// output collects the spans the sink received for one trace, by span id.
func output(tds []ptrace.Traces, tid pcommon.TraceID) map[uint64]ptrace.Span {
	out := map[uint64]ptrace.Span{}
	forEachSpan(tds, func(_ pcommon.Resource, s ptrace.Span) {
		if s.TraceID() == tid {
			out[sid(s.SpanID())] = s
		}
	})
	return out
}

// summaryOf returns the summary span of a trace at the sink.
func summaryOf(t *testing.T, tds []ptrace.Traces, tid pcommon.TraceID) ptrace.Span {
	t.Helper()
	var found []ptrace.Span
	forEachSpan(tds, func(_ pcommon.Resource, s ptrace.Span) {
		if s.TraceID() == tid && s.Name() == summarySpanName {
			found = append(found, s)
		}
	})
	require.Len(t, found, 1, "summary spans of the trace")
	return found[0]
}

func intAttr(t *testing.T, s ptrace.Span, key string) int64 {
	t.Helper()
	v, ok := s.Attributes().Get(key)
	require.True(t, ok, "attribute %s missing on %s", key, s.Name())
	return v.Int()
}

// assertConnected checks that every span of the trace at the sink has its
// parent at the sink too, except the root (and, when root is 0, spans whose
// parent is outside the trace's known ids).
func assertConnected(t *testing.T, spans map[uint64]ptrace.Span, root uint64) {
	t.Helper()
	for id, s := range spans {
		p := sid(s.ParentSpanID())
		if id == root {
			assert.Zero(t, p, "root has a parent")
			continue
		}
		_, ok := spans[p]
		assert.True(t, ok, "span %s (%x) has parent %x, which was not forwarded", s.Name(), id, p)
	}
}
