package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// ShardsConfig sets how the report judges the shards of a distributed run
// (llm_loadgen with shard.count > 1: spans and metrics carrying
// llm_loadgen.run.id and llm_loadgen.shard.index / .count).
type ShardsConfig struct {
	// RateTolerance: a shard whose request count is off the median shard's by
	// more than this share (and by more than 3 standard deviations of a
	// Poisson count, 3·√median) disagrees with the others.
	RateTolerance float64 `mapstructure:"rate_tolerance"`
	// StopTolerance: a shard whose last request started more than this (or
	// 3 of its mean gaps, whichever is larger) before the run's last request
	// stopped early.
	StopTolerance time.Duration `mapstructure:"stop_tolerance"`
	// LagTolerance: a shard whose schedule lag p99 is above it, or that
	// skipped arrivals, is lagging.
	LagTolerance time.Duration `mapstructure:"lag_tolerance"`
	// MaxRuns is the number of run ids that get their own report; data of
	// further run ids goes to the report without a run id.
	MaxRuns int `mapstructure:"max_runs"`
}

func defaultShardsConfig() ShardsConfig {
	return ShardsConfig{RateTolerance: 0.05, StopTolerance: 2 * time.Second, LagTolerance: time.Second, MaxRuns: 16}
}

func (c *ShardsConfig) validate() []error {
	var errs []error
	if !(c.RateTolerance > 0 && c.RateTolerance < 1) {
		errs = append(errs, fmt.Errorf("shards.rate_tolerance: %v must be between 0 and 1 (exclusive), e.g. 0.05", c.RateTolerance))
	}
	if c.StopTolerance <= 0 {
		errs = append(errs, fmt.Errorf("shards.stop_tolerance: %v must be positive", c.StopTolerance))
	}
	if c.LagTolerance <= 0 {
		errs = append(errs, fmt.Errorf("shards.lag_tolerance: %v must be positive", c.LagTolerance))
	}
	if c.MaxRuns < 1 || c.MaxRuns > 1024 {
		errs = append(errs, fmt.Errorf("shards.max_runs: %d must be 1 to 1024", c.MaxRuns))
	}
	return errs
}

// Metrics llm_loadgen emits per shard about its scheduler.
const (
	metricScheduleLag     = genai.MetricLoadgenScheduleLag
	metricScheduleSkipped = genai.MetricLoadgenScheduleSkipped
)

// maxShards bounds the shard indexes remembered per run.
const maxShards = 4096

// shardState is what one shard of a run contributed.
type shardState struct {
	index              int
	requests, errors   int64
	firstStart         int64 // unix nanos
	lastStart, lastEnd int64
	lastSeen           time.Time // wall clock of the last data
	lag                []bucket  // cumulative schedule-lag histogram
	lagCount, lagMax   float64
	hasLagMax          bool
	skipped            float64
}

// distState follows the shards of one run.
type distState struct {
	counts map[int]bool // shard.count values seen
	shards map[int]*shardState
}

// shardOf returns the shard a resource names, nil when it names none.
func (s *state) shardOf(res pcommon.Map) *shardState {
	idx, ok := intAttr(res, genai.AttrLoadgenShardIndex)
	if !ok || idx < 0 || idx >= maxShards {
		return nil
	}
	if s.dist == nil {
		s.dist = &distState{counts: map[int]bool{}, shards: map[int]*shardState{}}
	}
	if n, ok := intAttr(res, genai.AttrLoadgenShardCount); ok && n > 0 && n <= maxShards && len(s.dist.counts) < 16 {
		s.dist.counts[int(n)] = true
	}
	sh, ok := s.dist.shards[int(idx)]
	if !ok {
		sh = &shardState{index: int(idx), firstStart: math.MaxInt64}
		s.dist.shards[int(idx)] = sh
	}
	sh.lastSeen = s.now()
	return sh
}

// addSpan counts a request span of the shard; failed is the span's
// genai.SpanFacts.Failed.
func (sh *shardState) addSpan(sp ptrace.Span, failed bool) {
	start, end := int64(sp.StartTimestamp()), int64(sp.EndTimestamp())
	sh.requests++
	if failed {
		sh.errors++
	}
	sh.firstStart = min(sh.firstStart, start)
	sh.lastStart = max(sh.lastStart, start)
	sh.lastEnd = max(sh.lastEnd, end)
}

