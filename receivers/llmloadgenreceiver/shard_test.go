package llmloadgenreceiver

import (
	"math"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

func intp(i int) *int { return &i }

func shardedConfig(index, count int) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Mode = ModeLive
	cfg.RunID = "run-42"
	cfg.StartAt = "2026-11-29T20:00:00Z"
	cfg.Shard = ShardConfig{Index: intp(index), Count: count}
	return cfg
}

func TestShardValidation(t *testing.T) {
	tests := []struct {
		name   string
		env    string // JOB_COMPLETION_INDEX; "-" leaves it unset
		mutate func(*Config)
		errs   []string
	}{
		{name: "valid", env: "-", mutate: func(*Config) {}},
		{name: "index from env", env: "2", mutate: func(c *Config) { c.Shard.Index = nil }},
		{name: "count zero", env: "-", mutate: func(c *Config) { c.Shard.Count = 0 }, errs: []string{"shard.count: must be >= 1, got 0"}},
		{name: "index equals count", env: "-", mutate: func(c *Config) { c.Shard.Index = intp(3) }, errs: []string{"shard.index: 3 is out of range; must be 0 to shard.count-1 (2)"}},
		{name: "negative index", env: "-", mutate: func(c *Config) { c.Shard.Index = intp(-1) }, errs: []string{"shard.index: -1 is out of range"}},
		{name: "env index out of range", env: "7", mutate: func(c *Config) { c.Shard.Index = nil }, errs: []string{"shard.index: 7 (from JOB_COMPLETION_INDEX) is out of range"}},
		{name: "env index not a number", env: "x", mutate: func(c *Config) { c.Shard.Index = nil }, errs: []string{`JOB_COMPLETION_INDEX="x" is not an integer`}},
		{name: "no index anywhere", env: "-", mutate: func(c *Config) { c.Shard.Index = nil }, errs: []string{"shard.index: not set and JOB_COMPLETION_INDEX is not in the environment"}},
		{name: "bad start_at", env: "-", mutate: func(c *Config) { c.StartAt = "tomorrow" }, errs: []string{`start_at: "tomorrow" is not an RFC 3339 time`}},
		{name: "sharded without run_id and start_at", env: "-", mutate: func(c *Config) { c.RunID, c.StartAt = "", "" },
			errs: []string{"run_id: required when shard.count > 1", "start_at: required when shard.count > 1"}},
		{name: "synthetic", env: "-", mutate: func(c *Config) { c.Mode = ModeSynthetic },
			errs: []string{"shard.count: sharding applies to mode live only", "start_at: applies to mode live only", "run_id: applies to mode live only"}},
		{name: "unsharded default", env: "-", mutate: func(c *Config) { c.Shard, c.RunID, c.StartAt = ShardConfig{Count: 1}, "", "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env == "-" {
				t.Setenv(EnvJobCompletionIndex, "")
			} else {
				t.Setenv(EnvJobCompletionIndex, tt.env)
			}
			cfg := shardedConfig(1, 3)
			tt.mutate(cfg)
			err := cfg.Validate()
			if len(tt.errs) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, e := range tt.errs {
				assert.Contains(t, err.Error(), e)
			}
		})
	}
}

func TestShardIndexFromJobCompletionIndex(t *testing.T) {
	t.Setenv(EnvJobCompletionIndex, "2")
	cfg := shardedConfig(0, 4)
	cfg.Shard.Index = nil
	p, err := NewShardPlan(cfg, 1)
	require.NoError(t, err)
	assert.Equal(t, 2, p.index)
	cfg.Shard.Index = intp(1) // a configured index wins
	p, err = NewShardPlan(cfg, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, p.index)
}

// collect draws arrivals below horizon seconds (bounded by max).
func collect(src ArrivalSource, horizon float64, maxN int) []float64 {
	var out []float64
	for len(out) < maxN {
		t := src.Next()
		if math.IsInf(t, 1) || t >= horizon {
			break
		}
		out = append(out, t)
	}
	return out
}

func plans(count int, seed uint64) []ShardPlan {
	ps := make([]ShardPlan, count)
	for i := range ps {
		ps[i] = ShardPlan{index: i, count: count, runID: "r", seed: seed}
	}
	return ps
}

