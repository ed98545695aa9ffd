package loadgen

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		ps[i] = ShardPlan{Index: i, Count: count, RunID: "r", seed: seed}
	}
	return ps
}

// The union of the shards' arrivals is exactly the global schedule for
// constant rates (phase offsets) and gamma processes, stages included.
func TestShardUnionIsTheGlobalSchedule(t *testing.T) {
	stages := []config.StageConfig{{Duration: 5 * time.Second, Target: 40}, {Duration: 5 * time.Second, Target: 10}}
	for _, a := range []config.ArrivalConfig{
		{Type: config.ArrivalConstant, Rate: 30},
		{Type: config.ArrivalConstant, Rate: 5, Stages: stages},
		{Type: config.ArrivalGamma, Rate: 20, Burstiness: 0.3, Stages: stages},
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
	got := collect(p.Arrivals(config.ArrivalConfig{Type: config.ArrivalConstant, Rate: 10}, 0, NewRand(1)), 2, 100)
	require.Len(t, got, 5)
	for k, v := range got {
		assert.InDelta(t, float64(2+1+4*k)/10, v, 1e-9)
	}
}

// Poisson shards split the rate with independent, reproducible streams; their
// union has the total rate.
func TestShardPoissonSplitsTheRate(t *testing.T) {
	const rate, horizon, count = 200.0, 50.0, 4
	a := config.ArrivalConfig{Type: config.ArrivalPoisson, Rate: rate}
	total := 0
	firsts := map[float64]bool{}
	for _, p := range plans(count, 7) {
		mine := collect(p.Arrivals(a, 0, NewRand(1)), horizon, 100000)
		n := float64(len(mine))
		want := rate / count * horizon // 2,500 per shard: sd 50
		assert.InDelta(t, want, n, 4*math.Sqrt(want), "shard %d rate", p.Index)
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
	assert.Equal(t, uint64(5), ShardPlan{Count: 1, seed: 5}.LocalSeed(), "an unsharded run keeps its seed")
	cfg := &config.Config{RunID: "run-42", Shard: config.ShardConfig{Index: new(0), Count: 3}}
	assert.Equal(t, GlobalSeed(cfg), GlobalSeed(&config.Config{RunID: "run-42", Shard: config.ShardConfig{Index: new(2), Count: 3}}), "shards of a run share the global seed")
	assert.NotEqual(t, GlobalSeed(cfg), GlobalSeed(&config.Config{RunID: "run-43"}))
}
