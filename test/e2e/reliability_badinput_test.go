//go:build e2e

package e2e

import (
	"bytes"
	"context"
	encbin "encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// rawCodec sends and receives bytes as they are, so the test can put any
// byte string on the wire as an OTLP request.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

const traceExportMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// badTraces returns a request of one trace whose spans are set up by fill.
func badTraces(fill func(ss ptrace.SpanSlice)) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bad-input")
	fill(rs.ScopeSpans().AppendEmpty().Spans())
	return td
}

func newBadSpan(ss ptrace.SpanSlice, tid pcommon.TraceID, id, parent uint64, name string) ptrace.Span {
	sp := ss.AppendEmpty()
	sp.SetTraceID(tid)
	var sid, pid pcommon.SpanID
	if id != 0 {
		encbin.BigEndian.PutUint64(sid[:], id)
	}
	if parent != 0 {
		encbin.BigEndian.PutUint64(pid[:], parent)
	}
	sp.SetSpanID(sid)
	sp.SetParentSpanID(pid)
	sp.SetName(name)
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	return sp
}

// TestReliabilityBadOTLPInput sends malformed and hostile OTLP to
// builtin:gateway over gRPC and HTTP: invalid UTF-8, a 3 MiB attribute
// value, 10,000 attributes on a span, parent cycles (over budget, so
// span_guard walks them), zero ids, ids of the wrong length, truncated
// protobuf, a request over the receiver's size limit, a wrong content type
// and invalid JSON. Each request is either accepted, and then what it
// carried is at the sink or accounted by span_guard, or refused with a
// clear client error; the collector stays up and healthy throughout, and
// span_guard's limits show in its own counters.
func TestReliabilityBadOTLPInput(t *testing.T) {
	sink := StartCountingSink(t, "", 0)
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", sink.Addr())
	t.Setenv("OTELCOL_LLM_TRACE_MAX_SPANS", "50")
	t.Setenv("OTELCOL_LLM_TRACE_WINDOW", "1s")
	col := StartCollector(t, "--config", "builtin:gateway")
	col.WaitHealthy(t, time.Minute)

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	require.NoError(t, err)
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	export := func(td ptrace.Traces) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		return err
	}
	raw := func(b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var resp []byte
		return conn.Invoke(ctx, traceExportMethod, &b, &resp, grpc.ForceCodec(rawCodec{}))
	}
	accepted := 0 // spans in requests the collector accepted

	// Accepted, and repaired or bounded on the way.
	invalid := string([]byte{0xff, 0xfe, 'o', 'k', 0xc3})
	tid := func(b byte) pcommon.TraceID { return pcommon.TraceID{0xbb, 15: b} }
	cases := []struct {
		name string
		td   ptrace.Traces
	}{
		{"invalid UTF-8", badTraces(func(ss ptrace.SpanSlice) {
			sp := newBadSpan(ss, tid(1), 1, 0, "chat "+invalid)
			sp.Attributes().PutStr("gen_ai.request.model", invalid)
			sp.Attributes().PutStr(invalid, "key is not UTF-8")
			// Longer than span_limits.max_attribute_bytes, so truncation
			// must find a cut point in bytes that are not UTF-8.
			sp.Attributes().PutStr("gen_ai.input.messages", strings.Repeat(invalid, 8000))
			sp.Attributes().PutStr("llm.input_messages.0.message.content", invalid)
		})},
		{"3 MiB attribute value", badTraces(func(ss ptrace.SpanSlice) {
			newBadSpan(ss, tid(2), 1, 0, "chat huge").Attributes().PutStr("gen_ai.input.messages", strings.Repeat("x", 3<<20))
		})},
		{"10,000 attributes", badTraces(func(ss ptrace.SpanSlice) {
			a := newBadSpan(ss, tid(3), 1, 0, "chat many").Attributes()
			a.EnsureCapacity(10000)
			for i := 0; i < 10000; i++ {
				a.PutStr(fmt.Sprintf("attr.%05d", i), "v")
			}
		})},
		{"parent cycles over budget", badTraces(func(ss ptrace.SpanSlice) {
			newBadSpan(ss, tid(4), 1, 2, "cycle a") // 1 → 2 → 1
			newBadSpan(ss, tid(4), 2, 1, "cycle b")
			newBadSpan(ss, tid(4), 3, 3, "self parent")
			for i := uint64(0); i < 200; i++ { // children of the cycle, over the 50-span budget
				newBadSpan(ss, tid(4), 100+i, 1+i%3, "child")
			}
		})},
		{"zero trace and span ids", badTraces(func(ss ptrace.SpanSlice) {
			newBadSpan(ss, pcommon.TraceID{}, 0, 0, "all zero")
			newBadSpan(ss, pcommon.TraceID{}, 7, 0, "zero trace id")
			newBadSpan(ss, tid(5), 0, 9, "zero span id")
		})},
	}
	var mustArrive []spanKey // spans under no budget pressure: each must reach the sink
	for _, tc := range cases {
		err := export(tc.td)
		if err == nil {
			accepted += tc.td.SpanCount()
			if tc.td.SpanCount() < 50 {
				spans := tc.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
				for i := 0; i < spans.Len(); i++ {
					mustArrive = append(mustArrive, keyOf(spans.At(i)))
				}
			}
		}
		t.Logf("%s: %v", tc.name, err)
		assert.True(t, err == nil || status.Code(err) == codes.InvalidArgument, "%s: %v", tc.name, err)
		require.False(t, col.Exited(), "collector died on %s:\n%s", tc.name, col.Output())
	}

	// Refused with a clear client error.
	valid, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(badTraces(func(ss ptrace.SpanSlice) {
		for i := uint64(1); i <= 20; i++ {
			newBadSpan(ss, tid(6), i, 0, "truncated").Attributes().PutStr("k", strings.Repeat("v", 100))
		}
	}))
	require.NoError(t, err)
	// A trace id of 5 bytes: field 1 (resource_spans) > field 2
	// (scope_spans) > field 2 (spans) > field 1 (trace_id, length 5).
	shortID := []byte{0x0a, 0x0b, 0x12, 0x09, 0x12, 0x07, 0x0a, 0x05, 1, 2, 3, 4, 5}
	for _, rc := range []struct {
		name string
		body []byte
		want codes.Code
	}{
		// grpc-go answers a body its codec cannot decode with Internal
		// ("grpc: failed to unmarshal the received message: ..."), before
		// the OTLP receiver sees it; like InvalidArgument, OTLP clients do
		// not retry it.
		{"truncated protobuf", valid[:len(valid)/2], codes.Internal},
		{"trace id of 5 bytes", shortID, codes.Internal},
		{"garbage bytes", bytes.Repeat([]byte{0xff}, 64), codes.Internal},
		{"request over 4 MiB", append(bytes.Repeat([]byte{0x0a, 0x00}, 3<<20), valid...), codes.ResourceExhausted},
	} {
		err := raw(rc.body)
		t.Logf("gRPC %s: %v", rc.name, err)
		assert.Equal(t, rc.want, status.Code(err), "gRPC %s: %v", rc.name, err)
		if rc.want == codes.Internal {
			assert.Contains(t, status.Convert(err).Message(), "failed to unmarshal")
		} else {
			assert.NotEmpty(t, status.Convert(err).Message())
		}
		require.False(t, col.Exited(), "collector died on %s:\n%s", rc.name, col.Output())
	}
	httpURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", col.OTLPHTTPPort)
	for _, hc := range []struct {
		name, contentType string
		body              []byte
		want              int
	}{
		{"truncated protobuf", "application/x-protobuf", valid[:len(valid)/2], http.StatusBadRequest},
		{"trace id of 5 bytes", "application/x-protobuf", shortID, http.StatusBadRequest},
		{"wrong content type", "text/plain", valid, http.StatusUnsupportedMediaType},
		{"invalid JSON", "application/json", []byte(`{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": `), http.StatusBadRequest},
		{"JSON trace id not hex", "application/json", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"0102030405060708","name":"x"}]}]}]}`), http.StatusBadRequest},
	} {
		resp, err := http.Post(httpURL, hc.contentType, bytes.NewReader(hc.body))
		require.NoError(t, err, "HTTP %s", hc.name)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("HTTP %s: %d %q", hc.name, resp.StatusCode, truncateForLog(body))
		assert.Equal(t, hc.want, resp.StatusCode, "HTTP %s", hc.name)
		assert.NotEmpty(t, body, "HTTP %s: the client gets an explanation", hc.name)
		require.False(t, col.Exited(), "collector died on HTTP %s:\n%s", hc.name, col.Output())
	}

	// Still healthy, and still working: a good request goes through.
	col.WaitHealthy(t, 30*time.Second)
	good := badTraces(func(ss ptrace.SpanSlice) { newBadSpan(ss, tid(7), 1, 0, "chat after the storm") })
	require.NoError(t, export(good))
	accepted++

	// Everything accepted is at the sink or accounted; the limits worked and
	// were counted.
	var l spanLedger
	var c sinkCounts
	_, settled := waitSettled(2*time.Minute, time.Second, func() string {
		l, c = readLedger(selfMetrics(t, col)), sink.Counts()
		return fmt.Sprint(l, c)
	}, func(string) bool {
		return l.received == float64(accepted)+l.refused && l.held == 0 && l.tracked == 0 && l.inQueue == 0 &&
			l.received == l.forwarded+l.folded+l.dropped+l.refused && float64(c.Spans) == l.forwarded+l.summaries
	})
	t.Logf("accepted %d spans; %s; sink %+v", accepted, l, c)
	require.True(t, settled, "pipeline did not settle")
	assert.Equal(t, float64(accepted), float64(c.Unique)+l.folded+l.dropped, "accepted = at the sink + folded + dropped")
	assert.Zero(t, l.refused)
	assert.Equal(t, 1, sink.Has(keyOf(good.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0))))
	require.Len(t, mustArrive, 6, "the UTF-8, huge-value, many-attribute and zero-id spans were all accepted")
	for _, k := range mustArrive {
		assert.Equal(t, 1, sink.Has(k), "span %x (invalid UTF-8, huge value, 10,000 attributes or zero ids) arrived once", k)
	}
	m := selfMetrics(t, col)
	// A request that cannot be decoded carries no countable spans: the
	// receiver's refused counters stay at zero and the client's error is the
	// record of it.
	assert.Zero(t, sumSeriesOrZero(m, "otelcol_receiver_refused_spans"))
	assert.GreaterOrEqual(t, sumSeries(t, m, "otelcol_span_guard_attribute_values_truncated"), 2.0, "the 3 MiB value and the long invalid UTF-8 value")
	assert.GreaterOrEqual(t, sumSeries(t, m, "otelcol_span_guard_span_items_dropped", `kind="attribute"`), 10000.0-128, "attributes over span_limits.max_attributes")
	assert.Positive(t, l.droppedBy["span_budget"], "the cycle trace went over its budget")
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}

func truncateForLog(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// liveFaultErrorType is the error.type llm_loadgen's live mode records for
// each mockllm fault under liveFaultsOverlay's timeouts.
var liveFaultErrorType = map[string]string{
	mockllm.FaultRateLimit:     "429",
	mockllm.FaultOverloaded:    "503",
	mockllm.FaultContextLength: "400",
	mockllm.FaultErrorEvent:    "stream_error",
	mockllm.FaultStall:         "idle_timeout",
	mockllm.FaultDrop:          "connection_reset",
	mockllm.FaultMalformed:     "malformed_event",
	mockllm.FaultSlowHeaders:   "ttft_timeout",
	mockllm.FaultMissingDone:   "stream_incomplete",
	mockllm.FaultCutEvent:      "stream_incomplete",
}

// liveFaultsOverlay makes a stalled stream and late headers time out well
// before the mock's 2 s stall and header delay.
const liveFaultsOverlay = `
receivers:
  llm_loadgen:
    live:
      timeouts:
        ttft: 1s
        idle: 500ms
      drain_timeout: 5s