// The union of the shards' arrivals is exactly the global schedule for
// constant rates (phase offsets) and gamma processes, stages included.
func TestShardUnionIsTheGlobalSchedule(t *testing.T) {
	stages := []StageConfig{{Duration: 5 * time.Second, Target: 40}, {Duration: 5 * time.Second, Target: 10}}
	for _, a := range []ArrivalConfig{
		{Type: ArrivalConstant, Rate: 30},
		{Type: ArrivalConstant, Rate: 5, Stages: stages},
		{Type: ArrivalGamma, Rate: 20, Burstiness: 0.3, Stages: stages},
	} {
		t.Run(a.Type, func(t *testing.T) {
			const seed, horizon = 99, 12.0
			global := collect(NewOpenLoop(a, NewRand(MixSeed(seed, streamGlobalArrivals, 0))), horizon, 10000)
			require.Greater(t, len(global), 100)
			var union []float64
			for i, p := range plans(3, seed) {
				mine := collect(p.Arrivals(a, 0, NewRand(1)), horizon, 10000)
				assert.InDelta(t, len(global)/3, len(mine), 1, "shard %d gets a third", i)
				union = append(union, mine...)
			}
			sort.Float64s(union)
			require.Equal(t, global, union)
		})
	}
	// Constant rate: shard i sends at t0 + (i + 1 + k·count)/rate.
	p := plans(4, 1)[2]
	got := collect(p.Arrivals(ArrivalConfig{Type: ArrivalConstant, Rate: 10}, 0, NewRand(1)), 2, 100)
	require.Len(t, got, 5)
	for k, v := range got {
		assert.InDelta(t, float64(2+1+4*k)/10, v, 1e-9)
	}
}

// Poisson shards split the rate with independent, reproducible streams; their
// union has the total rate.
func TestShardPoissonSplitsTheRate(t *testing.T) {
	const rate, horizon, count = 200.0, 50.0, 4
	a := ArrivalConfig{Type: ArrivalPoisson, Rate: rate}
	total := 0
	firsts := map[float64]bool{}
	for _, p := range plans(count, 7) {
		mine := collect(p.Arrivals(a, 0, NewRand(1)), horizon, 100000)
		n := float64(len(mine))
		want := rate / count * horizon // 2,500 per shard: sd 50
		assert.InDelta(t, want, n, 4*math.Sqrt(want), "shard %d rate", p.index)
		again := collect(p.Arrivals(a, 0, NewRand(2)), horizon, 100000)
		assert.Equal(t, mine, again, "reproducible from the run's seed, not the local source")
		firsts[mine[0]] = true
		total += len(mine)
	}
	assert.Len(t, firsts, count, "independent streams per shard")
	want := rate * horizon
	assert.InDelta(t, want, float64(total), 4*math.Sqrt(want))
}

func TestShardShareAndSeeds(t *testing.T) {
	ps := plans(3, 5)
	assert.Equal(t, []int64{4, 3, 3}, []int64{ps[0].Share(10), ps[1].Share(10), ps[2].Share(10)}, "remainder to the low indexes")
	for n := int64(0); n < 50; n++ {
		sum := int64(0)
		for _, p := range ps {
			sum += p.Share(n)
		}
		assert.Equal(t, n, sum)
	}
	seen := map[uint64]bool{}
	for _, p := range ps {
		seen[p.LocalSeed()] = true
	}
	assert.Len(t, seen, 3, "each shard has its own local seed")
	assert.Equal(t, uint64(5), ShardPlan{count: 1, seed: 5}.LocalSeed(), "an unsharded run keeps its seed")
	cfg := shardedConfig(0, 3)
	assert.Equal(t, GlobalSeed(cfg), GlobalSeed(shardedConfig(2, 3)), "shards of a run share the global seed")
	cfg.RunID = "run-43"
	assert.NotEqual(t, GlobalSeed(cfg), GlobalSeed(shardedConfig(0, 3)))
}

type shardSpan struct {
	start        time.Time
	runID        string
	index, count int64
	hasTTFT      bool
}

func shardSpans(run *liveRun) []shardSpan {
	var out []shardSpan
	for _, td := range run.traces.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			res := rs.Resource().Attributes()
			id, _ := res.Get(genai.AttrLoadgenRunID)
			idx, _ := res.Get(genai.AttrLoadgenShardIndex)
			cnt, _ := res.Get(genai.AttrLoadgenShardCount)
			ss := rs.ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				spans := ss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					_, ttft := sp.Attributes().Get(genai.AttrTimeToFirstChunk)
					out = append(out, shardSpan{start: sp.StartTimestamp().AsTime(), runID: id.AsString(),
						index: idx.Int(), count: cnt.Int(), hasTTFT: ttft})
				}
			}
		}
	}
	return out
}

func scheduleMetric(md []pmetric.Metrics) (lagCount uint64, skipped int64, identity bool) {
	for _, m := range md {
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			rm := m.ResourceMetrics().At(i)
			_, identity = rm.Resource().Attributes().Get(genai.AttrLoadgenShardIndex)
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				ms := rm.ScopeMetrics().At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					switch ms.At(k).Name() {
					case metricScheduleLag:
						lagCount = ms.At(k).Histogram().DataPoints().At(0).Count()
					case metricScheduleSkipped:
						skipped = ms.At(k).Sum().DataPoints().At(0).IntValue()
					}
				}
			}
		}
	}
	return lagCount, skipped, identity
}

