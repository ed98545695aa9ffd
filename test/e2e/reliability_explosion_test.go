//go:build e2e

package e2e

import (
	"context"
	encbin "encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Memory settings the explosion test lays over builtin:gateway (whose
// memory_limiter is a share of the machine's memory, which says nothing on
// a machine of any size). The RSS bound the test asserts is derived from
// them: memory_limiter refuses data once the Go heap reaches
// limit_mib - spike_limit_mib and forces a collection at limit_mib, and
// span_guard refuses once its open batches and trace state pass
// memory_limit_mib (well inside the heap limit), so the heap stays under
// limit_mib; on top of the heap the process holds the runtime's own memory
// (stacks, GC metadata, heap pages not yet returned to the OS) and the
// mapped binary, for which the bound allows rssAllowanceMiB.
const (
	explosionLimitMiB      = 512
	explosionSpikeMiB      = 128
	explosionSpanGuardMiB  = 256
	rssAllowanceMiB        = 256
	explosionRSSBoundBytes = (explosionLimitMiB + rssAllowanceMiB) * mib
)

var explosionOverlay = fmt.Sprintf(`
processors:
  memory_limiter:
    limit_mib: %d
    spike_limit_mib: %d
  span_guard:
    memory_limit_mib: %d
`, explosionLimitMiB, explosionSpikeMiB, explosionSpanGuardMiB)

// otlpSender sends traces to a collector's OTLP/gRPC receiver and retries a
// request the collector refuses with a retryable status (memory_limiter,
// span_guard), as an OTLP SDK does, a bounded number of times.
type otlpSender struct {
	client  ptraceotlp.GRPCClient
	retries int // refusals retried
}

func newOTLPSender(t testing.TB, port int) *otlpSender {
	t.Helper()
	return newOTLPSenderTo(t, fmt.Sprintf("127.0.0.1:%d", port))
}

// newOTLPSenderTo is newOTLPSender for any OTLP/gRPC address (host:port).
func newOTLPSenderTo(t testing.TB, addr string) *otlpSender {
	t.Helper()
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &otlpSender{client: ptraceotlp.NewGRPCClient(conn)}
}

// send delivers td, retrying refusals for up to three minutes (how soon
// the collector has room again depends on how fast the machine drains it).
func (s *otlpSender) send(t testing.TB, td ptrace.Traces) {
	t.Helper()
	req := ptraceotlp.NewExportRequestFromTraces(td)
	backoff := 50 * time.Millisecond
	for deadline := time.Now().Add(3 * time.Minute); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := s.client.Export(ctx, req)
		cancel()
		if err == nil {
			return
		}
		code := status.Code(err)
		require.True(t, code == codes.Unavailable || code == codes.ResourceExhausted, "export: %v", err)
		require.True(t, time.Now().Before(deadline), "still refused after three minutes: %v", err)
		s.retries++
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

// idGen hands out distinct span ids.
type idGen uint64

func (g *idGen) next() pcommon.SpanID {
	*g++
	var s pcommon.SpanID
	encbin.BigEndian.PutUint64(s[:], uint64(*g))
	return s
}

// runawayTrace streams a runaway agent loop of `spans` spans (steps of a
// model call and a tool call under one root) to send, in requests of per
// spans, generated as they go so the test never holds the whole trace. The
// spans come in end order, as SDKs export them: children before their
// step, the root last.
func runawayTrace(tid pcommon.TraceID, spans, per int, ids *idGen, send func(ptrace.Traces)) {
	base := time.Now().Add(-time.Hour)
	root := ids.next()
	at := base
	td := ptrace.NewTraces()
	var ss ptrace.SpanSlice
	n := 0
	add := func(id, parent pcommon.SpanID, name string, start, end time.Time) {
		if n%per == 0 {
			if n > 0 {
				send(td)
			}
			td = ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "runaway-agent")
			ss = rs.ScopeSpans().AppendEmpty().Spans()
			ss.EnsureCapacity(per)
		}
		sp := ss.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(id)
		sp.SetParentSpanID(parent)
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		sp.Attributes().PutStr("gen_ai.operation.name", "chat")
		n++
	}
	for n+3 < spans {
		step := ids.next()
		add(ids.next(), step, "chat gpt-test", at, at.Add(300*time.Millisecond))
		add(ids.next(), step, "execute_tool fetch", at.Add(300*time.Millisecond), at.Add(time.Second))
		add(step, root, "invoke_agent step", at, at.Add(time.Second))
		at = at.Add(time.Second)
	}
	for n+1 < spans { // pad to the exact count with more model calls
		add(ids.next(), root, "chat gpt-test", at, at.Add(time.Millisecond))
	}
	add(root, pcommon.SpanID{}, "invoke_agent runaway", base, at)
	send(td)
}

// perTokenTrace is a streamed chat call with one span per token, as some
// instrumentations emit: a server span, the chat span and `tokens` 10 ms
// token spans under it, in one request.
func perTokenTrace(tid pcommon.TraceID, tokens int, ids *idGen) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chatty-stream")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	base := time.Now().Add(-time.Minute)
	server, chat := ids.next(), ids.next()
	mk := func(id, parent pcommon.SpanID, name string, start, end time.Time) ptrace.Span {
		sp := ss.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(id)
		sp.SetParentSpanID(parent)
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		return sp
	}
	end := base.Add(time.Duration(tokens) * 10 * time.Millisecond)
	for i := 0; i < tokens; i++ {
		at := base.Add(time.Duration(i) * 10 * time.Millisecond)
		mk(ids.next(), chat, "gen_ai.token", at, at.Add(10*time.Millisecond)).Attributes().PutInt("gen_ai.token.index", int64(i))
	}
	c := mk(chat, server, "chat gpt-4o-mini", base, end)
	c.SetKind(ptrace.SpanKindClient)
	c.Attributes().PutStr("gen_ai.operation.name", "chat")
	c.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
	c.Attributes().PutStr("gen_ai.provider.name", "openai")
	c.Attributes().PutInt("gen_ai.usage.output_tokens", int64(tokens))
	mk(server, pcommon.SpanID{}, "POST /v1/chat/completions", base, end).SetKind(ptrace.SpanKindServer)
	return td
}

