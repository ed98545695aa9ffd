//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// lateExporter is a span exporter whose target is known only once the
// collector it exports to has started (on ports the harness picks): until
// then an export waits for it.
type lateExporter struct {
	mu    sync.Mutex
	inner sdktrace.SpanExporter
	ready chan struct{}
}

func newLateExporter() *lateExporter { return &lateExporter{ready: make(chan struct{})} }

func (l *lateExporter) set(e sdktrace.SpanExporter) {
	l.mu.Lock()
	l.inner = e
	l.mu.Unlock()
	close(l.ready)
}

func (l *lateExporter) get(ctx context.Context) (sdktrace.SpanExporter, error) {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner, nil
}

func (l *lateExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e, err := l.get(ctx)
	if err != nil {
		return err
	}
	return e.ExportSpans(ctx, spans)
}

func (l *lateExporter) Shutdown(ctx context.Context) error {
	select {
	case <-l.ready:
		return l.inner.Shutdown(ctx)
	default:
		return errors.New("never started")
	}
}

// runServerSideLoadTest runs builtin:loadtest-live against a mockllm that
// exports its request spans to the collector and serves vLLM's /metrics,
// with the KV cache given, and returns the final report.
func runServerSideLoadTest(t *testing.T, kvTokens, requests int) (*loadreportexporter.Report, mockllm.Stats) {
	t.Helper()
	late := newLateExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(late, sdktrace.WithBatchTimeout(200*time.Millisecond)))
	mcfg := mockllm.DefaultConfig()
	mcfg.TTFT, mcfg.ITL, mcfg.PrefillPerToken, mcfg.OutputTokens, mcfg.OutputJitter = 40*time.Millisecond, 4*time.Millisecond, 20*time.Microsecond, 200, 0.2
	mcfg.MaxRunning, mcfg.KVCacheTokens, mcfg.Seed = 256, kvTokens, 11
	mock, err := mockllm.New(mcfg, mockllm.WithTracerProvider(tp))
	require.NoError(t, err)
	require.NoError(t, mock.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = mock.Close() })

	dir := t.TempDir()
	host := strings.TrimPrefix(mock.URL(), "http://")
	t.Setenv("OTELCOL_LLM_TARGET_URL", mock.URL()+"/v1")
	t.Setenv("OTELCOL_LLM_TARGET_METRICS", host)
	t.Setenv("OTELCOL_LLM_TARGET_SCRAPE_INTERVAL", "1s")
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", strconv.Itoa(requests))
	t.Setenv("OTELCOL_LLM_LOADGEN_RATE", "40")
	t.Setenv("OTELCOL_LLM_REPORT_DIR", dir)
	t.Setenv("OTELCOL_LLM_REPORT_EXIT_ON", "none")
	col := StartCollector(t, "--config", "builtin:loadtest-live")
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithEndpoint("127.0.0.1:"+strconv.Itoa(col.OTLPGRPCPort)))
	require.NoError(t, err)
	late.set(exp)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
	})
	assert.Equal(t, 0, waitExit(t, col, 240*time.Second))

	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	var r loadreportexporter.Report
	require.NoError(t, json.Unmarshal(raw, &r))
	require.True(t, r.Final)
	assert.Equal(t, int64(requests), r.Total.Requests)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Where did the time go?")
	assert.Contains(t, string(md), "## The server during the run (vllm)")
	st := mock.Stats()
	t.Logf("mock: %+v", st)
	return &r, st
}

func saturationKinds(r *loadreportexporter.Report) map[string]string {
	out := map[string]string{}
	for _, w := range r.Saturation {
		out[w.Kind] = w.Message
	}
	return out
}

