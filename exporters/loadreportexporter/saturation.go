package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
)

// Saturation warnings: signs in the server's metrics and the client's
// timeline that the target ran out of capacity during the run. Each names
// when it started (seconds from the run's first request) and what the
// client saw then.

// SaturationConfig sets when a warning is given.
type SaturationConfig struct {
	// KVCacheUsage is the KV-cache usage (0..1) that counts as full.
	KVCacheUsage float64 `mapstructure:"kv_cache_usage"`
	// Sustained is how long the usage must stay at or above it.
	Sustained time.Duration `mapstructure:"sustained"`
	// Confidence of the slope tests (queue growth, over-saturation).
	Confidence float64 `mapstructure:"confidence"`
	// GPUMemoryGrowth warns of a GPU whose memory grows faster (MiB per
	// minute); 0 turns it off.
	GPUMemoryGrowth float64 `mapstructure:"gpu_memory_growth_mib_per_min"`
}

func (c SaturationConfig) validate() []error {
	var errs []error
	if !(c.KVCacheUsage > 0 && c.KVCacheUsage <= 1) {
		errs = append(errs, fmt.Errorf("saturation.kv_cache_usage: %v must be above 0 and at most 1 (a fraction of the KV cache)", c.KVCacheUsage))
	}
	if c.Sustained < 0 {
		errs = append(errs, fmt.Errorf("saturation.sustained: %v is negative", c.Sustained))
	}
	if !(c.Confidence >= 0.5 && c.Confidence < 1) {
		errs = append(errs, fmt.Errorf("saturation.confidence: %v must be at least 0.5 and below 1, e.g. 0.95", c.Confidence))
	}
	if c.GPUMemoryGrowth < 0 || math.IsNaN(c.GPUMemoryGrowth) {
		errs = append(errs, fmt.Errorf("saturation.gpu_memory_growth_mib_per_min: %v must be 0 (off) or positive", c.GPUMemoryGrowth))
	}
	return errs
}

// Warning kinds.
const (
	warnKVCacheFull    = "kv_cache_full"
	warnPreemptions    = "preemptions"
	warnQueueGrowing   = "queue_growing"
	warnOverSaturated  = "over_saturation"
	warnGPUMemoryGrows = "gpu_memory_growth"
)

// saturationWarnings looks for saturation in the server's metrics and the
// client's timeline; origin is the run's first request (unix ns).
func (s *state) saturationWarnings(r *Report, origin int64) []SaturationWarning {
	cfg := s.cfg.Saturation
	var out []SaturationWarning
	if ss := s.server; ss != nil {
		out = append(out, ss.kvWarning(r, cfg, origin)...)
		out = append(out, ss.preemptionWarning(r, origin)...)
		out = append(out, ss.queueWarning(r, cfg, origin)...)
	}
	out = append(out, overSaturation(r, cfg)...)
	for _, g := range r.GPUs {
		if cfg.GPUMemoryGrowth > 0 && g.GrowthMiBPerMin != nil && *g.GrowthMiBPerMin >= cfg.GPUMemoryGrowth {
			out = append(out, SaturationWarning{Kind: warnGPUMemoryGrows,
				Message: fmt.Sprintf("GPU %s memory grew %s MiB/min over the run (warning at %s)", g.ID, humanfmt.Sig(*g.GrowthMiBPerMin), humanfmt.Sig(cfg.GPUMemoryGrowth))})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return startOf(out[i]) < startOf(out[j]) })
	return out
}

func startOf(w SaturationWarning) float64 {
	if w.StartedAtS == nil {
		return math.Inf(1)
	}
	return *w.StartedAtS
}

func offsetS(t, origin int64) *float64 {
	if origin == 0 {
		return nil
	}
	return ptr(math.Max(float64(t-origin)/1e9, 0))
}

// clientAt describes the client's TTFT (else E2E) p95 in the timeline point
// at offset s.
func clientAt(r *Report, s *float64) string {
	if s == nil {
		return ""
	}
	res := r.Timeline.ResolutionS
	for _, p := range r.Timeline.Points {
		if res > 0 && *s >= p.OffsetS && *s < p.OffsetS+res {
			switch {
			case p.TTFTP95 != nil:
				return fmt.Sprintf("; the client's TTFT p95 then: %s", humanfmt.Seconds(*p.TTFTP95))
			case p.E2EP95 != nil:
				return fmt.Sprintf("; the client's E2E p95 then: %s", humanfmt.Seconds(*p.E2EP95))
			}
		}
	}
	return ""
}

