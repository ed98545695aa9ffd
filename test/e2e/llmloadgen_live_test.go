//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// liveSpan is what the test keeps of one client span.
type liveSpan struct {
	name, traceID, spanID, requestID, errorType string
	ttft                                        float64
	hasTTFT                                     bool
}

// liveSnapshot returns the client spans sink received, in arrival order,
// and the names of the metrics it received.
func liveSnapshot(sink *OTLPSink) ([]liveSpan, map[string]bool) {
	var spans []liveSpan
	sink.EachSpan(func(_ pcommon.Resource, sp ptrace.Span) {
		a := sp.Attributes()
		ls := liveSpan{name: sp.Name(), traceID: sp.TraceID().String(), spanID: sp.SpanID().String()}
		if v, ok := a.Get("llm_loadgen.request_id"); ok {
			ls.requestID = v.Str()
		}
		if v, ok := a.Get("error.type"); ok {
			ls.errorType = v.Str()
		}
		if v, ok := a.Get("gen_ai.response.time_to_first_chunk"); ok {
			ls.ttft, ls.hasTTFT = v.Double(), true
		}
		spans = append(spans, ls)
	})
	metrics := map[string]bool{}
	sink.EachMetric(func(_ pcommon.Resource, m pmetric.Metric) { metrics[m.Name()] = true })
	return spans, metrics
}

// TestLLMLoadgenLiveAgainstMockLLM runs the built collector on
// builtin:loadtest-mock against a mockllm the test starts on loopback: a
// bounded run of streaming requests arrives at an OTLP sink as one CLIENT
// span per request with its TTFT, the TTFT is at least the mock's own, the
// mock received each span's traceparent, and the GenAI client metrics arrive.
func TestLLMLoadgenLiveAgainstMockLLM(t *testing.T) {
	mcfg := mockllm.DefaultConfig()
	mcfg.TTFT, mcfg.ITL, mcfg.OutputTokens, mcfg.Seed = 30*time.Millisecond, 5*time.Millisecond, 20, 3
	mock, err := mockllm.New(mcfg)
	require.NoError(t, err)
	require.NoError(t, mock.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = mock.Close() })

	sink, sinkAddr := StartOTLPSink(t)

	const requests = 40
	t.Setenv("OTELCOL_LLM_TARGET_URL", mock.URL()+"/v1")
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", fmt.Sprint(requests))
	t.Setenv("OTELCOL_LLM_LOADGEN_RATE", "40")
	t.Setenv("OTELCOL_LLM_OTLP_ENDPOINT", sinkAddr)
	t.Setenv("OTELCOL_LLM_API_KEY", "sk-e2e-secret-never-logged")
	col := StartCollector(t, "--config", "builtin:loadtest-mock")
	col.WaitHealthy(t, 30*time.Second)

	require.Eventually(t, func() bool {
		spans, metrics := liveSnapshot(sink)
		return len(spans) >= requests && metrics["gen_ai.client.operation.time_to_first_chunk"]
	}, 60*time.Second, 100*time.Millisecond, "collector output:\n%s", col.Output())
	require.NoError(t, col.Stop(t, 20*time.Second))

	spans, metrics := liveSnapshot(sink)
	require.Len(t, spans, requests)
	for _, sp := range spans {
		assert.Equal(t, "chat mock-llm", sp.name)
		assert.Empty(t, sp.errorType)
		require.True(t, sp.hasTTFT, "span %s has no TTFT", sp.spanID)
		require.NotEmpty(t, sp.requestID)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rec, ok := mock.Record(ctx, sp.requestID)
		cancel()
		require.True(t, ok)
		assert.Equal(t, "00-"+sp.traceID+"-"+sp.spanID+"-01", rec.Traceparent)
		assert.GreaterOrEqual(t, sp.ttft, rec.TTFT().Seconds()-0.001, "client TTFT below the server's")
		assert.Less(t, sp.ttft, rec.TTFT().Seconds()+2, "client TTFT far above the server's")
	}
	for _, m := range []string{"gen_ai.client.operation.duration", "gen_ai.client.operation.time_to_first_chunk",
		"gen_ai.client.operation.time_per_output_chunk", "gen_ai.client.token.usage", "llm_loadgen.client.requests"} {
		assert.True(t, metrics[m], "metric %s missing", m)
	}
	assert.NotContains(t, col.Output(), "sk-e2e-secret-never-logged")
	assert.True(t, strings.Contains(col.Output(), "llm_loadgen live run finished"), col.Output())
}