// checkJoinAndServer checks what both runs must show: nearly every request
// joined with the mock's span and decomposed, and the mock's /metrics read
// under vLLM's names with the run's own counts.
func checkJoinAndServer(t *testing.T, r *loadreportexporter.Report, requests int) {
	t.Helper()
	sv := r.ServerSide
	require.NotNil(t, sv, "the server spans reached the report")
	assert.GreaterOrEqual(t, float64(sv.Joined), 0.99*float64(requests), "joined %d of %d; unjoined client %v, server %v", sv.Joined, requests, sv.UnjoinedClient, sv.UnjoinedServer)
	assert.GreaterOrEqual(t, sv.Decomposed, sv.Joined-sv.WithoutTTFT)
	require.NotEmpty(t, sv.TTFT)
	// Client TTFT − server TTFT, less the client's queue and connection
	// setup, is the loopback and the two processes' reading and writing.
	for _, p := range sv.Parts {
		if p.Part == "network" {
			t.Logf("network part: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms", p.P50*1e3, p.P95*1e3, p.P99*1e3)
			assert.Less(t, p.P50, 0.005, "client and server TTFT differ by the loopback's few milliseconds")
		}
	}
	sm := r.Server
	require.NotNil(t, sm, "the scrape of the mock's /metrics reached the report")
	assert.Equal(t, "vllm", sm.Server)
	assert.Equal(t, "vllm:kv_cache_usage_perc", sm.Names["kv_cache_usage"])
	require.NotEmpty(t, sm.Histograms)
	assert.Positive(t, sm.Counters["generation_tokens"])
	require.NotNil(t, sm.FirstScrapeS, "the report says from when the counters count")
}

// TestLoadTestServerSideBelowCapacity: a KV cache far larger than the load
// needs; every request joined, the server's view present, no warning. The
// run lasts 10 s: the prometheus receiver's first scrape, the counters'
// baseline, comes some 5 s after the collector starts (target discovery),
// and the histograms need requests that end after it.
func TestLoadTestServerSideBelowCapacity(t *testing.T) {
	r, _ := runServerSideLoadTest(t, 1<<20, 400)
	checkJoinAndServer(t, r, 400)
	assert.Empty(t, r.Saturation, "no saturation below capacity: %v", saturationKinds(r))
	assert.Zero(t, r.Server.Counters["preemptions"])
}

// TestLoadTestServerSideAboveCapacity: 40 req/s of ~1 s requests need about
// 40 × 700 KV tokens; a cache of 16,384 holds about 25 of them. For the 15 s
// of arrivals and the drain after, the KV cache is full, the scheduler
// preempts and the queue grows: the report warns of each, and the time goes
// to the server's queue.
func TestLoadTestServerSideAboveCapacity(t *testing.T) {
	r, st := runServerSideLoadTest(t, 16384, 600)
	checkJoinAndServer(t, r, 600)
	kinds := saturationKinds(r)
	if !assert.Contains(t, kinds, "kv_cache_full") {
		for _, p := range r.Server.Timeline {
			if p.KVCacheUsage != nil && p.Waiting != nil {
				t.Logf("%6.2f s: KV %.3f, waiting %.0f", p.OffsetS, *p.KVCacheUsage, *p.Waiting)
			}
		}
	}
	assert.Contains(t, kinds, "preemptions")
	assert.Positive(t, r.Server.Counters["preemptions"])
	assert.LessOrEqual(t, r.Server.Counters["preemptions"], float64(st.Preemptions), "the mock's own count includes what it did before the first scrape")
	var p95 *loadreportexporter.Stack
	for i := range r.ServerSide.TTFT {
		if r.ServerSide.TTFT[i].Percentile == 95 {
			p95 = &r.ServerSide.TTFT[i]
		}
	}
	require.NotNil(t, p95)
	t.Logf("joined %d of %d; TTFT p95 %.3f s: %+v; warnings %v", r.ServerSide.Joined, r.ServerSide.ClientSpans, p95.TotalS, p95.Parts, kinds)
	assert.Equal(t, "server_queue", p95.Dominant, "at TTFT p95 the time is the server's queue: %+v", p95.Parts)
}