// consumeScheduleMetric takes llm_loadgen's schedule metrics of a shard; it
// reports false for every other metric.
func (s *state) consumeScheduleMetric(m pmetric.Metric, res pcommon.Map, out map[string]int64) bool {
	name := m.Name()
	if name != metricScheduleLag && name != metricScheduleSkipped {
		return false
	}
	sh := s.shardOf(res)
	if sh == nil {
		out[pointNotUsed] += countPoints(m)
		return true
	}
	switch {
	case name == metricScheduleLag && m.Type() == pmetric.MetricTypeHistogram:
		out[pointUsed] += sh.addLag(m.Histogram())
	case name == metricScheduleSkipped && m.Type() == pmetric.MetricTypeSum:
		out[pointUsed] += sh.addSkipped(m.Sum())
	default:
		out[pointWrongType] += countPoints(m)
	}
	return true
}

// addLag takes the points of the schedule-lag histogram and returns their
// number.
func (sh *shardState) addLag(h pmetric.Histogram) int64 {
	delta := h.AggregationTemporality() == pmetric.AggregationTemporalityDelta
	for i := 0; i < h.DataPoints().Len(); i++ {
		dp := h.DataPoints().At(i)
		bs := explicitBuckets(dp)
		if delta && sameBounds(sh.lag, bs) {
			for j := range bs {
				sh.lag[j].n += bs[j].n
			}
			sh.lagCount += float64(dp.Count())
		} else {
			sh.lag, sh.lagCount = bs, float64(dp.Count())
		}
		if dp.HasMax() {
			if delta {
				sh.lagMax = max(sh.lagMax, dp.Max())
			} else {
				sh.lagMax = dp.Max()
			}
			sh.hasLagMax = true
		}
	}
	return int64(h.DataPoints().Len())
}

// addSkipped takes the points of the skipped-sends sum and returns their
// number.
func (sh *shardState) addSkipped(sum pmetric.Sum) int64 {
	delta := sum.AggregationTemporality() == pmetric.AggregationTemporalityDelta
	for i := 0; i < sum.DataPoints().Len(); i++ {
		v := pointValue(sum.DataPoints().At(i))
		if delta {
			sh.skipped += v
		} else {
			sh.skipped = v
		}
	}
	return int64(sum.DataPoints().Len())
}

// lagP99 is the upper bound of the bucket holding the 99th percentile of the
// schedule lag (never above the exact max when it is known).
func (sh *shardState) lagP99() (float64, bool) {
	if sh.lagCount <= 0 {
		return 0, false
	}
	rank, cum := 0.99*sh.lagCount, 0.0
	for _, b := range sh.lag {
		cum += b.n
		if cum >= rank {
			v := b.hi
			if math.IsInf(v, 1) {
				v = b.lo
			}
			if sh.hasLagMax {
				v = math.Min(v, sh.lagMax)
			}
			return v, true
		}
	}
	return sh.lagMax, sh.hasLagMax
}

// ShardReport is the per-shard view of a distributed run.
type ShardReport struct {
	// Expected is the shard count the shards declared (the largest, when
	// they disagree); Seen the number of distinct shard indexes with data.
	Expected int   `json:"expected"`
	Seen     int   `json:"seen"`
	Missing  []int `json:"missing"`
	// AchievedRPS is the merged request rate: (requests − 1) / (last start −
	// first start) over every shard's requests.
	AchievedRPS float64    `json:"achieved_rps"`
	Requests    int64      `json:"requests"`
	WindowS     float64    `json:"window_s"`
	Tolerances  Tolerances `json:"tolerances"`
	Shards      []ShardRow `json:"shards"`
	Warnings    []string   `json:"warnings"`
}

// Tolerances are the limits the shard checks applied.
type Tolerances struct {
	Rate  float64 `json:"rate"`
	StopS float64 `json:"stop_s"`
	LagS  float64 `json:"lag_s"`
}

