//go:build e2e

package e2e

import (
	encbin "encoding/binary"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// outageOverlay shortens the gateway exporter's retry backoff (5 s to 30 s
// by default) so that the test sees the recovery within seconds of the
// backend's return; the queue, its file_storage and max_elapsed_time: 0
// (retry forever) are the shipped ones.
const outageOverlay = `
exporters:
  otlp_grpc/upstream:
    timeout: 2s
    retry_on_failure:
      initial_interval: 100ms
      max_interval: 1s
`

// steadySender sends 10-span traces with distinct trace and span ids and
// remembers every span the collector accepted.
type steadySender struct {
	next uint64
	sent []spanKey
}

// sendFor sends one trace every 1/rate seconds for d, to the collector
// listening on port, through sender.
func (s *steadySender) sendFor(t *testing.T, sender *otlpSender, d time.Duration, rate int) {
	t.Helper()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "steady-app")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		s.next++
		var tid pcommon.TraceID
		tid[0] = 0x0a
		encbin.BigEndian.PutUint64(tid[8:], s.next)
		now := time.Now()
		var root pcommon.SpanID
		keys := make([]spanKey, 0, 10)
		for i := 0; i < 10; i++ {
			sp := spans.AppendEmpty()
			var sid pcommon.SpanID
			encbin.BigEndian.PutUint64(sid[:], s.next<<8|uint64(i+1))
			sp.SetTraceID(tid)
			sp.SetSpanID(sid)
			if i == 0 {
				root = sid
				sp.SetName("POST /v1/chat/completions")
			} else {
				sp.SetParentSpanID(root)
				sp.SetName("chat gpt-4o-mini")
				sp.Attributes().PutStr("gen_ai.operation.name", "chat")
				sp.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
			}
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
			keys = append(keys, keyOf(sp))
		}
		sender.send(t, td)
		s.sent = append(s.sent, keys...)
	}
}

// missing returns how many sent spans the sink has not received.
func (s *steadySender) missing(sink *CountingSink) int {
	got := sink.Keys()
	n := 0
	for _, k := range s.sent {
		if got[k] == 0 {
			n++
		}
	}
	return n
}

// waitDelivered waits until every span sent has arrived, for as long as
// spans keep arriving (the persistent queue drains at the machine's pace),
// and returns how many are missing.
func waitDelivered(sink *CountingSink, st *steadySender) (int, error) {
	return waitProgress(5*time.Minute, time.Minute, func() int { return st.missing(sink) },
		func(missing int) bool { return missing == 0 })
}

