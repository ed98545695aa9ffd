//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// semconvSink is an OTLP/gRPC trace and log server that keeps every span and
// log record it receives, by name.
type semconvSink struct {
	ptraceotlp.UnimplementedGRPCServer
	mu    sync.Mutex
	spans map[string]ptrace.Span
	logs  []plog.LogRecord
}

type semconvLogSink struct {
	plogotlp.UnimplementedGRPCServer
	s *semconvSink
}

func (s *semconvSink) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rss := req.Traces().ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				sp := ptrace.NewSpan()
				sss.At(j).Spans().At(k).CopyTo(sp)
				s.spans[sp.SpanID().String()] = sp
			}
		}
	}
	return ptraceotlp.NewExportResponse(), nil
}

func (l *semconvLogSink) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	rls := req.Logs().ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			for k := 0; k < sls.At(j).LogRecords().Len(); k++ {
				lr := plog.NewLogRecord()
				sls.At(j).LogRecords().At(k).CopyTo(lr)
				l.s.logs = append(l.s.logs, lr)
			}
		}
	}
	return plogotlp.NewExportResponse(), nil
}

func (s *semconvSink) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spans), len(s.logs)
}

func (s *semconvSink) span(id pcommon.SpanID) (ptrace.Span, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, ok := s.spans[id.String()]
	return sp, ok
}

func startSemconvSink(t *testing.T) (*semconvSink, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	sink := &semconvSink{spans: map[string]ptrace.Span{}}
	ptraceotlp.RegisterGRPCServer(srv, sink)
	plogotlp.RegisterGRPCServer(srv, &semconvLogSink{s: sink})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return sink, l.Addr().String()
}

// semconvInput builds spans shaped like OpenInference and OpenLLMetry output,
// plus a span that needs no change.
func semconvInput(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	start := pcommon.NewTimestampFromTime(time.Now().Add(-time.Minute))
	for i := 0; i < n; i++ {
		oi := ss.Spans().AppendEmpty()
		oi.SetTraceID(pcommon.TraceID{byte(i + 1), 1})
		oi.SetSpanID(pcommon.SpanID{byte(i + 1), 1})
		oi.SetName("ChatCompletion")
		oi.SetStartTimestamp(start)
		oi.SetEndTimestamp(start + 2e9)
		a := oi.Attributes()
		a.PutStr("openinference.span.kind", "LLM")
		a.PutStr("llm.model_name", "gpt-4o-mini")
		a.PutStr("llm.provider", "azure")
		a.PutStr("llm.system", "openai")
		a.PutStr("llm.invocation_parameters", `{"temperature": 0.3, "max_tokens": 64}`)
		a.PutStr("llm.input_messages.0.message.role", "user")
		a.PutStr("llm.input_messages.0.message.content", fmt.Sprintf("question %d", i))
		a.PutStr("llm.output_messages.0.message.role", "assistant")
		a.PutStr("llm.output_messages.0.message.content", "answer")
		a.PutInt("llm.token_count.prompt", 12)
		a.PutInt("llm.token_count.completion", 5)
		a.PutInt("llm.token_count.total", 17)
		a.PutStr("openinference.unknown_field", "kept")

		ol := ss.Spans().AppendEmpty()
		ol.SetTraceID(pcommon.TraceID{byte(i + 1), 1})
		ol.SetSpanID(pcommon.SpanID{byte(i + 1), 2})
		ol.SetName("anthropic.chat")
		ol.SetStartTimestamp(start)
		ol.SetEndTimestamp(start + 1e9)
		b := ol.Attributes()
		b.PutStr("gen_ai.system", "Anthropic")
		b.PutStr("llm.request.type", "chat")
		b.PutStr("gen_ai.request.model", "claude-3-5-haiku")
		b.PutInt("gen_ai.usage.prompt_tokens", 9)
		b.PutInt("gen_ai.usage.completion_tokens", 3)
		b.PutStr("gen_ai.prompt.0.role", "user")
		b.PutStr("gen_ai.prompt.0.content", "hi")
		b.PutStr("gen_ai.completion.0.role", "assistant")
		b.PutStr("gen_ai.completion.0.content", "hello")
		b.PutStr("gen_ai.completion.0.finish_reason", "end_turn")

		plain := ss.Spans().AppendEmpty()
		plain.SetTraceID(pcommon.TraceID{byte(i + 1), 1})
		plain.SetSpanID(pcommon.SpanID{byte(i + 1), 3})
		plain.SetName("GET /health")
		plain.Attributes().PutStr("http.request.method", "GET")
	}
	return td
}

