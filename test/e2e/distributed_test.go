//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// The shard configuration the Helm chart's loadtest mode runs in every pod of
// its Indexed Job.
const shardConfig = "deploy/helm/otelcol-llm/files/loadtest.yaml"

// distReport is what these tests read from a run's report.json.
type distReport struct {
	RunID   string `json:"run_id"`
	Verdict string `json:"verdict"`
	Final   bool   `json:"final"`
	Total   struct {
		Requests  int64       `json:"requests"`
		Successes int64       `json:"successes"`
		TTFT      *latencyDoc `json:"ttft"`
		E2E       *latencyDoc `json:"e2e"`
	} `json:"total"`
	Accuracy struct {
		RelativeAccuracy float64 `json:"relative_accuracy"`
	} `json:"accuracy"`
	Shards *struct {
		Expected    int     `json:"expected"`
		Seen        int     `json:"seen"`
		Missing     []int   `json:"missing"`
		AchievedRPS float64 `json:"achieved_rps"`
		Requests    int64   `json:"requests"`
		Shards      []struct {
			Index    int      `json:"index"`
			Requests int64    `json:"requests"`
			Status   string   `json:"status"`
			LagP99   *float64 `json:"schedule_lag_p99_s"`
			Skipped  int64    `json:"skipped"`
		} `json:"shards"`
		Warnings []string `json:"warnings"`
	} `json:"shards"`
}

type latencyDoc struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

