//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
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

// semconvSpans returns the spans sink received, by span id.
func semconvSpans(sink *OTLPSink) map[pcommon.SpanID]ptrace.Span {
	spans := map[pcommon.SpanID]ptrace.Span{}
	sink.EachSpan(func(_ pcommon.Resource, sp ptrace.Span) { spans[sp.SpanID()] = sp })
	return spans
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

// openInferenceWant is what llm_semconv makes of semconvInput's
// OpenInference span (its attributes, as pcommon's AsRaw gives them).
var openInferenceWant = map[string]any{
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

// TestLLMSemconvNormalizesOverOTLP sends OpenInference and OpenLLMetry spans
// and a legacy log record through builtin:normalize and checks the GenAI
// conventions at an OTLP sink, and the processor's counters.
func TestLLMSemconvNormalizesOverOTLP(t *testing.T) {
	sink, sinkAddr := StartOTLPSink(t)
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
		return len(semconvSpans(sink)) >= 3*n && sink.LogRecordCount() >= 1
	}, 30*time.Second, 50*time.Millisecond, "the sink did not receive everything")
	spans := semconvSpans(sink)
	assert.Equal(t, 3*n, len(spans))
	assert.Equal(t, 1, sink.LogRecordCount())

	oi, ok := spans[pcommon.SpanID{1, 1}]
	require.True(t, ok)
	assert.Equal(t, "chat gpt-4o-mini", oi.Name())
	assert.Equal(t, ptrace.SpanKindClient, oi.Kind())
	got := oi.Attributes().AsRaw()
	for k, v := range openInferenceWant {
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

	ol, ok := spans[pcommon.SpanID{1, 2}]
	require.True(t, ok)
	assert.Equal(t, "chat claude-3-5-haiku", ol.Name())
	gotOL := ol.Attributes().AsRaw()
	assert.Equal(t, "anthropic", gotOL["gen_ai.provider.name"])
	assert.Equal(t, int64(9), gotOL["gen_ai.usage.input_tokens"])
	assert.Equal(t, []any{"stop"}, gotOL["gen_ai.response.finish_reasons"])
	assert.Contains(t, gotOL["gen_ai.output.messages"], `"finish_reason":"stop"`)
	assert.NotContains(t, gotOL, "gen_ai.prompt.0.content")

	plain, ok := spans[pcommon.SpanID{1, 3}]
	require.True(t, ok)
	assert.Equal(t, map[string]any{"http.request.method": "GET"}, plain.Attributes().AsRaw(), "a span with nothing to map passes unchanged")

	var records []plog.LogRecord
	sink.EachLogRecord(func(_ pcommon.Resource, lr plog.LogRecord) { records = append(records, lr) })
	logAttrs := records[0].Attributes().AsRaw()
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
