//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// loadgenSink is an OTLP/gRPC server for traces, metrics and logs that counts
// spans (by span id, so duplicates show), root spans, data points and log
// records.
type loadgenSink struct {
	ptraceotlp.UnimplementedGRPCServer
	mu      sync.Mutex
	spanIDs map[string]int
	spans   int
	roots   int
	names   map[string]int
	points  int
	records int
}

type loadgenMetricSink struct {
	pmetricotlp.UnimplementedGRPCServer
	s *loadgenSink
}

type loadgenLogSink struct {
	plogotlp.UnimplementedGRPCServer
	s *loadgenSink
}

func (s *loadgenSink) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rss := req.Traces().ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				s.spanIDs[sp.TraceID().String()+sp.SpanID().String()]++
				s.spans++
				s.names[sp.Name()]++
				if sp.ParentSpanID().IsEmpty() {
					s.roots++
				}
			}
		}
	}
	return ptraceotlp.NewExportResponse(), nil
}

func (m *loadgenMetricSink) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	m.s.points += req.Metrics().DataPointCount()
	return pmetricotlp.NewExportResponse(), nil
}

func (l *loadgenLogSink) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.records += req.Logs().LogRecordCount()
	return plogotlp.NewExportResponse(), nil
}

func (s *loadgenSink) snapshot() (spans, distinct, roots, points, records int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spans, len(s.spanIDs), s.roots, s.points, s.records
}

func startLoadgenSink(t *testing.T) (*loadgenSink, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	sink := &loadgenSink{spanIDs: map[string]int{}, names: map[string]int{}}
	ptraceotlp.RegisterGRPCServer(srv, sink)
	pmetricotlp.RegisterGRPCServer(srv, &loadgenMetricSink{s: sink})
	plogotlp.RegisterGRPCServer(srv, &loadgenLogSink{s: sink})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return sink, l.Addr().String()
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
			sink, addr := startLoadgenSink(t)
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
				spans, _, _, points, records := sink.snapshot()
				return emittedSpans > 0 && float64(spans) == emittedSpans &&
					float64(points) == emittedPoints && float64(records) == emittedRecords
			}, 30*time.Second, 100*time.Millisecond, "sink and self-metrics disagree")

			// Nothing more arrives: the run is over but the collector is up.
			time.Sleep(time.Second)
			spans, distinct, roots, points, records := sink.snapshot()
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