func readRunReport(t *testing.T, dir, runID string) distReport {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "run-"+runID, "report.json"))
	require.NoError(t, err)
	var r distReport
	require.NoError(t, json.Unmarshal(raw, &r))
	md, err := os.ReadFile(filepath.Join(dir, "run-"+runID, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Shards of run "+runID)
	return r
}

// startShards starts count collectors on the chart's shard configuration, as
// the Indexed Job's pods would run it: same run id, shard count and start
// time, JOB_COMPLETION_INDEX 0..count-1.
func startShards(t *testing.T, runID string, count int, startAt time.Time) []*Collector {
	t.Helper()
	t.Setenv("OTELCOL_LLM_RUN_ID", runID)
	t.Setenv("OTELCOL_LLM_SHARD_COUNT", strconv.Itoa(count))
	t.Setenv("OTELCOL_LLM_START_AT", startAt.UTC().Format(time.RFC3339Nano))
	var shards []*Collector
	for i := 0; i < count; i++ {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
		t.Setenv("OTELCOL_LLM_REPORT_DIR", t.TempDir())
		shards = append(shards, StartCollector(t, "--config", "file:"+shardConfig))
	}
	for _, c := range shards {
		c.WaitHealthy(t, 30*time.Second)
	}
	require.True(t, time.Now().Before(startAt), "the shards must be up before start_at; raise the margin on this machine")
	return shards
}

// exactQuantile is the sample of rank ⌊q·(n−1)⌋ of the sorted values: the
// value load_report's percentiles approximate within ±relative_accuracy.
func exactQuantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// runSamples returns the sorted TTFT and E2E (span duration) of the
// successful spans of a run that the gateway forwarded to sink.
func runSamples(sink *OTLPSink, runID string) (ttft, e2e []float64) {
	sink.EachSpan(func(res pcommon.Resource, sp ptrace.Span) {
		if id, ok := res.Attributes().Get("llm_loadgen.run.id"); !ok || id.AsString() != runID {
			return
		}
		if _, failed := sp.Attributes().Get("error.type"); failed {
			return
		}
		if v, ok := sp.Attributes().Get("gen_ai.response.time_to_first_chunk"); ok {
			ttft = append(ttft, v.Double())
		}
		e2e = append(e2e, float64(sp.EndTimestamp()-sp.StartTimestamp())/1e9)
	})
	sort.Float64s(ttft)
	sort.Float64s(e2e)
	return ttft, e2e
}

// TestDistributedLoadTest: a gateway with load_report and N=3 shard
// collectors, as the chart's Indexed Job runs them, against mockllm on
// loopback. The merged report's rate equals the target within ±1 %; its
// TTFT and E2E percentiles are those of the union of the shards' requests
// within the sketch's accuracy, and match a single process offering the same
// total load at the same time (same machine, same endpoint, same gateway);
// a shard stopped early shows up in the report of its run.
func TestDistributedLoadTest(t *testing.T) {
	began := time.Now()
	// A deterministic endpoint (no jitter, no prefill cost), so that two runs
	// differ only by what the clients measure.
	mcfg := mockllm.DefaultConfig()
	mcfg.TTFT, mcfg.ITL, mcfg.Jitter, mcfg.OutputTokens, mcfg.OutputJitter = 300*time.Millisecond, 20*time.Millisecond, 0, 10, 0
	mcfg.PrefillPerToken, mcfg.Seed = 0, 11
	mock, err := mockllm.New(mcfg)
	require.NoError(t, err)
	require.NoError(t, mock.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = mock.Close() })
	sink, sinkAddr := StartOTLPSink(t)

	dir := t.TempDir()
	gwCfg := writeFile(t, "gateway.yaml", fmt.Sprintf(`
extensions:
  health_check:
    endpoint: 127.0.0.1:${env:OTELCOL_LLM_HEALTH_PORT}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${env:OTELCOL_LLM_OTLP_GRPC_PORT}
exporters:
  load_report:
    directory: %s
    interval: 2s
    title: distributed load test
  otlp_grpc/sink:
    endpoint: %s
    tls: {insecure: true}
service:
  extensions: [health_check]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:OTELCOL_LLM_METRICS_PORT}
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [load_report, otlp_grpc/sink]
    metrics:
      receivers: [otlp]
      exporters: [load_report]
`, dir, sinkAddr))
	gw := StartCollector(t, "--config", "file:"+gwCfg)
	gw.WaitHealthy(t, 30*time.Second)

	const rate, requests, shards = 45.0, 450, 3
	t.Setenv("OTELCOL_LLM_GATEWAY_ENDPOINT", fmt.Sprintf("127.0.0.1:%d", gw.OTLPGRPCPort))
	t.Setenv("OTELCOL_LLM_TARGET_URL", mock.URL()+"/v1")
	t.Setenv("OTELCOL_LLM_LOADGEN_ARRIVAL", "constant")
	t.Setenv("OTELCOL_LLM_LOADGEN_RATE", fmt.Sprint(rate))
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", strconv.Itoa(requests))
	t.Setenv("OTELCOL_LLM_LOADGEN_DURATION", "0s")
	t.Setenv("OTELCOL_LLM_LOADTEST_STOP_WHEN_IDLE", "2s")

	// 1. Three shards of one run, and one process with the same total load,
	// side by side from the same start time.
	startAt := time.Now().Add(8 * time.Second)
	var procs []*Collector
	procs = append(procs, startShards(t, "e2e-dist", shards, startAt)...)
	procs = append(procs, startShards(t, "e2e-single", 1, startAt)...)
	for _, c := range procs {
		assert.Equal(t, 0, waitExit(t, c, 60*time.Second), "a shard ends by itself when its requests are over")
	}
	// 2. Three shards for 8 s; shard 1 is stopped 3 s into the run.
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", "0")
	t.Setenv("OTELCOL_LLM_LOADGEN_DURATION", "8s")
	startAt = time.Now().Add(6 * time.Second)
	stopped := startShards(t, "e2e-stop", shards, startAt)
	time.Sleep(time.Until(startAt.Add(3 * time.Second)))
	require.NoError(t, stopped[1].Stop(t, 30*time.Second))
	for _, i := range []int{0, 2} {
		assert.Equal(t, 0, waitExit(t, stopped[i], 60*time.Second))
	}
	require.NoError(t, gw.Stop(t, 30*time.Second))

	dist := readRunReport(t, dir, "e2e-dist")
	single := readRunReport(t, dir, "e2e-single")
	stop := readRunReport(t, dir, "e2e-stop")

	// The merged run: every request, from every shard, at the target rate.
	assert.True(t, dist.Final)
	assert.Equal(t, "e2e-dist", dist.RunID)
	assert.EqualValues(t, requests, dist.Total.Requests)
	assert.EqualValues(t, requests, dist.Total.Successes)
	require.NotNil(t, dist.Shards)
	assert.Equal(t, shards, dist.Shards.Expected)
	assert.Equal(t, shards, dist.Shards.Seen)
	assert.Empty(t, dist.Shards.Missing)
	for _, s := range dist.Shards.Shards {
		assert.EqualValues(t, requests/shards, s.Requests, "shard %d", s.Index)
		assert.Zero(t, s.Skipped, "shard %d", s.Index)
	}
	assert.InDelta(t, rate, dist.Shards.AchievedRPS, rate*0.01, "merged achieved rate within ±1 %% of the target")

	// Merged percentiles are those of the union of the shards' requests,
	// within the sketch's relative accuracy a (values rounded to 6 digits).
	a := dist.Accuracy.RelativeAccuracy
	require.Positive(t, a)
	require.NotNil(t, dist.Total.TTFT)
	require.NotNil(t, dist.Total.E2E)
	ttft, e2e := runSamples(sink, "e2e-dist")
	require.Len(t, ttft, requests, "the sink got every span of the run")
	for _, c := range []struct {
		name    string
		samples []float64
		l       *latencyDoc
	}{{"TTFT", ttft, dist.Total.TTFT}, {"E2E", e2e, dist.Total.E2E}} {
		for _, q := range []struct {
			q   float64
			got float64
		}{{0.5, c.l.P50}, {0.9, c.l.P90}, {0.95, c.l.P95}, {0.99, c.l.P99}} {
			exact := exactQuantile(c.samples, q.q)
			assert.InDelta(t, exact, q.got, a*exact+1e-5, "%s p%v of the merged report vs the exact quantile of every shard's requests", c.name, q.q*100)
		}
	}

	// The single process, on rate and not saturated, measured the same
	// latencies: each report is within ±a of its exact values, so the two
	// agree within 2a when the machine adds no noise of its own. On a busy
	// machine the client-side wait for a CPU shows in both, unequally; the
	// report's schedule lag says how busy it was.
	require.NotNil(t, single.Shards)
	assert.EqualValues(t, requests, single.Total.Successes)
	assert.InDelta(t, rate, single.Shards.AchievedRPS, rate*0.01)
	require.Len(t, single.Shards.Shards, 1)
	require.NotNil(t, single.Shards.Shards[0].LagP99)
	singleLag := *single.Shards.Shards[0].LagP99
	assert.Zero(t, single.Shards.Shards[0].Skipped)
	require.NotNil(t, single.Total.TTFT)
	require.NotNil(t, single.Total.E2E)
	tol, why := 2*a, "2× the sketch accuracy"
	if singleLag > 0.01 {
		tol, why = 0.15, "machine busy (schedule lag p99 above 10 ms): 15 %"
	}
	for _, q := range []struct {
		name     string
		got, ref float64
	}{
		{"TTFT p50", dist.Total.TTFT.P50, single.Total.TTFT.P50},
		{"TTFT p90", dist.Total.TTFT.P90, single.Total.TTFT.P90},
		{"E2E p50", dist.Total.E2E.P50, single.Total.E2E.P50},
		{"E2E p90", dist.Total.E2E.P90, single.Total.E2E.P90},
	} {
		assert.LessOrEqual(t, math.Abs(q.got-q.ref), tol*q.ref, "%s: 3 shards %.4f s, one process %.4f s (tolerance %s)", q.name, q.got, q.ref, why)
	}
	t.Logf("merged: %d requests, %.3f req/s, TTFT p50/p90/p95/p99 %.4f/%.4f/%.4f/%.4f s, E2E p50/p90/p95/p99 %.4f/%.4f/%.4f/%.4f s",
		dist.Total.Requests, dist.Shards.AchievedRPS, dist.Total.TTFT.P50, dist.Total.TTFT.P90, dist.Total.TTFT.P95, dist.Total.TTFT.P99,
		dist.Total.E2E.P50, dist.Total.E2E.P90, dist.Total.E2E.P95, dist.Total.E2E.P99)
	t.Logf("single: %d requests, %.3f req/s, schedule lag p99 %.4f s, TTFT p50/p90/p95/p99 %.4f/%.4f/%.4f/%.4f s, E2E p50/p90/p95/p99 %.4f/%.4f/%.4f/%.4f s",
		single.Total.Requests, single.Shards.AchievedRPS, singleLag, single.Total.TTFT.P50, single.Total.TTFT.P90, single.Total.TTFT.P95, single.Total.TTFT.P99,
		single.Total.E2E.P50, single.Total.E2E.P90, single.Total.E2E.P95, single.Total.E2E.P99)
	t.Logf("merged shards: %+v; warnings %q", dist.Shards.Shards, dist.Shards.Warnings)

	// The run with a shard stopped early says so.
	require.NotNil(t, stop.Shards)
	require.Len(t, stop.Shards.Shards, shards)
	assert.Contains(t, stop.Shards.Shards[1].Status, "stopped_early")
	assert.NotContains(t, stop.Shards.Shards[0].Status, "stopped_early")
	assert.NotContains(t, stop.Shards.Shards[2].Status, "stopped_early")
	assert.Contains(t, strings.Join(stop.Shards.Warnings, "\n"), "shard 1: stopped early")
	assert.NotEqual(t, "PASS", stop.Verdict)
	t.Logf("stopped run: %+v; warnings: %q", stop.Shards.Shards, stop.Shards.Warnings)
	t.Logf("wall time %v", time.Since(began).Round(time.Second))
}
