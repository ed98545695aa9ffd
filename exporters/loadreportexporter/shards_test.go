package loadreportexporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// shardRun is the telemetry of one shard of a run: n requests, one every
// `every`, the first at `first` after t0 (the phase offsets of a constant
// rate), each with a TTFT that depends only on its global position.
func shardRun(runID string, index, count, n int, first, every time.Duration) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", "llm_loadgen")
	if runID != "" {
		res.PutStr(genai.AttrLoadgenRunID, runID)
		res.PutInt(genai.AttrLoadgenShardIndex, int64(index))
		res.PutInt(genai.AttrLoadgenShardCount, int64(count))
	}
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	for k := 0; k < n; k++ {
		at := first + time.Duration(k)*every
		g := int(at / (100 * time.Millisecond)) // global position
		r := req{at: at, dur: time.Duration(400+g%37) * time.Millisecond, ttft: time.Duration(100+g%53) * time.Millisecond,
			out: 20, in: 100, target: "vllm", model: "llama", scenario: "chat"}
		if g == 57 {
			r.errType = "429"
		}
		addReq(ss, r)
	}
	return td
}

// scheduleMetrics is a shard's cumulative schedule lag (one sample per
// value) and skipped count.
func scheduleMetrics(runID string, index, count int, lags []float64, skipped int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	res := rm.Resource().Attributes()
	res.PutStr(genai.AttrLoadgenRunID, runID)
	res.PutInt(genai.AttrLoadgenShardIndex, int64(index))
	res.PutInt(genai.AttrLoadgenShardCount, int64(count))
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	lag := ms.AppendEmpty()
	lag.SetName(metricScheduleLag)
	h := lag.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := h.DataPoints().AppendEmpty()
	bounds := []float64{0.001, 0.01, 0.1, 1, 10}
	counts := make([]uint64, len(bounds)+1)
	mx := 0.0
	for _, v := range lags {
		i := 0
		for i < len(bounds) && v > bounds[i] {
			i++
		}
		counts[i]++
		mx = max(mx, v)
	}
	dp.ExplicitBounds().FromRaw(bounds)
	dp.BucketCounts().FromRaw(counts)
	dp.SetCount(uint64(len(lags)))
	dp.SetMax(mx)
	dp.SetTimestamp(ptsOf(t0.Add(30 * time.Second)))
	sk := ms.AppendEmpty()
	sk.SetName(metricScheduleSkipped)
	sum := sk.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	sp := sum.DataPoints().AppendEmpty()
	sp.SetIntValue(skipped)
	sp.SetTimestamp(ptsOf(t0.Add(30 * time.Second)))
	return md
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// distributedRun: four shards declared at 10 req/s in total (a request every
// 100 ms, shard i at (i+1+4k)·100 ms) for 30 s. Shard 0 is healthy, shard 1
// stopped after 12 s, shard 2 started late (skipped 10 arrivals, lag up to
// 1.2 s), shard 3 never reported.
func distributedRun(t *testing.T, st *state) {
	t.Helper()
	const every = 400 * time.Millisecond
	for _, sh := range []struct{ index, n int }{{0, 75}, {1, 30}, {2, 75}} {
		first := time.Duration(sh.index+1) * 100 * time.Millisecond
		out := st.consumeTraces(shardRun("run-7", sh.index, 4, sh.n, first, every))
		require.Equal(t, map[string]int64{spanRequest: int64(sh.n)}, out)
	}
	lagOK := append(repeat(0.0005, 74), 0.004)
	assert.Equal(t, map[string]int64{pointUsed: 2}, st.consumeMetrics(scheduleMetrics("run-7", 0, 4, lagOK, 0)))
	assert.Equal(t, map[string]int64{pointUsed: 2}, st.consumeMetrics(scheduleMetrics("run-7", 1, 4, repeat(0.0005, 30), 0)))
	lagLate := append(repeat(0.0005, 65), 0.1, 0.3, 0.5, 0.7, 0.9, 1.1, 1.2, 0.2, 0.4, 0.6)
	assert.Equal(t, map[string]int64{pointUsed: 2}, st.consumeMetrics(scheduleMetrics("run-7", 2, 4, lagLate, 10)))
}

func TestGoldenShards(t *testing.T) {
	st := newTestState(testConfig(t))
	st.runID = "run-7"
	distributedRun(t, st)
	r := st.build(true)
	rd, err := newRenderer(createDefaultConfig().CancelledErrorTypes)
	require.NoError(t, err)
	js, err := json.MarshalIndent(struct {
		RunID   string       `json:"run_id"`
		Verdict string       `json:"verdict"`
		Shards  *ShardReport `json:"shards"`
	}{r.RunID, r.Verdict, r.Shards}, "", "  ")
	require.NoError(t, err)
	golden(t, "shards.json", append(js, '\n'))
	md, err := rd.render(FormatMarkdown, r)
	require.NoError(t, err)
	golden(t, "shards.md", md)
	html, err := rd.render(FormatHTML, r)
	require.NoError(t, err)
	assert.Contains(t, string(html), `<table id="shards">`)
	assert.Contains(t, string(html), "1 of 4 shards missing")
}

func TestShardChecks(t *testing.T) {
	st := newTestState(testConfig(t))
	st.runID = "run-7"
	distributedRun(t, st)
	r := st.build(true)
	s := r.Shards
	require.NotNil(t, s)
	assert.Equal(t, "run-7", r.RunID)
	assert.Equal(t, 4, s.Expected)
	assert.Equal(t, 3, s.Seen)
	assert.Equal(t, []int{3}, s.Missing)
	assert.EqualValues(t, 180, s.Requests)
	require.Len(t, s.Shards, 4)
	assert.Equal(t, shardOK, s.Shards[0].Status)
	assert.Equal(t, shardStoppedEarly+","+shardRateOff, s.Shards[1].Status, "30 of the median 75 requests, the last 18 s early")
	assert.Equal(t, shardLagging, s.Shards[2].Status)
	assert.Equal(t, shardMissing, s.Shards[3].Status)
	assert.EqualValues(t, 10, s.Shards[2].Skipped)
	require.NotNil(t, s.Shards[2].LagMaxS)
	assert.InDelta(t, 1.2, *s.Shards[2].LagMaxS, 1e-9)
	require.NotNil(t, s.Shards[0].LagP99S)
	assert.InDelta(t, 0.004, *s.Shards[0].LagP99S, 1e-9, "the p99 bucket's bound, capped at the max")
	assert.EqualValues(t, 1, r.Total.Errors, "counts are summed over the shards")
	assert.Len(t, s.Warnings, 4)
	assert.NotEqual(t, VerdictPass, r.Verdict, "a run with a missing shard does not pass")
}

// A healthy distributed run: the merged counts and percentiles are those of
// the same requests sent by one process, and the merged rate is the total.
func TestShardsMergeLikeOneProcess(t *testing.T) {
	cfg := testConfig(t)
	cfg.SLOs = cfg.SLOs[:1] // ttft_p95: the run has one 429
	merged := newTestState(cfg)
	merged.runID = "run-1"
	single := newTestState(cfg)
	const count, n = 3, 100
	for i := 0; i < count; i++ {
		merged.consumeTraces(shardRun("run-1", i, count, n, time.Duration(i+1)*100*time.Millisecond, count*100*time.Millisecond))
	}
	single.consumeTraces(shardRun("", 0, 1, count*n, 100*time.Millisecond, 100*time.Millisecond))
	a, b := merged.build(true), single.build(true)
	assert.Equal(t, b.Total.Requests, a.Total.Requests)
	assert.Equal(t, b.Total.Errors, a.Total.Errors)
	assert.Equal(t, b.Total.TTFT, a.Total.TTFT, "merged sketches give the one-process percentiles")
	assert.Equal(t, b.Total.E2E, a.Total.E2E)
	require.NotNil(t, a.Shards)
	assert.Empty(t, a.Shards.Warnings)
	assert.InDelta(t, 10.0, a.Shards.AchievedRPS, 1e-9, "(300 − 1) requests over 29.9 s")
	assert.Equal(t, VerdictPass, a.Verdict)
	assert.Nil(t, b.Shards)
}

// The exporter writes one report per run id, under run-<id>, and keeps
// data without a run id in the main report.
func TestOneReportPerRun(t *testing.T) {
	cfg := testConfig(t)
	e, err := newReportExporter(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	e.now = fixedNow
	require.NoError(t, e.start(bg, componenttest.NewNopHost()))
	td := shardRun("run/a", 0, 2, 10, 100*time.Millisecond, 200*time.Millisecond)
	shardRun("run-b", 0, 1, 5, 0, time.Second).ResourceSpans().At(0).CopyTo(td.ResourceSpans().AppendEmpty())
	shardRun("run/a", 1, 2, 10, 200*time.Millisecond, 200*time.Millisecond).ResourceSpans().At(0).CopyTo(td.ResourceSpans().AppendEmpty())
	require.NoError(t, e.consumeTraces(bg, td))
	require.NoError(t, e.shutdown(bg))

	read := func(dir string) Report {
		raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
		require.NoError(t, err)
		var r Report
		require.NoError(t, json.Unmarshal(raw, &r))
		return r
	}
	a := read(filepath.Join(cfg.Directory, "run-run_a"))
	assert.Equal(t, "run/a", a.RunID)
	assert.EqualValues(t, 20, a.Total.Requests)
	require.NotNil(t, a.Shards)
	assert.Equal(t, 2, a.Shards.Seen)
	b := read(filepath.Join(cfg.Directory, "run-run-b"))
	assert.EqualValues(t, 5, b.Total.Requests)
	_, err = os.Stat(filepath.Join(cfg.Directory, "report.json"))
	assert.True(t, os.IsNotExist(err), "no main report when every request belongs to a run")

	// Data without a run id and without requests (here a GPU gauge) gets the
	// main report, but its NO_DATA verdict does not gate the runs'.
	cfg3 := testConfig(t)
	cfg3.Exit.OnVerdict = "fail"
	e3, err := newReportExporter(cfg3, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, e3.start(bg, componenttest.NewNopHost()))
	require.NoError(t, e3.consumeTraces(bg, shardRun("run-c", 0, 1, 20, 0, 100*time.Millisecond)))
	gpu := pmetric.NewMetrics()
	g := gpu.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("hw.gpu.utilization")
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetDoubleValue(0.5)
	dp.SetTimestamp(ptsOf(t0))
	require.NoError(t, e3.consumeMetrics(bg, gpu))
	require.NoError(t, e3.shutdown(bg), "the run passes; the main report's NO_DATA does not fail the gate")
	assert.EqualValues(t, 20, read(filepath.Join(cfg3.Directory, "run-run-c")).Total.Requests)
	assert.EqualValues(t, 0, read(cfg3.Directory).Total.Requests)

	// Without run ids, the report stays in the directory itself.
	cfg2 := testConfig(t)
	e2, err := newReportExporter(cfg2, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, e2.start(bg, componenttest.NewNopHost()))
	require.NoError(t, e2.consumeTraces(bg, shardRun("", 0, 1, 5, 0, time.Second)))
	require.NoError(t, e2.shutdown(bg))
	main := read(cfg2.Directory)
	assert.EqualValues(t, 5, main.Total.Requests)
	assert.Nil(t, main.Shards)
}

func TestShardsConfigValidation(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Shards = ShardsConfig{RateTolerance: 1.5, StopTolerance: 0, LagTolerance: -time.Second, MaxRuns: 0}
	err := cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{"shards.rate_tolerance: 1.5", "shards.stop_tolerance: 0s", "shards.lag_tolerance: -1s", "shards.max_runs: 0"} {
		assert.Contains(t, err.Error(), want)
	}
}
