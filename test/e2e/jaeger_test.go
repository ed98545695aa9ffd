//go:build e2e

package e2e

import (
	encbin "encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// jaegerRun is one test's data in a Jaeger that several share: its own
// service name, its own trace ids (a nonce of the run in their first 8
// bytes), and the spans it sent, by trace.
type jaegerRun struct {
	service string
	nonce   uint64
	sent    map[pcommon.TraceID]int
	ids     idGen
}

func newJaegerRun(prefix string) *jaegerRun {
	n := uint64(time.Now().UnixNano()) | 1<<63 // a trace id's first byte is never zero
	return &jaegerRun{service: fmt.Sprintf("%s-%x", prefix, n), nonce: n, sent: map[pcommon.TraceID]int{}}
}

// traceID is the run's trace id number i of a kind.
func (r *jaegerRun) traceID(kind byte, i int) pcommon.TraceID {
	var id pcommon.TraceID
	encbin.BigEndian.PutUint64(id[:8], r.nonce)
	id[8] = kind
	encbin.BigEndian.PutUint32(id[12:], uint32(i))
	return id
}

// prepare gives td the run's service name and counts its spans as sent.
func (r *jaegerRun) prepare(td ptrace.Traces) ptrace.Traces {
	setService(td, r.service)
	forEachSpan(td, func(sp ptrace.Span) { r.sent[sp.TraceID()]++ })
	return td
}

// total is every span the run sent.
func (r *jaegerRun) total() int {
	n := 0
	for _, c := range r.sent {
		n += c
	}
	return n
}

// explosionLoad is a span explosion as the explosion test shapes it: one
// runaway agent trace of agentSpans spans in requests of perRequest spans,
// then streams per-token traces of tokens token spans (and a server and a
// chat span) of one request each.
type explosionLoad struct {
	streams, tokens, agentSpans, perRequest int
}

// spans is every span of the load.
func (l explosionLoad) spans() int { return l.agentSpans + l.streams*(l.tokens+2) }

// explosion sends the load through send.
func (r *jaegerRun) explosion(l explosionLoad, send func(ptrace.Traces)) {
	runawayTrace(r.agentTrace(), l.agentSpans, l.perRequest, &r.ids, func(td ptrace.Traces) { send(r.prepare(td)) })
	for i := 0; i < l.streams; i++ {
		send(r.prepare(perTokenTrace(r.traceID('t', i), l.tokens, &r.ids)))
	}
}

// agentTrace is the id of the run's runaway agent trace, its largest.
func (r *jaegerRun) agentTrace() pcommon.TraceID { return r.traceID('a', 0) }

// startJaegerGateway starts builtin:gateway exporting to j, with a
// per-trace budget of budget spans over window.
func startJaegerGateway(t *testing.T, j *Jaeger, budget int, window string) *Collector {
	t.Helper()
	t.Setenv("OTELCOL_LLM_TRACE_MAX_SPANS", fmt.Sprint(budget))
	t.Setenv("OTELCOL_LLM_TRACE_WINDOW", window)
	return startGatewayTo(t, j)
}

// startGatewayTo starts builtin:gateway (and the overlays in args) exporting
// to j.
func startGatewayTo(t testing.TB, j *Jaeger, args ...string) *Collector {
	t.Helper()
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", j.OTLPAddr)
	col := StartCollector(t, append([]string{"--config", "builtin:gateway"}, args...)...)
	col.WaitHealthy(t, time.Minute)
	return col
}

// waitGatewaySettled waits until the gateway has taken the sent spans,
// released every trace state (each summary sent) and had the backend accept
// every span it forwarded, and returns its ledger.
func waitGatewaySettled(t testing.TB, col *Collector, sent int) spanLedger {
	t.Helper()
	var l spanLedger
	_, settled := waitSettled(3*time.Minute, time.Second, func() string {
		l = readLedger(selfMetrics(t, col))
		return l.String()
	}, func(string) bool {
		return l.received == float64(sent)+l.refused && l.held == 0 && l.tracked == 0 && l.inQueue == 0 &&
			l.received == l.forwarded+l.folded+l.dropped+l.refused &&
			l.exported == l.forwarded+l.summaries && l.exportFailed == 0
	})
	require.True(t, settled, "gateway did not settle after %d spans: %s", sent, l)
	return l
}

// storedSpans is how many spans Jaeger's storage exporter has written, from
// its own metrics.
func (j *Jaeger) storedSpans(t testing.TB) float64 {
	t.Helper()
	return sumSeriesOrZero(scrape(t, j.MetricsURL), "otelcol_exporter_sent_spans", `exporter="jaeger_storage_exporter"`)
}

// waitStored waits until Jaeger has written want spans more than it had
// written at base.
func (j *Jaeger) waitStored(t testing.TB, base, want float64) {
	t.Helper()
	n, err := waitProgress(3*time.Minute, 30*time.Second, func() float64 { return j.storedSpans(t) - base },
		func(n float64) bool { return n >= want })
	require.NoError(t, err, "jaeger stored %.0f of %.0f spans", n, want)
	require.Equal(t, want, n, "jaeger stored more spans than were sent to it")
}

// intAttr is an integer attribute of sp (0 when absent).
func intAttr(sp ptrace.Span, key string) int64 {
	v, _ := sp.Attributes().Get(key)
	return v.Int()
}

// uiTagWant is how Jaeger's UI model carries an attribute value as
// pcommon's AsRaw gives it: its tag type and its value as JSON decodes it.
func uiTagWant(v any) (string, any) {
	switch v := v.(type) {
	case string:
		return "string", v
	case bool:
		return "bool", v
	case int64:
		return "int64", float64(v)
	case float64:
		return "float64", v
	default: // slices and maps become their JSON text
		b, _ := json.Marshal(v)
		return "string", string(b)
	}
}

// summaryCounts are the span_guard.* counts a summary span carries.
var summaryCounts = []string{"span_guard.spans.received", "span_guard.spans.forwarded", "span_guard.spans.folded", "span_guard.spans.dropped"}

// TestJaegerGatewayTraces sends OpenInference and OpenLLMetry traces, four
// per-token traces of 1,002 spans and a 5,000-span agent loop through
// builtin:gateway (budget 200 spans per trace) to a real Jaeger, then reads
// them back through Jaeger's query API: every trace is found; each holds what
// was sent minus what span_guard accounted as folded or dropped (in its
// self-metrics, and per trace in the summary spans, which Jaeger stores
// too); the summaries and llm_semconv's GenAI attributes are intact in the
// OTLP answer (/api/v3) and readable in Jaeger's own model (/api/traces,
// what the UI shows), where every span's parent is in the trace.
func TestJaegerGatewayTraces(t *testing.T) {
	const (
		budget = 200
		normal = 10 // semconvInput traces of 3 spans
	)
	load := explosionLoad{streams: 4, tokens: 1000, agentSpans: 5000, perRequest: 1000}
	j := SharedJaeger(t)
	r := newJaegerRun("e2e-gateway")
	col := startJaegerGateway(t, j, budget, "2s")
	sender := newOTLPSender(t, col.OTLPGRPCPort)
	from := time.Now().Add(-2 * time.Hour)

	in := semconvInput(normal)
	now := pcommon.NewTimestampFromTime(time.Now())
	forEachSpan(in, func(sp ptrace.Span) {
		sp.SetTraceID(r.traceID('s', int(sp.TraceID()[0])))
		if sp.StartTimestamp() == 0 { // the plain span has no times, which Jaeger flags
			sp.SetStartTimestamp(now - 1e6)
			sp.SetEndTimestamp(now)
		}
	})
	sender.send(t, r.prepare(in))
	r.explosion(load, func(td ptrace.Traces) { sender.send(t, td) })
	require.Len(t, r.sent, normal+load.streams+1)

	l := waitGatewaySettled(t, col, r.total())
	require.Positive(t, l.folded+l.dropped, "the load exceeds the budget: %s", l)

	// Jaeger's batch processor writes a moment after its receiver took the
	// spans: wait until the search returns everything the gateway sent.
	want := int(l.forwarded + l.summaries)
	var found map[pcommon.TraceID][]ptrace.Span
	count := func() int {
		n := 0
		for _, spans := range found {
			n += len(spans)
		}
		return n
	}
	_, ok := waitSettled(2*time.Minute, time.Second, func() int {
		found = j.FindTraces(t, r.service, from, time.Now().Add(time.Hour), 1000)
		return count()
	}, func(n int) bool { return n == want })
	require.True(t, ok, "jaeger returns %d spans of %d traces for %s, the gateway sent %d", count(), len(found), r.service, want)

	// Per trace: in Jaeger = sent - removed, the removals from the trace's
	// own summaries; over all traces, the removals are span_guard's.
	require.Len(t, found, len(r.sent), "every trace sent is found, and nothing else")
	var removed, summaries float64
	for tid, sent := range r.sent {
		spans := found[tid]
		require.NotEmpty(t, spans, "trace %s is not in jaeger", traceIDHex(tid))
		kept, sums, removedHere := 0, 0, int64(0)
		for _, sp := range spans {
			if sp.Name() != summarySpanName {
				kept++
				continue
			}
			sums++
			removedHere += intAttr(sp, "span_guard.spans.folded") + intAttr(sp, "span_guard.spans.dropped")
		}
		assert.Equal(t, sent-int(removedHere), kept, "trace %s: in jaeger = sent - folded - dropped", traceIDHex(tid))
		if sent > budget {
			assert.Positive(t, sums, "trace %s (%d spans) has its summary in jaeger", traceIDHex(tid), sent)
			assert.Less(t, kept, sent, "trace %s reached jaeger bounded", traceIDHex(tid))
		} else {
			assert.Zero(t, sums, "trace %s was under budget", traceIDHex(tid))
		}
		removed += float64(removedHere)
		summaries += float64(sums)
	}
	assert.Equal(t, l.folded+l.dropped, removed, "span_guard's accounted removals are what jaeger misses")
	assert.Equal(t, l.summaries, summaries, "every summary span is in jaeger")

	// Jaeger's own model, trace by trace as the UI fetches it.
	for tid := range r.sent {
		ui := j.TraceUI(t, tid)
		require.Len(t, ui.Spans, len(found[tid]), "trace %s: /api/traces has what /api/v3 has", traceIDHex(tid))
		assert.Empty(t, ui.Warnings, "trace %s", traceIDHex(tid))
		ids := map[string]bool{}
		for _, s := range ui.Spans {
			ids[s.SpanID] = true
		}
		for _, s := range ui.Spans {
			assert.Equal(t, r.service, ui.Processes[s.ProcessID].ServiceName)
			assert.Empty(t, s.Warnings, "span %s %q", s.SpanID, s.OperationName)
			for _, ref := range s.References {
				assert.True(t, ids[ref.SpanID], "span %s %q: its parent %s is in the trace", s.SpanID, s.OperationName, ref.SpanID)
			}
			if s.OperationName != summarySpanName {
				continue
			}
			assert.Len(t, s.References, 1, "the summary is a child of the trace's root")
			for _, k := range summaryCounts {
				tag, ok := s.tag(k)
				if assert.True(t, ok, "summary tag %s", k) {
					assert.Equal(t, "int64", tag.Type, k)
					assert.IsType(t, float64(0), tag.Value, k)
				}
			}
		}
	}
	// The summaries' counts add up, per trace, as span_guard wrote them.
	for _, spans := range found {
		for _, sp := range spans {
			if sp.Name() == summarySpanName {
				assert.Equal(t, intAttr(sp, "span_guard.spans.received"), intAttr(sp, "span_guard.spans.forwarded")+
					intAttr(sp, "span_guard.spans.folded")+intAttr(sp, "span_guard.spans.dropped"))
			}
		}
	}

	// llm_semconv's GenAI attributes, in both of Jaeger's answers.
	oiTrace := r.traceID('s', 1)
	oiID := pcommon.SpanID{1, 1}
	var oi ptrace.Span
	forEachSpan(j.TraceV3(t, oiTrace), func(sp ptrace.Span) {
		if sp.SpanID() == oiID {
			oi = sp
		}
	})
	require.Equal(t, "chat gpt-4o-mini", oi.Name())
	assert.Equal(t, ptrace.SpanKindClient, oi.Kind())
	got := oi.Attributes().AsRaw()
	for k, v := range openInferenceWant {
		assert.Equal(t, v, got[k], k)
	}
	var in0 []map[string]any
	require.NoError(t, json.Unmarshal([]byte(got["gen_ai.input.messages"].(string)), &in0))
	assert.Equal(t, []map[string]any{{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "question 0"}}}}, in0)
	assert.Contains(t, got["gen_ai.output.messages"], `"finish_reason":"stop"`)

	var uiOI *uiSpan
	ui := j.TraceUI(t, oiTrace)
	for i := range ui.Spans {
		if ui.Spans[i].SpanID == oiID.String() {
			uiOI = &ui.Spans[i]
		}
	}
	require.NotNil(t, uiOI, "span %s in /api/traces", oiID)
	assert.Equal(t, "chat gpt-4o-mini", uiOI.OperationName)
	kind, _ := uiOI.tag("span.kind")
	assert.Equal(t, "client", kind.Value)
	for k, v := range openInferenceWant {
		typ, val := uiTagWant(v)
		tag, ok := uiOI.tag(k)
		if assert.True(t, ok, "tag %s", k) {
			assert.Equal(t, typ, tag.Type, k)
			assert.Equal(t, val, tag.Value, k)
		}
	}
	msgs, _ := uiOI.tag("gen_ai.input.messages")
	assert.True(t, strings.HasPrefix(fmt.Sprint(msgs.Value), `[{"role":"user"`), "gen_ai.input.messages readable: %v", msgs.Value)
	t.Logf("%d traces, %d spans sent through the gateway; %s; jaeger holds %d spans (%.0f summaries)",
		len(r.sent), r.total(), l, want, summaries)

	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}

