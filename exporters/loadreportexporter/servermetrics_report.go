package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"math"
	"sort"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
)

// serverMetricsReport summarizes the server's metrics over the run; nil
// when none arrived. origin is the run's first request (unix ns; 0: none).
func (s *state) serverMetricsReport(r *Report, origin int64) *ServerMetrics {
	ss := s.server
	if ss == nil || ss.server == "" {
		return nil
	}
	out := &ServerMetrics{Server: ss.server, Names: ss.names, Counters: map[string]float64{}}
	if origin == 0 {
		origin = ss.first
	}
	out.FirstScrapeS, out.LastScrapeS = offsetS(ss.first, origin), offsetS(ss.last, origin)
	for _, role := range servermetrics.GaugeRoles {
		if g := ss.gauges[role]; g != nil && len(g.pts) > 0 {
			out.Gauges = append(out.Gauges, g.summary(role, s.cfg.Saturation.Confidence))
		}
	}
	ss.addCounterIncreases(out)
	if q, ok := out.Counters[srvPrefixQueries]; ok && q > 0 {
		out.PrefixCacheHitRate = ptr(out.Counters[srvPrefixHits] / q)
	}
	for _, role := range servermetrics.HistogramRoles {
		if h := ss.histogramSummary(role); h != nil {
			h.Client = clientLatency(r.Total, role)
			out.Histograms = append(out.Histograms, *h)
		}
	}
	out.Timeline = ss.timeline(origin)
	return out
}

// addCounterIncreases sets each counter role's increase over the run,
// summed over its series.
func (ss *serverState) addCounterIncreases(out *ServerMetrics) {
	for _, role := range servermetrics.CounterRoles {
		if series, ok := ss.counters[role]; ok {
			v := 0.0
			for _, c := range series {
				v += c.increase
			}
			out.Counters[role] = round(v)
		}
	}
}

func (g *gaugeSeries) summary(role string, confidence float64) GaugeSummary {
	sum, mx, n := 0.0, math.Inf(-1), 0.0
	xs, ys := make([]float64, len(g.pts)), make([]float64, len(g.pts))
	for i, p := range g.pts {
		sum += p.v * p.n
		n += p.n
		mx = math.Max(mx, p.max)
		xs[i], ys[i] = float64(p.t-g.pts[0].t)/1e9, p.v
	}
	out := GaugeSummary{Role: role, Samples: int64(n), Mean: round(sum / n), Max: round(mx), Last: round(g.pts[len(g.pts)-1].v)}
	if f, ok := servermetrics.FitSlope(xs, ys, confidence); ok {
		out.SlopePerS, out.SlopeMargin = ptr(f.Slope), ptr(f.Margin)
	}
	return out
}

// histogramSummary is a histogram role's increase over the run, summed over
// its series, with percentiles interpolated within buckets (as PromQL's
// histogram_quantile does).
func (ss *serverState) histogramSummary(role string) *ServerHistogram {
	var total []bucket
	sum, n := 0.0, 0.0
	for _, hs := range ss.hists[role] {
		d := make([]bucket, len(hs.last))
		for i, b := range hs.last {
			d[i] = bucket{lo: b.lo, hi: b.hi, n: b.n - hs.first[i].n}
		}
		if total == nil {
			total = d
		} else if sameBounds(total, d) {
			for i := range d {
				total[i].n += d[i].n
			}
		} else {
			continue // series with other buckets are left out of the sum
		}
		sum += hs.lastSum - hs.firstSum
		n += hs.lastN - hs.firstN
	}
	if n <= 0 {
		return nil
	}
	return &ServerHistogram{Role: role, Name: ss.names[role], Count: round(n), Mean: round(sum / n),
		P50: round(bucketQuantile(total, 0.50)), P95: round(bucketQuantile(total, 0.95)), P99: round(bucketQuantile(total, 0.99))}
}

// bucketQuantile interpolates linearly within the bucket that holds rank
// q·n; in the overflow bucket it answers the highest finite bound.
func bucketQuantile(bs []bucket, q float64) float64 {
	n := 0.0
	for _, b := range bs {
		n += b.n
	}
	if n <= 0 {
		return math.NaN()
	}
	rank, seen := q*n, 0.0
	for _, b := range bs {
		if b.n <= 0 || seen+b.n < rank {
			seen += b.n
			continue
		}
		lo := b.lo
		if math.IsInf(lo, -1) {
			lo = 0
		}
		if math.IsInf(b.hi, 1) {
			return lo
		}
		return lo + (b.hi-lo)*(rank-seen)/b.n
	}
	return bs[len(bs)-1].lo
}

// clientLatency is the client's distribution of the quantity a server
// histogram measures, for the side-by-side table.
func clientLatency(total Row, role string) *Latency {
	switch role {
	case srvTTFT:
		return total.TTFT
	case srvITL:
		return total.ITL
	case srvE2E:
		return total.E2E
	}
	return nil
}

// timeline is the gauges on one time axis, seconds from origin.
func (ss *serverState) timeline(origin int64) []ServerPoint {
	byT := map[int64]*ServerPoint{}
	for _, role := range []string{srvKVCache, srvRunning, srvWaiting} {
		g := ss.gauges[role]
		if g == nil {
			continue
		}
		for _, p := range g.pts {
			sp := byT[p.t]
			if sp == nil {
				sp = &ServerPoint{OffsetS: round(float64(p.t-origin) / 1e9)}
				byT[p.t] = sp
			}
			switch role {
			case srvKVCache:
				sp.KVCacheUsage = ptr(p.v)
			case srvRunning:
				sp.Running = ptr(p.v)
			case srvWaiting:
				sp.Waiting = ptr(p.v)
			}
		}
	}
	out := make([]ServerPoint, 0, len(byT))
	for _, p := range byT {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OffsetS < out[j].OffsetS })
	return out
}

// serverGaugeChart draws KV-cache usage (in %) and the running and waiting
// requests over the run.
func serverGaugeChart(sv *ServerMetrics) string {
	kv := series{name: "KV-cache usage (%)", color: palette[1]}
	run := series{name: "running", color: palette[0]}
	wait := series{name: "waiting", color: palette[3], dashed: true}
	for _, p := range sv.Timeline {
		kv.points = append(kv.points, xy{p.OffsetS, nanIfNil(p.KVCacheUsage) * 100})
		run.points = append(run.points, xy{p.OffsetS, nanIfNil(p.Running)})
		wait.points = append(wait.points, xy{p.OffsetS, nanIfNil(p.Waiting)})
	}
	var ss []series
	for _, s := range []series{kv, run, wait} {
		for _, p := range s.points {
			if !math.IsNaN(p.y) {
				ss = append(ss, s)
				break
			}
		}
	}
	return lineChart("server-gauges", "The server's KV cache and queue over the run ("+sv.Server+")", "seconds since the first request", "% / requests", ss, nil)
}

// amountsText is a role → amount map in name order, whole amounts without
// decimals: "generation_tokens 19,500; preemptions 10".
func amountsText(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		s := humanfmt.Sig(v)
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			s = humanfmt.Int(int64(v))
		}
		parts[i] = k + " " + s
	}
	return strings.Join(parts, "; ")
}