func (ss *serverState) kvWarning(r *Report, cfg SaturationConfig, origin int64) []SaturationWarning {
	g := ss.gauges[srvKVCache]
	if g == nil {
		return nil
	}
	var streak, total time.Duration
	var streakStart, first int64
	for i, p := range g.pts {
		if p.max < cfg.KVCacheUsage {
			streakStart = 0
			continue
		}
		if streakStart == 0 {
			streakStart = p.t
		}
		if i+1 < len(g.pts) {
			total += time.Duration(g.pts[i+1].t - p.t)
		}
		if d := time.Duration(p.t - streakStart); d >= cfg.Sustained && first == 0 {
			first, streak = streakStart, d
		}
	}
	if first == 0 {
		return nil
	}
	at := offsetS(first, origin)
	return []SaturationWarning{{Kind: warnKVCacheFull, StartedAtS: at,
		Message: fmt.Sprintf("KV-cache usage at or above %s for %s and more (%s in all)%s", humanfmt.Percent(cfg.KVCacheUsage),
			humanfmt.Seconds(streak.Seconds()), humanfmt.Seconds(total.Seconds()), clientAt(r, at))}}
}

func (ss *serverState) preemptionWarning(r *Report, origin int64) []SaturationWarning {
	var n float64
	var first int64
	for _, c := range ss.counters[srvPreemptions] {
		n += c.increase
		if c.firstRise != 0 && (first == 0 || c.firstRise < first) {
			first = c.firstRise
		}
	}
	if n <= 0 {
		return nil
	}
	at := offsetS(first, origin)
	return []SaturationWarning{{Kind: warnPreemptions, StartedAtS: at,
		Message: fmt.Sprintf("the server preempted %s requests (KV cache exhausted; they are recomputed)%s", humanfmt.Sig(n), clientAt(r, at))}}
}

// queueWarning: the waiting queue grows over the run (its slope above zero
// at the configured confidence, by one request or more).
func (ss *serverState) queueWarning(r *Report, cfg SaturationConfig, origin int64) []SaturationWarning {
	g := ss.gauges[srvWaiting]
	if g == nil || len(g.pts) < 4 {
		return nil
	}
	xs, ys := make([]float64, len(g.pts)), make([]float64, len(g.pts))
	var firstNonZero int64
	for i, p := range g.pts {
		xs[i], ys[i] = float64(p.t-g.pts[0].t)/1e9, p.v
		if p.v > 0 && firstNonZero == 0 {
			firstNonZero = p.t
		}
	}
	f, ok := servermetrics.FitSlope(xs, ys, cfg.Confidence)
	if !ok || !f.Rising(xs[len(xs)-1], 1) {
		return nil
	}
	at := offsetS(firstNonZero, origin)
	return []SaturationWarning{{Kind: warnQueueGrowing, StartedAtS: at,
		Message: fmt.Sprintf("the server's waiting queue grew by %s requests/s (±%s at %s confidence), to %s at the end%s",
			humanfmt.Sig(f.Slope), humanfmt.Sig(f.Margin), humanfmt.Percent(cfg.Confidence), humanfmt.Sig(g.pts[len(g.pts)-1].v), clientAt(r, at))}}
}

// overSaturation is the client-side test: concurrency and TTFT (else E2E)
// p50 both rise over the run's steady part, beyond their margins and by at
// least a tenth of their mean: more is sent than the target completes. The
// steady part starts once the first requests could have finished (the E2E
// p95 after the start: before it, concurrency climbs in any run) and ends
// before the last point that started requests (the drain).
func overSaturation(r *Report, cfg SaturationConfig) []SaturationWarning {
	xs, conc, lat := steadyPart(r)
	if len(xs) < 6 {
		return nil
	}
	fc, ok1 := servermetrics.FitSlope(xs, conc, cfg.Confidence)
	fl, ok2 := servermetrics.FitSlope(xs, lat, cfg.Confidence)
	if !ok1 || !ok2 {
		return nil
	}
	span := xs[len(xs)-1] - xs[0]
	if !fc.Rising(span, meanOf(conc)/10) || !fl.Rising(span, meanOf(lat)/10) {
		return nil
	}
	// It started where concurrency first rose by a tenth of its rise.
	at := ptr(xs[0])
	for i, c := range conc {
		if c-conc[0] > fc.Slope*span/10 {
			at = ptr(xs[i])
			break
		}
	}
	return []SaturationWarning{{Kind: warnOverSaturated, StartedAtS: at,
		Message: fmt.Sprintf("over-saturated: concurrency rose %s/s and latency p50 %s/s over the run (both beyond their %s margins); the target completes less than is sent",
			humanfmt.Sig(fc.Slope), humanfmt.Seconds(fl.Slope), humanfmt.Percent(cfg.Confidence))}}
}

// steadyPart is the offsets, concurrency and latency p50 of the timeline
// points in the run's steady part (see overSaturation) that have a latency.
func steadyPart(r *Report) (xs, conc, lat []float64) {
	warmup := 0.0
	if r.Total.E2E != nil {
		warmup = r.Total.E2E.P95
	}
	last := -1
	for i, p := range r.Timeline.Points {
		if p.Started > 0 {
			last = i
		}
	}
	for i, p := range r.Timeline.Points {
		l := p.TTFTP50
		if l == nil {
			l = p.E2EP50
		}
		if l == nil || i >= last || p.OffsetS < warmup {
			continue
		}
		xs, conc, lat = append(xs, p.OffsetS), append(conc, p.Concurrency), append(lat, *l)
	}
	return xs, conc, lat
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