// TestReliabilityExplosionBoundedMemory sends a million-span trace and 50
// per-token traces of 2,002 spans over OTLP to builtin:gateway with a
// per-trace budget of 1,000 spans, samples the collector's RSS from /proc
// every 100 ms, and checks that RSS stayed under the bound derived from
// memory_limiter and span_guard, the collector did not crash and is healthy,
// the summaries arrived, each trace reached the sink within its budget, and
// every span sent is at the sink or accounted as folded or dropped.
func TestReliabilityExplosionBoundedMemory(t *testing.T) {
	const (
		budget     = 1000
		bigSpans   = 1_000_000
		perRequest = 5000
		tokenTrace = 50
		tokens     = 2000
	)
	sink := StartCountingSink(t, "", 0)
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", sink.Addr())
	t.Setenv("OTELCOL_LLM_TRACE_MAX_SPANS", fmt.Sprint(budget))
	t.Setenv("OTELCOL_LLM_TRACE_WINDOW", "5s")
	col := StartCollector(t, "--config", "builtin:gateway", "--config", "file:"+writeFile(t, "memory.yaml", explosionOverlay))
	col.WaitHealthy(t, time.Minute)
	// The sampling's bound is the test's own, not a guess at how long
	// sending takes on this machine.
	rss := SampleRSS(t, col, 100*time.Millisecond, 20*time.Minute)
	sender := newOTLPSender(t, col.OTLPGRPCPort)

	start := time.Now()
	var ids idGen
	sent := 0
	bigTID := pcommon.TraceID{0xb1, 0x6, 15: 1}
	runawayTrace(bigTID, bigSpans, perRequest, &ids, func(td ptrace.Traces) {
		sent += td.SpanCount()
		sender.send(t, td)
	})
	for i := 0; i < tokenTrace; i++ {
		td := perTokenTrace(pcommon.TraceID{0x70, 0x4e, 15: byte(i + 1)}, tokens, &ids)
		sent += td.SpanCount()
		sender.send(t, td)
	}
	sendTime := time.Since(start)
	require.Equal(t, bigSpans+tokenTrace*(tokens+2), sent)

	// Settled: every trace state released, its summary forwarded and at the
	// sink, nothing held or queued.
	var l spanLedger
	var c sinkCounts
	_, settled := waitSettled(3*time.Minute, time.Second, func() string {
		l, c = readLedger(selfMetrics(t, col)), sink.Counts()
		return fmt.Sprint(l, c)
	}, func(string) bool {
		return l.received == float64(sent)+l.refused && l.held == 0 && l.tracked == 0 && l.inQueue == 0 &&
			l.received == l.forwarded+l.folded+l.dropped+l.refused &&
			float64(c.Spans) == l.forwarded+l.summaries
	})
	rss.Stop()
	peak := rss.Peak()
	t.Logf("sent %d spans in %v (%d refusals retried); %s; sink: %d distinct spans, %d duplicates, %d summaries; RSS peak %.1f MiB over %d samples (bound %d MiB)",
		sent, sendTime.Round(time.Millisecond), sender.retries, l, c.Unique, c.Duplicates, c.Summaries,
		float64(peak)/mib, len(rss.Samples()), explosionRSSBoundBytes/mib)
	require.True(t, settled, "pipeline did not settle: %s; sink %+v", l, c)

	assert.False(t, col.Exited(), "collector crashed:\n%s", col.Output())
	assert.Less(t, peak, int64(explosionRSSBoundBytes), "RSS peak above the bound")
	assert.GreaterOrEqual(t, len(rss.Samples()), 10, "too few RSS samples to mean anything")

	// Conservation over everything sent.
	assert.Equal(t, float64(sent), float64(c.Unique)+l.folded+l.dropped, "sent = at the sink + folded + dropped")
	assert.Zero(t, c.Duplicates)
	assert.Equal(t, l.forwarded, float64(c.Unique))
	assert.Equal(t, float64(c.Summaries), l.summaries)
	assert.Zero(t, l.droppedBy["export_failed"]+l.droppedBy["span_too_large"])

	// Per trace: what each trace forwarded, from the sink, against its
	// summaries (one per budget window the trace went over).
	forwarded := map[pcommon.TraceID]int{}
	for k := range sink.Keys() {
		forwarded[pcommon.TraceID(k[:16])]++
	}
	type tally struct{ windows, received, forwarded, folded, dropped int64 }
	sums := map[pcommon.TraceID]*tally{}
	for _, s := range sink.Summaries() {
		a := func(k string) int64 {
			v, ok := s.Attributes().Get(k)
			require.True(t, ok, "summary attribute %s", k)
			return v.Int()
		}
		tl := sums[s.TraceID()]
		if tl == nil {
			tl = &tally{}
			sums[s.TraceID()] = tl
		}
		tl.windows++
		tl.received += a("span_guard.spans.received")
		tl.forwarded += a("span_guard.spans.forwarded")
		tl.folded += a("span_guard.spans.folded")
		tl.dropped += a("span_guard.spans.dropped")
		assert.LessOrEqual(t, a("span_guard.spans.forwarded"), int64(budget+perRequest/3+1),
			"a window forwards at most the budget plus the step parents owed across request boundaries")
	}
	big := sums[bigTID]
	require.NotNil(t, big, "no summary for the million-span trace")
	// A window that stayed under budget has no summary and forwarded all it
	// received.
	unsummarized := int64(forwarded[bigTID]) - big.forwarded
	assert.GreaterOrEqual(t, unsummarized, int64(0))
	assert.LessOrEqual(t, unsummarized, int64(budget))
	assert.Equal(t, int64(bigSpans), big.received+unsummarized, "the million-span trace, summaries + unsummarized window")
	assert.Equal(t, big.received, big.forwarded+big.folded+big.dropped)
	assert.Less(t, forwarded[bigTID], bigSpans/50, "the million-span trace reached the sink bounded")
	t.Logf("million-span trace: %d windows over budget, %d spans forwarded (%d outside summarized windows), %d folded, %d dropped",
		big.windows, forwarded[bigTID], unsummarized, big.folded, big.dropped)
	for i := 0; i < tokenTrace; i++ {
		tid := pcommon.TraceID{0x70, 0x4e, 15: byte(i + 1)}
		tl := sums[tid]
		require.NotNil(t, tl, "no summary for per-token trace %d", i)
		assert.Equal(t, int64(tokens+2), tl.received)
		assert.Equal(t, int64(forwarded[tid]), tl.forwarded)
		assert.Positive(t, tl.folded, "token spans folded")
		assert.LessOrEqual(t, forwarded[tid], budget)
	}

	// Still healthy after the explosion.
	col.WaitHealthy(t, 30*time.Second)
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
