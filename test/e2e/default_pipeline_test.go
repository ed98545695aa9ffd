//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// serviceSpans returns the spans sink received from service and how many
// distinct span ids they carried, so duplicates and losses both show.
func serviceSpans(sink *OTLPSink, service string) (total, distinct int) {
	ids := map[pcommon.SpanID]bool{}
	sink.EachSpan(func(res pcommon.Resource, sp ptrace.Span) {
		name := ""
		if v, ok := res.Attributes().Get("service.name"); ok {
			name = v.AsString()
		}
		if name != service {
			return
		}
		total++
		ids[sp.SpanID()] = true
	})
	return total, len(ids)
}

// forwardOverlay adds an OTLP exporter to the default configuration's trace
// pipeline; the collector merges it over builtin:otlp.
func forwardOverlay(t *testing.T, sinkAddr string) string {
	return writeFile(t, "forward.yaml", fmt.Sprintf(`
exporters:
  otlp_grpc/sink:
    endpoint: %s
    tls:
      insecure: true
service:
  pipelines:
    traces:
      exporters: [debug, otlp_grpc/sink]
`, sinkAddr))
}

// TestDefaultConfigForwardsTraces starts the collector on the compiled-in
// default configuration, sends traces with the OpenTelemetry Go SDK over
// OTLP/gRPC, and counts them at an OTLP server run by the test: every span
// arrives exactly once. The collector's own metrics agree, its health check
// answers, and SIGTERM stops it cleanly.
func TestDefaultConfigForwardsTraces(t *testing.T) {
	sink, sinkAddr := StartOTLPSink(t)
	col := StartCollector(t, "--config", "builtin:otlp", "--config", "file:"+forwardOverlay(t, sinkAddr))
	col.WaitHealthy(t, 30*time.Second)

	const traces, spansPerTrace = 50, 20
	sendTraces(t, fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort), traces, spansPerTrace)
	const want = traces * spansPerTrace

	require.Eventually(t, func() bool {
		total, _ := serviceSpans(sink, e2eService)
		return total >= want
	}, 30*time.Second, 50*time.Millisecond, "the sink did not receive %d spans", want)
	// Give a duplicate a chance to show before counting exactly.
	time.Sleep(500 * time.Millisecond)
	total, distinct := serviceSpans(sink, e2eService)
	assert.Equal(t, want, total, "spans received by the sink")
	assert.Equal(t, want, distinct, "distinct span ids received by the sink")

	// The collector's self-metrics count the same spans in at the OTLP
	// receiver, and at least as many out of the exporter (other receivers of
	// the default pipeline may add their own).
	metrics := scrape(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort))
	assert.Equal(t, float64(want), sumSeries(t, metrics, "otelcol_receiver_accepted_spans", `receiver="otlp"`))
	assert.GreaterOrEqual(t, sumSeries(t, metrics, "otelcol_exporter_sent_spans", `exporter="otlp_grpc/sink"`), float64(want))
	assert.Zero(t, sumSeriesOrZero(metrics, "otelcol_exporter_send_failed_spans", `exporter="otlp_grpc/sink"`))

	require.NoError(t, col.Stop(t, 15*time.Second), "collector did not exit cleanly:\n%s", col.Output())
	assert.Contains(t, col.Output(), "Shutdown complete")
}

// TestHealthCheckAndShutdown checks the health endpoint's answer and that
// SIGTERM ends the process with status 0 within a bounded time.
func TestHealthCheckAndShutdown(t *testing.T) {
	col := StartCollector(t, "--config", "builtin:otlp")
	col.WaitHealthy(t, 30*time.Second)

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", col.HealthPort))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "Server available")

	start := time.Now()
	require.NoError(t, col.Stop(t, 15*time.Second), "collector did not exit cleanly:\n%s", col.Output())
	t.Logf("collector stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))

	// Once stopped, nothing listens on its ports any more.
	_, err = net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort), time.Second)
	assert.Error(t, err, "OTLP port still open after shutdown")
}

// e2eService is the service.name of the spans the tests send.
const e2eService = "e2e-client"

func sendTraces(t *testing.T, endpoint string, traces, spansPerTrace int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(256), sdktrace.WithMaxQueueSize(traces*spansPerTrace)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(e2eService))),
	)
	tracer := tp.Tracer("otelcol-llm/e2e")
	for i := 0; i < traces; i++ {
		rctx, root := tracer.Start(ctx, "POST /v1/chat/completions")
		for j := 1; j < spansPerTrace; j++ {
			_, child := tracer.Start(rctx, "chat gpt-test")
			child.End()
		}
		root.End()
	}
	require.NoError(t, tp.ForceFlush(ctx))
	require.NoError(t, tp.Shutdown(ctx))
}

func scrape(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// sumSeries adds the values of every sample of metric (with or without the
// _total suffix) whose labels contain every one of matches (none, or "",
// matches every sample); the metric must be there.
func sumSeries(t *testing.T, exposition, metric string, matches ...string) float64 {
	t.Helper()
	sum, found := sumSamples(exposition, metric, matches)
	require.True(t, found, "no sample of %s with %q in:\n%s", metric, matches, exposition)
	return sum
}

// sumSeriesOrZero is sumSeries for a metric that may not have been created
// yet (failure counters appear on the first failure).
func sumSeriesOrZero(exposition, metric string, matches ...string) float64 {
	sum, _ := sumSamples(exposition, metric, matches)
	return sum
}

func sumSamples(exposition, metric string, matches []string) (float64, bool) {
	// The collector prints its own counters without _total and, when they have
	// no attributes, without braces; exporters add both.
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `(?:_total)?(?:\{([^}]*)\})? ([0-9.eE+-]+)$`)
	var sum float64
	found := false
samples:
	for _, m := range re.FindAllStringSubmatch(exposition, -1) {
		for _, want := range matches {
			if !strings.Contains(m[1], want) {
				continue samples
			}
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}
