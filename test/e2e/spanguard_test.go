//go:build e2e

package e2e

import (
	"context"
	encbin "encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// spanGuardSpans returns the spans sink received by span id and how many it
// received in all, duplicates included.
func spanGuardSpans(sink *OTLPSink) (map[pcommon.SpanID]ptrace.Span, int) {
	spans := map[pcommon.SpanID]ptrace.Span{}
	received := 0
	sink.EachSpan(func(_ pcommon.Resource, sp ptrace.Span) {
		spans[sp.SpanID()] = sp
		received++
	})
	return spans, received
}

// spanGuardExplosion builds an agent-loop trace of `steps` steps (a model
// call and a tool call each, 1 s apart) under one root, as requests of at
// most per spans in end order: children before parents, the root last.
func spanGuardExplosion(traceByte byte, steps, per int) (reqs []ptrace.Traces, root pcommon.SpanID, total int) {
	var tid pcommon.TraceID
	tid[0], tid[15] = 0xe2, traceByte
	next := uint64(1)
	id := func() pcommon.SpanID {
		next++
		var s pcommon.SpanID
		encbin.BigEndian.PutUint64(s[:], next)
		return s
	}
	base := time.Now().Add(-time.Hour)
	root = id()
	type spec struct {
		id, parent pcommon.SpanID
		name       string
		start, end time.Time
	}
	var specs []spec
	at := base
	for i := 0; i < steps; i++ {
		step := id()
		specs = append(specs,
			spec{id(), step, "chat gpt-test", at, at.Add(300 * time.Millisecond)},
			spec{id(), step, "execute_tool fetch", at.Add(300 * time.Millisecond), at.Add(time.Second)},
			spec{step, root, "invoke_agent step", at, at.Add(time.Second)})
		at = at.Add(time.Second)
	}
	specs = append(specs, spec{root, pcommon.SpanID{}, "invoke_agent runaway", base, at})
	for len(specs) > 0 {
		n := min(per, len(specs))
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "runaway-agent")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for _, s := range specs[:n] {
			sp := spans.AppendEmpty()
			sp.SetTraceID(tid)
			sp.SetSpanID(s.id)
			sp.SetParentSpanID(s.parent)
			sp.SetName(s.name)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.end))
			sp.Attributes().PutStr("gen_ai.input.messages", strings.Repeat("context ", 64))
			if s.id == root {
				// A megabyte prompt: the gateway config truncates every
				// value past 16 KiB (span_limits.apply: always).
				sp.Attributes().PutStr("gen_ai.input.messages", strings.Repeat("prompt ", 1<<17))
			}
		}
		reqs = append(reqs, td)
		total += n
		specs = specs[n:]
	}
	return reqs, root, total
}

// TestSpanGuardGatewayBoundsExplosion starts the binary on the shipped
// gateway configuration with a small per-trace budget, sends a 6,001-span
// agent-loop trace (its root carrying a 896 KiB prompt) over OTLP/gRPC, and
// checks at a test OTLP sink that the trace arrives bounded (budget plus one
// summary span), connected (every forwarded span's parent was forwarded),
// with the prompt truncated and marked, with a summary that accounts for
// every span, and that the self-metrics endpoint shows the conservation law.
func TestSpanGuardGatewayBoundsExplosion(t *testing.T) {
	const budget = 300
	sink, sinkAddr := StartOTLPSink(t)
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", sinkAddr)
	t.Setenv("OTELCOL_LLM_TRACE_MAX_SPANS", fmt.Sprint(budget))
	t.Setenv("OTELCOL_LLM_TRACE_WINDOW", "2s")
	col := StartCollector(t, "--config", "builtin:gateway")
	col.WaitHealthy(t, 30*time.Second)

	reqs, root, total := spanGuardExplosion(1, 2000, 500)
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, td := range reqs {
		_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		require.NoError(t, err)
	}

	// The summary span comes when the trace's 2 s window ends.
	var summary ptrace.Span
	require.Eventually(t, func() bool {
		spans, _ := spanGuardSpans(sink)
		for _, s := range spans {
			if s.Name() == "span_guard.summary" {
				summary = s
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "no summary span reached the sink")
	spans, received := spanGuardSpans(sink)
	largest := sink.LargestTraceRequest()
	assert.Equal(t, len(spans), received, "no span delivered twice")
	assert.LessOrEqual(t, len(spans), budget+1, "budget plus the summary")
	assert.Less(t, largest, 3145728+1, "no request over max_batch_bytes")
	require.Contains(t, spans, root, "the root is kept")
	for id, s := range spans {
		if id == root {
			continue
		}
		_, ok := spans[s.ParentSpanID()]
		assert.True(t, ok, "span %s has parent %s, which was not forwarded", s.Name(), s.ParentSpanID())
	}
	assert.Equal(t, root, summary.ParentSpanID(), "summary is a child of the root")
	prompt, ok := spans[root].Attributes().Get("gen_ai.input.messages")
	require.True(t, ok)
	assert.LessOrEqual(t, len(prompt.Str()), 16384, "prompt truncated to span_limits.max_attribute_bytes")
	assert.True(t, strings.HasSuffix(prompt.Str(), "…"), "truncation marker")
	orig, ok := spans[root].Attributes().Get("span_guard.truncated.original_bytes")
	require.True(t, ok)
	assert.Equal(t, int64(7<<17), orig.Slice().At(0).Int(), "original length recorded")
	attr := func(k string) int64 {
		v, ok := summary.Attributes().Get(k)
		require.True(t, ok, "summary attribute %s", k)
		return v.Int()
	}
	assert.Equal(t, int64(total), attr("span_guard.spans.received"))
	assert.Equal(t, int64(total), attr("span_guard.spans.forwarded")+attr("span_guard.spans.folded")+attr("span_guard.spans.dropped"))
	assert.Equal(t, int64(len(spans)-1), attr("span_guard.spans.forwarded"))

	// The self-metrics tell the same story: received = forwarded + folded +
	// dropped + refused.
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort)
	var recv, fwd, dropped float64
	require.Eventually(t, func() bool {
		m := scrape(t, url)
		if !strings.Contains(m, "otelcol_span_guard_spans_dropped") {
			return false
		}
		recv = sumSeriesOrZero(m, "otelcol_span_guard_spans_received", "")
		fwd = sumSeriesOrZero(m, "otelcol_span_guard_spans_forwarded", "")
		dropped = sumSeriesOrZero(m, "otelcol_span_guard_spans_dropped", `reason="span_budget"`)
		return recv == float64(total) && fwd+dropped == recv
	}, 10*time.Second, 200*time.Millisecond, "self-metrics: received %v forwarded %v dropped %v", recv, fwd, dropped)
	assert.Equal(t, float64(len(spans)-1), fwd)
	m := scrape(t, url)
	assert.Equal(t, 1.0, sumSeries(t, m, "otelcol_span_guard_summary_spans", `outcome="forwarded"`))
	assert.Equal(t, 1.0, sumSeries(t, m, "otelcol_span_guard_traces_over_budget", ""))
	assert.Zero(t, sumSeriesOrZero(m, "otelcol_span_guard_held_spans", ""))
	assert.Equal(t, 1.0, sumSeries(t, m, "otelcol_span_guard_attribute_values_truncated", ""))

	require.NoError(t, col.Stop(t, 15*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
