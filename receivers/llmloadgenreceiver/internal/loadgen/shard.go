package loadgen

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// ShardPlan is the resolved sharding of a run: which part of the global
// schedule this process generates.
type ShardPlan struct {
	Index, Count int
	RunID        string
	StartAt      time.Time // zero: the schedule starts when the receiver does
	seed         uint64    // the run's global seed
}

// NewShardPlan resolves the plan of a validated configuration; seed is the
// run's global seed.
func NewShardPlan(cfg *config.Config, seed uint64) (ShardPlan, error) {
	p := ShardPlan{Count: max(cfg.Shard.Count, 1), RunID: cfg.RunID, seed: seed}
	idx, _, err := cfg.Shard.ResolveIndex()
	if err != nil {
		return p, err
	}
	p.Index = idx
	if cfg.StartAt != "" {
		if p.StartAt, err = time.Parse(time.RFC3339Nano, cfg.StartAt); err != nil {
			return p, fmt.Errorf("start_at: %w", err)
		}
	}
	return p, nil
}

func (p ShardPlan) Sharded() bool { return p.Count > 1 }

// GlobalSeed is the seed of a run: the configured one, else one derived from
// the run id (so that every shard of a run draws the same global schedule),
// else 0 (the caller picks a random one).
func GlobalSeed(cfg *config.Config) uint64 {
	if cfg.Seed != 0 || cfg.RunID == "" {
		return cfg.Seed
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(cfg.RunID))
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}

// MixSeed derives a seed from a seed and a few numbers (SplitMix64 finalizer
// over each), so that shards and steps get independent, reproducible streams.
func MixSeed(seed uint64, parts ...uint64) uint64 {
	z := seed
	for _, v := range parts {
		z += 0x9e3779b97f4a7c15 ^ v*0xbf58476d1ce4e5b9
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
	}
	return z
}

// Streams drawn from the global seed.
const (
	streamShardArrivals  = 1 // a shard's own arrival process (poisson split)
	streamGlobalArrivals = 2 // the run's global arrival process (dealt)
	streamShardLocal     = 3 // prompts, think times and ids of one shard
)

// LocalSeed seeds what is private to this shard (prompt lengths, ids). An
// unsharded run keeps the global seed, so its behaviour does not change.
func (p ShardPlan) LocalSeed() uint64 {
	if !p.Sharded() {
		return p.seed
	}
	return MixSeed(p.seed, streamShardLocal, uint64(p.Index))
}

// Share is this shard's part of n whole units (requests, virtual users):
// n/count each, the remainder going to the lowest indexes.
func (p ShardPlan) Share(n int64) int64 {
	if !p.Sharded() || n <= 0 {
		return n
	}
	c := int64(p.Count)
	s := n / c
	if int64(p.Index) < n%c {
		s++
	}
	return s
}

// ArrivalSource yields arrival times in seconds since the schedule's start.
type ArrivalSource interface{ Next() float64 }

// Arrivals returns this shard's Arrivals of the open-loop process a, for
// sweep step step (0 outside sweeps). Unsharded, it is the process itself
// drawn from local. Sharded:
//   - poisson: the rate (and every stage target) is divided by the shard
//     count and each shard draws from its own seed; the union of independent
//     Poisson processes is the Poisson process of the summed rate.
//   - constant and gamma: every shard draws the same global process (from
//     the run's seed) and keeps Arrivals index+1, index+1+count, …: the
//     phase offsets of a constant rate (shard i sends the (i+1+k·count)-th
//     arrival, at t0 + (i+1+k·count)/rate), and for gamma the union keeps
//     the configured burstiness exactly, which a superposition of
//     independent gamma processes would not.
func (p ShardPlan) Arrivals(a config.ArrivalConfig, step int, local *Rand64) ArrivalSource {
	if !p.Sharded() {
		return NewOpenLoop(a, local)
	}
	if a.Type == config.ArrivalPoisson {
		split := a
		split.Rate = a.Rate / float64(p.Count)
		split.Stages = make([]config.StageConfig, len(a.Stages))
		for i, s := range a.Stages {
			split.Stages[i] = config.StageConfig{Duration: s.Duration, Target: s.Target / float64(p.Count)}
		}
		return NewOpenLoop(split, NewRand(MixSeed(p.seed, streamShardArrivals, uint64(p.Index), uint64(step))))
	}
	return &dealtArrivals{
		global: NewOpenLoop(a, NewRand(MixSeed(p.seed, streamGlobalArrivals, uint64(step)))),
		first:  p.Index + 1, every: p.Count,
	}
}