// TestReliabilityBackendOutage runs builtin:gateway (spans go to the
// backend at once, and to a sending queue on file_storage only while the
// backend refuses them) in front of a sink that goes away twice. Before
// the outage every span takes the direct route and nothing is queued. Phase 1: the sink
// is down for 30 s while traces keep coming; when it is back, every span
// sent arrives. Phase 2: the sink goes down again, and in the middle of
// the outage the collector is killed with SIGKILL and restarted on the same
// storage folder: the restarted collector reports the queued data before
// the sink returns, and when it does every span sent arrives at least once.
// Delivery is at-least-once: a batch an exporter was sending when it was
// killed can be sent again, so duplicates are counted and reported, and
// conservation is checked on distinct span ids.
func TestReliabilityBackendOutage(t *testing.T) {
	const rate = 50 // traces of 10 spans per second
	sink := StartCountingSink(t, "", 0)
	storage := t.TempDir()
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", sink.Addr())
	t.Setenv("OTELCOL_LLM_STORAGE_DIR", storage)
	overlay := "file:" + writeFile(t, "retry.yaml", outageOverlay)
	col := StartCollector(t, "--config", "builtin:gateway", "--config", overlay)
	col.WaitHealthy(t, time.Minute)
	sender := newOTLPSender(t, col.OTLPGRPCPort)
	var st steadySender

	// Before the outage: the direct route only.
	st.sendFor(t, sender, 3*time.Second, rate)
	_, err := waitDelivered(sink, &st)
	require.NoError(t, err, "before the outage")
	m := selfMetrics(t, col)
	assert.Positive(t, sumSeriesOrZero(m, "otelcol_spillover_spans", `route="primary"`))
	assert.Zero(t, sumSeriesOrZero(m, "otelcol_spillover_spans", `route="spill"`), "a healthy backend gets nothing through the disk")
	assert.Zero(t, sumSeriesOrZero(m, "otelcol_exporter_sent_spans", `exporter="otlp_grpc/upstream"`))

	// Phase 1: a 30 s outage.
	sink.Stop()
	outage := time.Now()
	st.sendFor(t, sender, 30*time.Second, rate)
	queued := sumSeriesOrZero(selfMetrics(t, col), "otelcol_exporter_queue_size", `exporter="otlp_grpc/upstream"`, `data_type="traces"`)
	sink.Start(t)
	t.Logf("phase 1: sink down for %v, %.0f batches queued at the end of it", time.Since(outage).Round(time.Millisecond), queued)
	assert.Positive(t, queued, "the outage left data in the persistent queue")
	assert.Positive(t, sumSeriesOrZero(selfMetrics(t, col), "otelcol_spillover_spilled_batches", `cause="primary_refused"`))
	st.sendFor(t, sender, 3*time.Second, rate)
	_, err = waitDelivered(sink, &st)
	c := sink.Counts()
	t.Logf("phase 1: sent %d spans, sink %d distinct, %d duplicates", len(st.sent), c.Unique, c.Duplicates)
	require.NoError(t, err, "phase 1: of %d spans sent, some never arrived", len(st.sent))
	phase1Sent, phase1Dups := len(st.sent), c.Duplicates
	assert.Equal(t, phase1Sent, c.Unique, "nothing arrived that was not sent")

	// Phase 2: the collector is killed in the middle of an outage.
	sink.Stop()
	st.sendFor(t, sender, 5*time.Second, rate)
	// What the receiver acknowledged passes span_guard's open batches
	// (flush_timeout 200ms) into the persistent queue; data still in an open
	// batch when the process dies is lost, so the test kills it once
	// span_guard holds nothing.
	require.True(t, waitFor(time.Minute, func() bool {
		m = selfMetrics(t, col)
		return sumSeriesOrZero(m, "otelcol_span_guard_held_spans") == 0
	}), "span_guard still holds spans")
	queuedBefore := sumSeriesOrZero(m, "otelcol_exporter_queue_size", `exporter="otlp_grpc/upstream"`, `data_type="traces"`)
	require.NoError(t, col.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-col.done:
	case <-time.After(10 * time.Second):
		t.Fatal("collector did not die of SIGKILL")
	}
	col = StartCollector(t, "--config", "builtin:gateway", "--config", overlay)
	col.WaitHealthy(t, time.Minute)
	require.Equal(t, storage, col.StorageDir)
	queuedAfter := sumSeriesOrZero(selfMetrics(t, col), "otelcol_exporter_queue_size", `exporter="otlp_grpc/upstream"`, `data_type="traces"`)
	t.Logf("phase 2: %.0f batches queued before SIGKILL, %.0f after the restart", queuedBefore, queuedAfter)
	assert.Positive(t, queuedBefore)
	assert.Positive(t, queuedAfter, "the persistent queue survived SIGKILL")
	sender = newOTLPSender(t, col.OTLPGRPCPort)
	st.sendFor(t, sender, 3*time.Second, rate)
	sink.Start(t)
	_, err = waitDelivered(sink, &st)
	c = sink.Counts()
	t.Logf("phase 2: sent %d spans in all, sink %d distinct, %d duplicates (%d in phase 1), %d requests",
		len(st.sent), c.Unique, c.Duplicates, phase1Dups, c.Requests)
	require.NoError(t, err, "phase 2: of %d spans sent, some never arrived\n%s", len(st.sent), col.Output())
	assert.Equal(t, len(st.sent), c.Unique, "every span sent arrived, and nothing else")
	assert.Zero(t, phase1Dups, "an outage without a crash delivers each span once")
	assert.True(t, waitFor(time.Minute, func() bool {
		st.sendFor(t, sender, time.Second, rate)
		return sumSeriesOrZero(selfMetrics(t, col), "otelcol_spillover_spans", `route="primary"`) > 0
	}), "after the outage the restarted gateway sends directly again")

	// Nothing more is queued, and the restarted collector stops cleanly.
	_, err = waitProgress(3*time.Minute, time.Minute, func() float64 {
		return sumSeriesOrZero(selfMetrics(t, col), "otelcol_exporter_queue_size", `exporter="otlp_grpc/upstream"`, `data_type="traces"`)
	}, func(queued float64) bool { return queued == 0 })
	require.NoError(t, err, "batches still queued")
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
