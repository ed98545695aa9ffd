//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// loadgenSnapshot counts what sink received: spans, distinct spans (by
// trace and span id, so duplicates show), root spans, data points and log
// records.
func loadgenSnapshot(sink *OTLPSink) (spans, distinct, roots, points, records int) {
	ids := map[string]bool{}
	sink.EachSpan(func(_ pcommon.Resource, sp ptrace.Span) {
		ids[sp.TraceID().String()+sp.SpanID().String()] = true
		spans++
		if sp.ParentSpanID().IsEmpty() {
			roots++
		}
	})
	return spans, len(ids), roots, sink.DataPointCount(), sink.LogRecordCount()
}

// fastModels overrides the models of builtin:synthetic-load with short
// latencies and outputs.
const fastModels = `
receivers:
  llm_loadgen:
    models:
      - name: fast-chat
        provider: openai
        weight: 1
        context_window: 128000
        ttft: {type: constant, value: 0.02}
        itl: {type: constant, value: 0.001}
        input_tokens: {p50: 200, p99: 2000}
        output_tokens: {type: uniform, min: 5, max: 50}
      - name: fast-embed
        provider: openai
        weight: 1
        context_window: 8191
        embedding: true
        embedding_dimensions: 256
        ttft: {type: constant, value: 0.01}
        input_tokens: {p50: 50, p99: 500}
    agent:
      tool_latency: {type: constant, value: 0.01}
    faults:
      - {type: rate_limit, probability: 0.02, retry_after: 100ms, max_retries: 2}
      - {type: overloaded, probability: 0.01}
      - {type: mid_stream, probability: 0.01}
`

// TestLLMLoadgenSyntheticBoundedRun runs builtin:synthetic-load for a bounded
// number of requests, exported over OTLP to a sink run by the test: the sink
// receives exactly the spans, data points and log records the receiver's own
// metrics say it emitted, each span once, one root span per request, and
// the collector keeps running after the generator stopped.
func TestLLMLoadgenSyntheticBoundedRun(t *testing.T) {
	for _, timing := range []string{"as_fast_as_possible", "realtime"} {
		t.Run(timing, func(t *testing.T) {
			const requests = 300
			sink, addr := StartOTLPSink(t)
			t.Setenv("OTELCOL_LLM_OTLP_ENDPOINT", addr)
			t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", fmt.Sprint(requests))
			t.Setenv("OTELCOL_LLM_LOADGEN_TIMING", timing)
			t.Setenv("OTELCOL_LLM_LOADGEN_RATE", "200")
			args := []string{"--config", "builtin:synthetic-load"}
			if timing == "realtime" {
				// Short simulated latencies, so that the realtime run ends in seconds.
				args = append(args, "--config", "file:"+writeFile(t, "fast.yaml", fastModels))
			}
			col := StartCollector(t, args...)
			col.WaitHealthy(t, 30*time.Second)

			// Realtime requests end when their simulated latency has passed
			// (agent runs take several seconds, a 429 waits for Retry-After).
			require.Eventually(t, func() bool {
				return strings.Contains(col.Output(), "llm_loadgen finished")
			}, 60*time.Second, 100*time.Millisecond, "the generator did not finish:\n%s", col.Output())

			selfURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort)
			var emittedSpans, emittedPoints, emittedRecords float64
			require.Eventually(t, func() bool {
				m := scrape(t, selfURL)
				emittedSpans = sumSeriesOrZero(m, "otelcol_llm_loadgen_emitted", `signal="traces"`)
				emittedPoints = sumSeriesOrZero(m, "otelcol_llm_loadgen_emitted", `signal="metrics"`)
				emittedRecords = sumSeriesOrZero(m, "otelcol_llm_loadgen_emitted", `signal="logs"`)
				return emittedSpans > 0 && float64(sink.SpanCount()) == emittedSpans &&
					float64(sink.DataPointCount()) == emittedPoints && float64(sink.LogRecordCount()) == emittedRecords
			}, 30*time.Second, 100*time.Millisecond, "sink and self-metrics disagree")

			// Nothing more arrives: the run is over but the collector is up.
			time.Sleep(time.Second)
			spans, distinct, roots, points, records := loadgenSnapshot(sink)
			assert.Equal(t, emittedSpans, float64(spans), "spans at the sink vs otelcol_llm_loadgen_emitted{signal=traces}")
			assert.Equal(t, spans, distinct, "every span arrives once")
			assert.Equal(t, requests, roots, "one root span per request")
			assert.Greater(t, spans, 2*requests)
			assert.Equal(t, emittedPoints, float64(points))
			assert.Greater(t, points, 0)
			assert.Equal(t, emittedRecords, float64(records))
			assert.Greater(t, records, 0)

			m := scrape(t, selfURL)
			assert.Equal(t, float64(requests), sumSeries(t, m, "otelcol_llm_loadgen_requests", ""))
			assert.Zero(t, sumSeriesOrZero(m, "otelcol_llm_loadgen_dropped", ""))
			assert.Equal(t, emittedSpans, sumSeries(t, m, "otelcol_receiver_accepted_spans", `receiver="llm_loadgen"`))
			assert.False(t, col.Exited())

			require.NoError(t, col.Stop(t, 15*time.Second), "collector did not exit cleanly:\n%s", col.Output())
		})
	}
}