// ShardRow is one shard.
type ShardRow struct {
	Index       int      `json:"index"`
	Requests    int64    `json:"requests"`
	Errors      int64    `json:"errors"`
	AchievedRPS float64  `json:"achieved_rps"`
	ShareRPS    float64  `json:"share_rps"`
	Deviation   float64  `json:"deviation"`
	LagP99S     *float64 `json:"schedule_lag_p99_s"`
	LagMaxS     *float64 `json:"schedule_lag_max_s"`
	Skipped     int64    `json:"skipped"`
	FirstS      float64  `json:"first_request_s"`
	LastS       float64  `json:"last_request_s"`
	LastSeen    string   `json:"last_seen"`
	Status      string   `json:"status"`
}

// Shard statuses.
const (
	shardOK           = "ok"
	shardMissing      = "missing"
	shardStoppedEarly = "stopped_early"
	shardRateOff      = "rate_off"
	shardLagging      = "lagging"
)

// shardReport builds the shard section, nil when no data named a shard.
func (s *state) shardReport() *ShardReport {
	d := s.dist
	if d == nil || len(d.shards) == 0 {
		return nil
	}
	c := s.cfg.Shards
	rep := &ShardReport{Tolerances: Tolerances{Rate: c.RateTolerance, StopS: c.StopTolerance.Seconds(), LagS: c.LagTolerance.Seconds()}}
	expectShardCount(rep, d.counts)
	idx, w := measureShards(rep, d.shards)
	j := &shardJudge{rep: rep, c: c, w: w}
	seen := map[int]bool{}
	for _, i := range idx {
		seen[i] = true
		rep.Shards = append(rep.Shards, j.row(i, d.shards[i]))
	}
	addMissingShards(rep, seen)
	if rep.Warnings == nil {
		rep.Warnings = []string{}
	}
	return rep
}

// expectShardCount takes the expected shard count from the shard.count
// values seen, and warns when the shards disagree on it.
func expectShardCount(rep *ShardReport, declared map[int]bool) {
	counts := make([]int, 0, len(declared))
	for n := range declared {
		counts = append(counts, n)
		rep.Expected = max(rep.Expected, n)
	}
	sort.Ints(counts)
	if len(counts) > 1 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("shards disagree on shard.count: %s", joinInts(counts)))
	}
}

// shardWindow is the stretch of the run the shards' requests started in.
type shardWindow struct {
	first, last int64   // earliest and latest request start over all shards
	window      float64 // last − first in seconds; 0 when not positive
	median      float64 // the median request count of shards with requests
}

// measureShards totals the shards into rep and returns their indexes in
// order and the window their requests started in.
func measureShards(rep *ShardReport, shards map[int]*shardState) ([]int, shardWindow) {
	idx := make([]int, 0, len(shards))
	w := shardWindow{first: int64(math.MaxInt64)}
	var withRequests []float64
	for i, sh := range shards {
		idx = append(idx, i)
		rep.Expected = max(rep.Expected, i+1)
		rep.Requests += sh.requests
		if sh.requests > 0 {
			w.first, w.last = min(w.first, sh.firstStart), max(w.last, sh.lastStart)
			withRequests = append(withRequests, float64(sh.requests))
		}
	}
	sort.Ints(idx)
	rep.Seen = len(idx)
	if w.last > w.first {
		w.window = float64(w.last-w.first) / 1e9
		rep.WindowS = round(w.window)
		rep.AchievedRPS = round(float64(rep.Requests-1) / w.window)
	}
	w.median = medianOf(withRequests)
	return idx, w
}

// shardJudge checks each shard against the run, adding a warning to rep for
// each way a shard is off.
type shardJudge struct {
	rep *ShardReport
	c   ShardsConfig
	w   shardWindow
}

// row is the row of shard i, its status the checks it failed.
func (j *shardJudge) row(i int, sh *shardState) ShardRow {
	row := ShardRow{Index: i, Requests: sh.requests, Errors: sh.errors, Skipped: int64(math.Round(sh.skipped)),
		LastSeen: sh.lastSeen.UTC().Format(time.RFC3339Nano)}
	var flags []string
	if j.w.window > 0 {
		row.AchievedRPS = round(float64(sh.requests) / j.w.window)
		row.ShareRPS = round(j.w.median / j.w.window)
	}
	if j.stoppedEarly(&row, i, sh) {
		flags = append(flags, shardStoppedEarly)
	}
	if j.rateOff(&row, i, sh) {
		flags = append(flags, shardRateOff)
	}
	if j.lagging(&row, i, sh) {
		flags = append(flags, shardLagging)
	}
	row.Status = shardOK
	if len(flags) > 0 {
		row.Status = strings.Join(flags, ",")
	}
	return row
}