// Three shards in one process, as three pods would run them: a common
// start_at, each sends its phase of a constant rate, and together they send
// the global schedule (start_at + k/rate) with the run id and the shard on
// every span and metric.
func TestLiveShardsSendTheGlobalSchedule(t *testing.T) {
	mock := startMock(t, nil)
	const count, requests, rate = 3, 30, 40.0
	startAt := time.Now().Add(500 * time.Millisecond).UTC().Truncate(time.Millisecond)
	var runs []*liveRun
	for i := 0; i < count; i++ {
		cfg := liveConfig(mock.URL(), requests, rate)
		cfg.RunID = "run-e"
		cfg.StartAt = startAt.Format(time.RFC3339Nano)
		cfg.Shard = ShardConfig{Index: intp(i), Count: count}
		runs = append(runs, startLive(t, cfg))
	}
	var all []shardSpan
	for i, run := range runs {
		want := []int{10, 10, 10}[i]
		run.spans(t, want)
		run.stop(t)
		got := shardSpans(run)
		require.Len(t, got, want, "shard %d sends its share of the requests", i)
		for _, sp := range got {
			assert.Equal(t, "run-e", sp.runID)
			assert.Equal(t, int64(i), sp.index)
			assert.Equal(t, int64(count), sp.count)
			assert.True(t, sp.hasTTFT)
		}
		lagN, skipped, ident := scheduleMetric(run.metrics.AllMetrics())
		assert.True(t, ident, "metrics carry the shard")
		assert.Equal(t, uint64(want), lagN, "one lag sample per request")
		assert.Zero(t, skipped)
		all = append(all, got...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	for k, sp := range all {
		want := startAt.Add(time.Duration(float64(k+1) / rate * float64(time.Second)))
		assert.WithinDuration(t, want, sp.start, time.Millisecond, "request %d of the global schedule", k+1)
	}
}

// A shard that starts after start_at skips the arrivals it missed, counts
// them, and does not send them in a burst.
func TestLiveLateShardSkipsInsteadOfBursting(t *testing.T) {
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), 0, 20)
	cfg.Duration = 2 * time.Second
	cfg.RunID = "run-late"
	cfg.StartAt = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	began := time.Now()
	run := startLive(t, cfg)
	require.Eventually(t, func() bool { return run.traces.SpanCount() >= 15 }, 20*time.Second, 20*time.Millisecond)
	time.Sleep(time.Until(began.Add(1200 * time.Millisecond))) // the schedule ends 1 s after began
	run.stop(t)
	spans := shardSpans(run)
	for _, sp := range spans {
		assert.False(t, sp.start.Before(began.Add(-SkipSlack)), "no request scheduled before the shard started is sent")
	}
	// 39 arrivals in 2 s at 20/s: those due more than SkipSlack before the
	// receiver started (at least the 18 of the first 0.95 s) are skipped and
	// counted, the rest are sent.
	_, skipped, _ := scheduleMetric(run.metrics.AllMetrics())
	assert.GreaterOrEqual(t, skipped, int64(18), "the missed second is counted")
	assert.EqualValues(t, 39, int64(len(spans))+skipped, "every arrival is either sent or counted as skipped")
}

func TestLoadShardConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config_shard.yaml"))
	require.NoError(t, err)
	load := func(name string) *Config {
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, sub.Unmarshal(cfg))
		return cfg
	}
	t.Setenv(EnvJobCompletionIndex, "")

	cfg := load("sharded")
	require.NoError(t, cfg.Validate())
	assert.Equal(t, "vllm-8b-20261129-a", cfg.RunID)
	assert.Equal(t, "2026-11-29T21:00:00Z", cfg.StartAt)
	require.NotNil(t, cfg.Shard.Index)
	assert.Equal(t, ShardConfig{Index: intp(2), Count: 4}, cfg.Shard)
	assert.Equal(t, 1, createDefaultConfig().(*Config).Shard.Count, "unsharded by default")

	cfg = load("sharded_from_job")
	assert.Nil(t, cfg.Shard.Index)
	err = cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "shard.index: not set and JOB_COMPLETION_INDEX is not in the environment")
	t.Setenv(EnvJobCompletionIndex, "3")
	require.NoError(t, cfg.Validate())
	p, err := NewShardPlan(cfg, 1)
	require.NoError(t, err)
	assert.Equal(t, 3, p.index)
	assert.Equal(t, time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC), p.startAt.UTC())

	err = load("sharded_bad").Validate()
	require.Error(t, err)
	for _, want := range []string{"shard.index: 4 is out of range", `start_at: "21:00" is not an RFC 3339 time`, "run_id: required when shard.count > 1"} {
		assert.Contains(t, err.Error(), want)
	}
}