// TestJaegerExplosionDirectVsGateway sends the same span explosion (a
// 50,000-span agent loop and ten per-token traces of 2,002 spans) to a real
// Jaeger twice: directly, and through builtin:gateway with a budget of
// 1,000 spans per trace. Directly, Jaeger stores every span and returns the
// whole agent loop to the UI; through the gateway it stores what span_guard
// forwarded, and the agent loop comes back bounded with its summary.
// bench/jaeger/compare.sh runs the full-size version and measures RSS and
// fetch times.
func TestJaegerExplosionDirectVsGateway(t *testing.T) {
	const budget = 1000
	load := explosionLoad{streams: 10, tokens: 2000, agentSpans: 50_000, perRequest: 5000}
	j := SharedJaeger(t)

	direct := newJaegerRun("e2e-explosion-direct")
	base := j.storedSpans(t)
	ds := newOTLPSenderTo(t, j.OTLPAddr)
	direct.explosion(load, func(td ptrace.Traces) { ds.send(t, td) })
	j.waitStored(t, base, float64(direct.total()))
	wide, err := j.getOK("/api/traces/"+traceIDHex(direct.agentTrace()), 5*time.Minute)
	require.NoError(t, err)
	wideTrace, err := decodeUITrace(wide.Body)
	require.NoError(t, err)
	assert.Len(t, wideTrace.Spans, load.agentSpans, "directly, jaeger keeps and returns every span of the agent loop")

	// The count before the gateway sends anything: span_guard forwards
	// batches while the explosion is still being sent.
	base = j.storedSpans(t)
	guarded := newJaegerRun("e2e-explosion-gateway")
	col := startJaegerGateway(t, j, budget, "5s")
	gs := newOTLPSender(t, col.OTLPGRPCPort)
	guarded.explosion(load, func(td ptrace.Traces) { gs.send(t, td) })
	require.Equal(t, direct.total(), guarded.total())
	l := waitGatewaySettled(t, col, guarded.total())
	j.waitStored(t, base, l.forwarded+l.summaries)
	narrow, err := j.getOK("/api/traces/"+traceIDHex(guarded.agentTrace()), time.Minute)
	require.NoError(t, err)
	narrowTrace, err := decodeUITrace(narrow.Body)
	require.NoError(t, err)

	agentSummaries, agentKept := 0, 0
	for _, s := range narrowTrace.Spans {
		if s.OperationName == summarySpanName {
			agentSummaries++
		} else {
			agentKept++
		}
	}
	assert.Positive(t, agentSummaries, "the agent loop's summary is in jaeger")
	assert.Less(t, agentKept, load.agentSpans/10, "through the gateway the agent loop is bounded")
	assert.Less(t, len(narrow.Body)*10, len(wide.Body), "and so is what the UI downloads")
	t.Logf("agent loop of %d spans, as the UI fetches it from jaeger: directly %d spans, %.1f MiB in %v; through the gateway %d spans (%d summaries), %.2f MiB in %v",
		load.agentSpans, len(wideTrace.Spans), float64(len(wide.Body))/mib, wide.Elapsed.Round(time.Millisecond),
		len(narrowTrace.Spans), agentSummaries, float64(len(narrow.Body))/mib, narrow.Elapsed.Round(time.Millisecond))
	t.Logf("%d spans sent each way; jaeger stored %d directly and %.0f through the gateway (%s)",
		direct.total(), direct.total(), l.forwarded+l.summaries, l)
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