// stoppedEarly fills the shard's first and last start and reports whether
// its last request started too long before the run's last.
func (j *shardJudge) stoppedEarly(row *ShardRow, i int, sh *shardState) bool {
	if sh.requests <= 0 {
		return false
	}
	first, last := j.w.first, j.w.last
	row.FirstS = round(float64(sh.firstStart-first) / 1e9)
	row.LastS = round(float64(sh.lastStart-first) / 1e9)
	gap := 0.0
	if sh.requests > 1 {
		gap = float64(sh.lastStart-sh.firstStart) / 1e9 / float64(sh.requests-1)
	}
	early := float64(last-sh.lastStart) / 1e9
	tol := math.Max(j.c.StopTolerance.Seconds(), 3*gap)
	if early > tol {
		j.rep.Warnings = append(j.rep.Warnings, fmt.Sprintf("shard %d: stopped early: its last request started %.1f s before the run's last (tolerance %.1f s)", i, early, tol))
		return true
	}
	return false
}

// rateOff fills the shard's deviation from the median shard and reports
// whether it disagrees with the others beyond tolerance and noise.
func (j *shardJudge) rateOff(row *ShardRow, i int, sh *shardState) bool {
	median, c := j.w.median, j.c
	if median <= 0 {
		return false
	}
	row.Deviation = round(float64(sh.requests)/median - 1)
	off := math.Abs(row.Deviation) > c.RateTolerance && math.Abs(float64(sh.requests)-median) > 3*math.Sqrt(median)
	if off {
		j.rep.Warnings = append(j.rep.Warnings, fmt.Sprintf("shard %d: %d requests, %+.1f %% off the median shard's %.0f (tolerance %g %%): it disagrees with the others",
			i, sh.requests, row.Deviation*100, median, c.RateTolerance*100))
	}
	return off
}

// lagging fills the shard's schedule lag and reports whether it lagged
// behind its schedule or skipped arrivals.
func (j *shardJudge) lagging(row *ShardRow, i int, sh *shardState) bool {
	if p99, ok := sh.lagP99(); ok {
		row.LagP99S = ptr(p99)
	}
	if sh.hasLagMax {
		row.LagMaxS = ptr(sh.lagMax)
	}
	lagTol := j.c.LagTolerance.Seconds()
	lagging := row.LagP99S != nil && *row.LagP99S > lagTol
	if !lagging && row.Skipped <= 0 {
		return false
	}
	msg := fmt.Sprintf("shard %d: lagging:", i)
	if lagging {
		msg += fmt.Sprintf(" schedule lag p99 %.3f s above %.3f s;", *row.LagP99S, lagTol)
	}
	if row.Skipped > 0 {
		msg += fmt.Sprintf(" %d scheduled requests skipped (started after start_at);", row.Skipped)
	}
	j.rep.Warnings = append(j.rep.Warnings, strings.TrimSuffix(msg, ";"))
	return true
}

// addMissingShards adds a row for each expected shard no data named, and a
// warning naming them.
func addMissingShards(rep *ShardReport, seen map[int]bool) {
	rep.Missing = []int{}
	for i := 0; i < rep.Expected; i++ {
		if !seen[i] {
			rep.Missing = append(rep.Missing, i)
			rep.Shards = append(rep.Shards, ShardRow{Index: i, Status: shardMissing})
		}
	}
	sort.Slice(rep.Shards, func(a, b int) bool { return rep.Shards[a].Index < rep.Shards[b].Index })
	if len(rep.Missing) > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d of %d shards missing (no data with llm_loadgen.shard.index %s): the run offered less load than configured",
			len(rep.Missing), rep.Expected, joinInts(rep.Missing)))
	}
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// addShards puts the shard section into the report. A run whose shards
// warn cannot PASS: its verdict becomes at least WARN, since the load it
// measured is not the load it was configured to offer.
func (s *state) addShards(r *Report) {
	r.RunID = s.runID
	r.Shards = s.shardReport()
	if r.Shards != nil && len(r.Shards.Warnings) > 0 && r.Verdict == VerdictPass {
		r.Verdict = VerdictWarn
		r.Total.Verdict = VerdictWarn
	}
}
