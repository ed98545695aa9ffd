//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// sendRecordedGenAISpans sends the llm_metrics connector's recorded GenAI
// spans (client spans of an OpenAI-instrumented gateway and vLLM server spans)
// over OTLP/gRPC.
func sendRecordedGenAISpans(t *testing.T, endpoint string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "connectors", "llmmetricsconnector", "testdata", "genai_spans.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	require.NoError(t, err)
}

// runGenAIMetrics starts builtin:genai-metrics with the given convention
// target, sends the recorded spans and returns the Prometheus exposition once
// the connector has flushed, with the collector's own-metrics endpoint.
func runGenAIMetrics(t *testing.T, target string) (body, selfURL string, col *Collector) {
	t.Helper()
	t.Setenv("OTELCOL_LLM_METRICS_FLUSH_INTERVAL", "200ms")
	t.Setenv("OTELCOL_LLM_SEMCONV_TARGET", target)
	col = StartCollector(t, "--config", "builtin:genai-metrics")
	col.WaitHealthy(t, 30*time.Second)

	sendRecordedGenAISpans(t, fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort))

	promURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", col.PromPort)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		body = scrape(t, promURL)
		if strings.Contains(body, "gen_ai_server_time_to_first_token_seconds_count") &&
			strings.Contains(body, "llm_evaluations_total") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return body, fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort), col
}

// TestLLMMetricsPrometheus runs builtin:genai-metrics (otlp → llm_metrics →
// prometheus), sends recorded GenAI spans and reads the series back as a
// Prometheus server would scrape them.
func TestLLMMetricsPrometheus(t *testing.T) {
	body, selfURL, col := runGenAIMetrics(t, "v1.41")

	// Series names as Prometheus users see them.
	for _, name := range []string{
		"gen_ai_client_operation_duration_seconds_bucket",
		"gen_ai_client_operation_time_to_first_chunk_seconds_bucket",
		"gen_ai_client_operation_time_per_output_chunk_seconds_bucket",
		"gen_ai_client_token_usage_bucket",
		"gen_ai_server_request_duration_seconds_bucket",
		"gen_ai_server_time_to_first_token_seconds_bucket",
		"gen_ai_server_time_per_output_token_seconds_bucket",
		"llm_requests_total",
		"llm_output_tokens_total",
		"llm_goodput_requests_total",
		"llm_slo_violations_total",
		"llm_requests_concurrency",
		"llm_evaluations_total",
	} {
		assert.Contains(t, body, "\n"+name+"{", name)
	}
	// The advised duration boundaries.
	assert.Contains(t, body, `le="81.92"`)
	assert.Contains(t, body, `le="0.01"`)

	gpt := `gen_ai_response_model="gpt-4o-mini-2024-07-18"`
	// Four client spans share the gpt-4o-mini series: two streaming
	// successes, one empty response and one with unusable token values.
	assert.Equal(t, 4.0, sumSeries(t, body, "gen_ai_client_operation_duration_seconds_count", gpt))
	assert.InDelta(t, 1.2+3+0.4+0.5, sumSeries(t, body, "gen_ai_client_operation_duration_seconds_sum", gpt), 1e-9)
	assert.Equal(t, 2.0, sumSeries(t, body, "gen_ai_client_operation_time_to_first_chunk_seconds_count", gpt))
	// Spans with a duration at or below 1.28 s: 1.2, 0.4 and 0.5.
	assert.Equal(t, 3.0, sumSeries(t, body, "gen_ai_client_operation_duration_seconds_bucket", gpt, `le="1.28"`))
	assert.Equal(t, 120.0+900+64, sumSeries(t, body, "gen_ai_client_token_usage_sum", `gen_ai_token_type="input"`, gpt))
	assert.Equal(t, 48.0+201+0, sumSeries(t, body, "gen_ai_client_token_usage_sum", `gen_ai_token_type="output"`, gpt))

	// Golden signals.
	assert.Equal(t, 3.0, sumSeries(t, body, "llm_requests_total", `outcome="success"`, gpt))
	// All successes: those 3, embeddings, the Azure chat and 2 vLLM server requests.
	assert.Equal(t, 7.0, sumSeries(t, body, "llm_requests_total", `outcome="success"`))
	assert.Equal(t, 1.0, sumSeries(t, body, "llm_requests_total", `outcome="empty"`))
	assert.Equal(t, 1.0, sumSeries(t, body, "llm_requests_total", `error_type="rate_limit_exceeded"`))
	assert.Equal(t, 249.0, sumSeries(t, body, "llm_output_tokens_total", gpt))
	assert.Equal(t, 3.0, sumSeries(t, body, "llm_goodput_requests_total", gpt))
	assert.Equal(t, 1.0, sumSeries(t, body, "llm_evaluations_total", `below_threshold="true"`, `gen_ai_evaluation_name="relevance"`))
	assert.Equal(t, 2.0, sumSeries(t, body, "gen_ai_server_time_to_first_token_seconds_count", `gen_ai_provider_name="vllm"`))
	// Deprecated gen_ai.system values are mapped to gen_ai.provider.name.
	assert.Equal(t, 1.0, sumSeries(t, body, "gen_ai_client_operation_duration_seconds_count", `gen_ai_provider_name="azure.ai.openai"`))
	// Configured resource attributes become labels; others are dropped.
	assert.Contains(t, body, `deployment_environment_name="loadtest"`)
	assert.NotContains(t, body, `host_name="gw-0"`)

	// The connector's own telemetry counts what it did not turn into metrics.
	self := scrape(t, selfURL)
	assert.Equal(t, 1.0, sumSeries(t, self, "otelcol_llm_metrics_spans", `outcome="not_genai"`))
	assert.Equal(t, 1.0, sumSeries(t, self, "otelcol_llm_metrics_spans", `outcome="invalid"`))
	assert.Equal(t, 9.0, sumSeries(t, self, "otelcol_llm_metrics_spans", `outcome="recorded"`))

	require.NoError(t, col.Stop(t, 15*time.Second))
}