// TestLLMSemconvNormalizesOverOTLP sends OpenInference and OpenLLMetry spans
// and a legacy log record through builtin:normalize and checks the GenAI
// conventions at an OTLP sink, and the processor's counters.
func TestLLMSemconvNormalizesOverOTLP(t *testing.T) {
	sink, sinkAddr := startSemconvSink(t)
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", sinkAddr)
	col := StartCollector(t, "--config", "builtin:normalize")
	col.WaitHealthy(t, 30*time.Second)

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const n = 20
	_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(semconvInput(n)))
	require.NoError(t, err)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetEventName("gen_ai.choice")
	lr.Attributes().PutStr("gen_ai.system", "az.ai.inference")
	lr.Attributes().PutStr("gen_ai.usage.completion_tokens", "42")
	_, err = plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(ld))
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		spans, logs := sink.counts()
		return spans >= 3*n && logs >= 1
	}, 30*time.Second, 50*time.Millisecond, "the sink did not receive everything")
	spans, logs := sink.counts()
	assert.Equal(t, 3*n, spans)
	assert.Equal(t, 1, logs)

	oi, ok := sink.span(pcommon.SpanID{1, 1})
	require.True(t, ok)
	assert.Equal(t, "chat gpt-4o-mini", oi.Name())
	assert.Equal(t, ptrace.SpanKindClient, oi.Kind())
	want := map[string]any{
		"gen_ai.operation.name":        "chat",
		"gen_ai.provider.name":         "azure.ai.openai",
		"gen_ai.request.model":         "gpt-4o-mini",
		"gen_ai.request.temperature":   0.3,
		"gen_ai.request.max_tokens":    int64(64),
		"gen_ai.usage.input_tokens":    int64(12),
		"gen_ai.usage.output_tokens":   int64(5),
		"openinference.unknown_field":  "kept",
		"otelcol_llm.semconv.dialect":  "openinference",
		"otelcol_llm.semconv.unmapped": []any{"openinference.unknown_field"},
	}
	got := oi.Attributes().AsRaw()
	for k, v := range want {
		assert.Equal(t, v, got[k], k)
	}
	for _, gone := range []string{"llm.model_name", "llm.token_count.total", "llm.input_messages.0.message.content", "llm.invocation_parameters"} {
		assert.NotContains(t, got, gone)
	}
	var in []map[string]any
	require.NoError(t, json.Unmarshal([]byte(got["gen_ai.input.messages"].(string)), &in))
	assert.Equal(t, []map[string]any{{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "question 0"}}}}, in)
	var out []map[string]any
	require.NoError(t, json.Unmarshal([]byte(got["gen_ai.output.messages"].(string)), &out))
	require.Len(t, out, 1)
	assert.Equal(t, "stop", out[0]["finish_reason"])

	ol, ok := sink.span(pcommon.SpanID{1, 2})
	require.True(t, ok)
	assert.Equal(t, "chat claude-3-5-haiku", ol.Name())
	gotOL := ol.Attributes().AsRaw()
	assert.Equal(t, "anthropic", gotOL["gen_ai.provider.name"])
	assert.Equal(t, int64(9), gotOL["gen_ai.usage.input_tokens"])
	assert.Equal(t, []any{"stop"}, gotOL["gen_ai.response.finish_reasons"])
	assert.Contains(t, gotOL["gen_ai.output.messages"], `"finish_reason":"stop"`)
	assert.NotContains(t, gotOL, "gen_ai.prompt.0.content")

	plain, ok := sink.span(pcommon.SpanID{1, 3})
	require.True(t, ok)
	assert.Equal(t, map[string]any{"http.request.method": "GET"}, plain.Attributes().AsRaw(), "a span with nothing to map passes unchanged")

	sink.mu.Lock()
	logAttrs := sink.logs[0].Attributes().AsRaw()
	sink.mu.Unlock()
	assert.Equal(t, "azure.ai.inference", logAttrs["gen_ai.provider.name"])
	assert.Equal(t, int64(42), logAttrs["gen_ai.usage.output_tokens"])

	metrics := scrape(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort))
	assert.Equal(t, float64(n), sumSeries(t, metrics, "otelcol_llm_semconv_spans", `dialect="openinference"`))
	assert.Equal(t, float64(n), sumSeries(t, metrics, "otelcol_llm_semconv_spans", `dialect="openllmetry"`))
	assert.Equal(t, float64(n), sumSeries(t, metrics, "otelcol_llm_semconv_spans", `outcome="unchanged"`))
	assert.Equal(t, float64(n), sumSeries(t, metrics, "otelcol_llm_semconv_attributes", `outcome="unmapped"`))
	assert.Equal(t, float64(1), sumSeries(t, metrics, "otelcol_llm_semconv_log_records", `dialect="otel_legacy"`))

	require.NoError(t, col.Stop(t, 15*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