// dealtArrivals keeps every count-th arrival of a global process, starting
// with the first-th.
type dealtArrivals struct {
	global       *OpenLoop
	first, every int
	started      bool
}

func (d *dealtArrivals) Next() float64 {
	n := d.every
	if !d.started {
		n, d.started = d.first, true
	}
	t := math.Inf(1)
	for i := 0; i < n; i++ {
		if t = d.global.Next(); math.IsInf(t, 1) {
			return t
		}
	}
	return t
}

// Begin returns when the schedule starts: start_at when set, else now.
func (p ShardPlan) Begin(now time.Time) time.Time {
	if p.StartAt.IsZero() {
		return now
	}
	return p.StartAt
}

// WaitStart blocks until start_at (if it is ahead); false if ctx ended first.
func (p ShardPlan) WaitStart(ctx context.Context) bool {
	d := time.Until(p.StartAt)
	if p.StartAt.IsZero() || d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Identified reports whether the run's telemetry carries its identity: a
// configured run id (always the case for a sharded run).
func (p ShardPlan) Identified() bool { return p.RunID != "" }

// PutIdentity writes the run id and the shard on a resource.
func (p ShardPlan) PutIdentity(m pcommon.Map) {
	if !p.Identified() {
		return
	}
	m.PutStr(genai.AttrLoadgenRunID, p.RunID)
	m.PutInt(genai.AttrLoadgenShardIndex, int64(p.Index))
	m.PutInt(genai.AttrLoadgenShardCount, int64(p.Count))
}

// SkipSlack is how far in the past an arrival may be when its schedule
// begins and still be sent; older ones are skipped (a shard that starts
// after start_at catches up by skipping, never by sending a burst).
const SkipSlack = 50 * time.Millisecond

// ReasonLateStart is the otelcol_llm_loadgen_live_not_sent reason of a
// skipped arrival.
const ReasonLateStart = "late_start"

// Metric names of the schedule statistics an identified run emits.
const (
	metricScheduleLag     = genai.MetricLoadgenScheduleLag
	metricScheduleSkipped = genai.MetricLoadgenScheduleSkipped
)

// ScheduleStats collects how late the scheduler was: the lag of every
// request it started, and the arrivals it skipped (with their lateness).
type ScheduleStats struct {
	mu      sync.Mutex
	lag     *genai.ExplicitHistogram
	skipped int64
}

// NewScheduleStats returns empty statistics.
func NewScheduleStats() *ScheduleStats {
	return &ScheduleStats{lag: &genai.ExplicitHistogram{Bounds: liveSecondsBuckets}}
}

func (s *ScheduleStats) Record(lag float64) {
	s.mu.Lock()
	s.lag.Record(max(lag, 0))
	s.mu.Unlock()
}

// Skip counts an arrival that was skipped lag seconds after its time.
func (s *ScheduleStats) Skip(lag float64) {
	s.mu.Lock()
	s.lag.Record(max(lag, 0))
	s.skipped++
	s.mu.Unlock()
}

// AppendTo adds the cumulative schedule metrics to md's first scope and
// returns the number of points added.
func (s *ScheduleStats) AppendTo(md pmetric.Metrics, start, now time.Time) int {
	if md.ResourceMetrics().Len() == 0 || md.ResourceMetrics().At(0).ScopeMetrics().Len() == 0 {
		return 0
	}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendLag(ms, start, now)
	s.appendSkipped(ms, start, now)
	return 2
}

// appendLag adds the schedule lag histogram; s.mu is held.
func (s *ScheduleStats) appendLag(ms pmetric.MetricSlice, start, now time.Time) {
	lag := ms.AppendEmpty()
	lag.SetName(metricScheduleLag)
	lag.SetUnit("s")
	lag.SetDescription("How late the scheduler started each request after its scheduled send time; skipped arrivals count with their lateness.")
	h := lag.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := h.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
	s.lag.CopyTo(dp)
	if s.lag.Count == 0 {
		dp.RemoveMin()
		dp.RemoveMax()
	}
}

// appendSkipped adds the count of skipped arrivals; s.mu is held.
func (s *ScheduleStats) appendSkipped(ms pmetric.MetricSlice, start, now time.Time) {
	sk := ms.AppendEmpty()
	sk.SetName(metricScheduleSkipped)
	sk.SetUnit("{request}")
	sk.SetDescription("Scheduled arrivals not sent because the shard started after their time (catch-up by skipping).")
	sum := sk.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	sp := sum.DataPoints().AppendEmpty()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetIntValue(s.skipped)
}