// TestLLMMetricsPrometheusLatest checks the semantic-conventions-genai main
// names (target: latest) as Prometheus shows them.
func TestLLMMetricsPrometheusLatest(t *testing.T) {
	body, _, col := runGenAIMetrics(t, "latest")
	for _, name := range []string{
		"gen_ai_client_inference_duration_seconds_bucket",
		"gen_ai_client_inference_time_to_first_chunk_seconds_bucket",
		"gen_ai_client_inference_operation_input_tokens_bucket",
		"gen_ai_client_inference_operation_output_tokens_bucket",
		"gen_ai_client_inference_usage_input_tokens_total",
		"gen_ai_client_embeddings_duration_seconds_bucket",
		"gen_ai_server_request_duration_seconds_bucket",
	} {
		assert.Contains(t, body, "\n"+name+"{", name)
	}
	assert.NotContains(t, body, "gen_ai_client_token_usage")
	gpt := `gen_ai_response_model="gpt-4o-mini-2024-07-18"`
	assert.Equal(t, 4.0, sumSeries(t, body, "gen_ai_client_inference_duration_seconds_count", gpt))
	assert.Equal(t, 120.0+900+64, sumSeries(t, body, "gen_ai_client_inference_usage_input_tokens_total", gpt, `gen_ai_token_modality="unknown"`))
	assert.Equal(t, 512.0, sumSeries(t, body, "gen_ai_client_inference_usage_cache_read_input_tokens_total", gpt))
	assert.Equal(t, 1.0, sumSeries(t, body, "gen_ai_client_embeddings_duration_seconds_count", `gen_ai_request_model="text-embedding-3-small"`))
	require.NoError(t, col.Stop(t, 15*time.Second))
}