`

// TestReliabilityLiveMockFaults runs builtin:loadtest-mock against a
// mockllm that injects every fault kind it has, each into 8 % of requests,
// and checks that every request becomes exactly one span whose error.type
// matches the fault the mock recorded for it (counted per kind against the
// mock's ground truth), that llm_loadgen's own counters agree, and that the
// collector stays healthy.
func TestReliabilityLiveMockFaults(t *testing.T) {
	const requests = 150
	mcfg := mockllm.DefaultConfig()
	mcfg.TTFT, mcfg.ITL, mcfg.OutputTokens, mcfg.Seed = 20*time.Millisecond, 2*time.Millisecond, 20, 5
	mcfg.StallDuration, mcfg.SlowHeaders = 2*time.Second, 2*time.Second
	mcfg.FaultRates = map[string]float64{}
	for _, f := range mockllm.Faults {
		mcfg.FaultRates[f] = 0.08
	}
	require.Len(t, liveFaultErrorType, len(mockllm.Faults), "a fault kind without an expected error.type")
	mock, err := mockllm.New(mcfg)
	require.NoError(t, err)
	require.NoError(t, mock.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = mock.Close() })

	sink, sinkAddr := StartOTLPSink(t)
	t.Setenv("OTELCOL_LLM_TARGET_URL", mock.URL()+"/v1")
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", fmt.Sprint(requests))
	t.Setenv("OTELCOL_LLM_LOADGEN_RATE", "50")
	t.Setenv("OTELCOL_LLM_OTLP_ENDPOINT", sinkAddr)
	col := StartCollector(t, "--config", "builtin:loadtest-mock", "--config", "file:"+writeFile(t, "timeouts.yaml", liveFaultsOverlay))
	col.WaitHealthy(t, time.Minute)

	require.True(t, waitFor(3*time.Minute, func() bool { return strings.Contains(col.Output(), "llm_loadgen live run finished") }),
		"the live run did not finish:\n%s", col.Output())
	var spans []liveSpan
	require.True(t, waitFor(time.Minute, func() bool { spans, _ = liveSnapshot(sink); return len(spans) >= requests }),
		"%d spans of %d requests", len(spans), requests)
	col.WaitHealthy(t, 30*time.Second)
	m := selfMetrics(t, col)

	want := map[string]int{} // error.type → requests the mock faulted that way
	records := mock.Records()
	require.Len(t, records, requests, "the mock saw every request once")
	for _, r := range records {
		want[liveFaultErrorType[r.Fault]]++ // "" for no fault
	}
	t.Logf("%d of %d requests faulted, by error.type: %v", requests-want[""], requests, want)
	got := map[string]int{}
	for _, sp := range spans {
		got[sp.errorType]++
	}
	t.Logf("mock faults by expected error.type: %v; spans by error.type: %v", want, got)
	assert.Len(t, spans, requests, "one span per request")
	assert.Equal(t, want, got, "every fault classified as its kind")
	for f, et := range liveFaultErrorType {
		assert.Positive(t, want[et], "fault %s was injected", f)
		assert.Equal(t, float64(want[et]), sumSeriesOrZero(m, "otelcol_llm_loadgen_live_requests", `error_type="`+et+`"`),
			"otelcol_llm_loadgen_live_requests{error_type=%q}", et)
	}
	assert.Equal(t, float64(requests), sumSeries(t, m, "otelcol_llm_loadgen_live_requests"))
	assert.Zero(t, sumSeriesOrZero(m, "otelcol_llm_loadgen_dropped"))
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}

// TestReliabilityInferenceLogGarbage feeds builtin:inference-logs a vLLM
// log with garbage between the real lines (binary bytes, invalid UTF-8, a
// 200 KB line, control characters, half a JSON object, a truncated vLLM
// line, a stray traceback header): every real request line arrives, every
// garbage line is kept as a parse_error record and counted (the traceback
// header, a continuation line, folded into the record before it), and the
// collector stays healthy.
func TestReliabilityInferenceLogGarbage(t *testing.T) {
	sink, addr := StartOTLPSink(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "vllm.log")
	t.Setenv("OTELCOL_LLM_INFERENCE_LOG_INCLUDE", filepath.Join(dir, "*.log"))
	t.Setenv("OTELCOL_LLM_INFERENCE_LOG_START_AT", "beginning")
	t.Setenv("OTELCOL_LLM_STORAGE_DIR", filepath.Join(dir, "storage"))
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", addr)

	garbage := []string{
		string([]byte{0x00, 0x01, 0x02, 0xff, 0xfe, 0x7f, 0x80}),
		string([]byte{0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1}) + " not UTF-8",
		strings.Repeat("A", 200_000),
		"\x1b[31mINFO\x1b[0m \x07\x08 control characters",
		`{"level": "info", "msg": "half a json`,
		"(APIServer pid=2914) INFO 11-29 17:41:12 [async_llm.py:3",
		"Traceback (most recent call last):",
	}
	const realRequests = 50
	var b strings.Builder
	folded := 0 // traceback headers, which fold into the record before them
	for i := 0; i < realRequests; i++ {
		b.WriteString(vllmChunk(i))
		g := garbage[i%len(garbage)]
		if strings.HasPrefix(g, "Traceback") {
			folded++
		}
		b.WriteString(g)
		b.WriteByte('\n')
	}
	unparsed := realRequests - folded
	require.NoError(t, os.WriteFile(logPath, []byte(b.String()), 0o600))
	col := StartCollector(t, "--config", "builtin:inference-logs")
	col.WaitHealthy(t, time.Minute)
	waitRequests(t, sink, realRequests)

	selfURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort)
	var parseErrors float64
	require.True(t, waitFor(time.Minute, func() bool {
		parseErrors = sumSeriesOrZero(scrape(t, selfURL), "otelcol_inference_log_records", `outcome="parse_error"`)
		return parseErrors >= float64(unparsed)
	}), "parse_error records: %v", parseErrors)
	time.Sleep(time.Second) // nothing else should arrive
	requests, _, _ := inferenceLogSnapshot(sink)
	assert.Len(t, requests, realRequests)
	for id, n := range requests {
		assert.Equal(t, 1, n, "request %s forwarded once", id)
	}
	m := scrape(t, selfURL)
	parseErrors = sumSeries(t, m, "otelcol_inference_log_records", `outcome="parse_error"`)
	parsed := sumSeries(t, m, "otelcol_inference_log_records", `outcome="parsed"`)
	flagged, withTraceback := 0, 0
	sink.EachLogRecord(func(_ pcommon.Resource, lr plog.LogRecord) {
		if _, ok := lr.Attributes().Get("inference_log.parse_error"); ok {
			flagged++
		}
		if strings.HasSuffix(lr.Body().AsString(), "\nTraceback (most recent call last):") {
			withTraceback++
		}
	})
	t.Logf("records: %.0f parsed, %.0f parse_error (garbage lines written: %d); %d at the sink flagged parse_error, %d log records in all",
		parsed, parseErrors, realRequests, flagged, sink.LogRecordCount())
	assert.Equal(t, float64(unparsed), parseErrors, "one parse_error per garbage line that is not a continuation")
	assert.Equal(t, unparsed, flagged, "every such garbage line arrives flagged, with its raw body")
	assert.Equal(t, folded, withTraceback, "every traceback header arrives folded into the record before it")
	assert.Equal(t, float64(sink.LogRecordCount()), parsed+parseErrors, "every line read is at the sink")
	assert.Zero(t, sumSeriesOrZero(m, "otelcol_inference_log_records_dropped"))
	col.WaitHealthy(t, 30*time.Second)
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
