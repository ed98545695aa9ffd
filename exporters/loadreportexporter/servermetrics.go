package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
)

// The inference server's own metrics during the run: a scrape of its
// /metrics (the prometheus receiver) read by the names of
// internal/servermetrics' table, one per server. Gauges (KV-cache usage,
// running and waiting requests) are kept as a bounded series over time;
// counters and histograms as the increase from the first scrape to the last,
// per series, so that a server that ran before the test counts only the
// test.

// Server metric roles (servermetrics.yaml).
const (
	srvKVCache       = servermetrics.KVCache
	srvRunning       = servermetrics.Running
	srvWaiting       = servermetrics.Waiting
	srvPrefixHitRate = servermetrics.PrefixHitRate
	srvPreemptions   = servermetrics.Preemptions
	srvPrefixQueries = servermetrics.PrefixQueries
	srvPrefixHits    = servermetrics.PrefixHits
	srvPromptTokens  = servermetrics.PromptTokens
	srvGenTokens     = servermetrics.GenTokens
	srvTTFT          = servermetrics.TTFT
	srvITL           = servermetrics.ITL
	srvE2E           = servermetrics.E2E
	srvQueueTime     = servermetrics.QueueTime
	srvPrefillTime   = servermetrics.PrefillTime
	srvDecodeTime    = servermetrics.DecodeTime
)

// serverState is what one run learnt from the server's metrics.
type serverState struct {
	server   string            // the first server whose metric arrived
	rank     map[string]int    // role → rank of the name in use
	names    map[string]string // role → the name in use
	gauges   map[string]*gaugeSeries
	counters map[string]map[string]*counterSeries // role → series id →
	hists    map[string]map[string]*histSeries
	limit    int // points per gauge series
	// first and last are the times of the first and the latest scrape
	// (unix ns): counters and histograms count between them.
	first, last int64
}

// saw notes a scrape at t.
func (ss *serverState) saw(t int64) {
	if t <= 0 {
		return
	}
	if ss.first == 0 || t < ss.first {
		ss.first = t
	}
	ss.last = max(ss.last, t)
}

func newServerState(maxPoints int) *serverState {
	return &serverState{rank: map[string]int{}, names: map[string]string{}, gauges: map[string]*gaugeSeries{},
		counters: map[string]map[string]*counterSeries{}, hists: map[string]map[string]*histSeries{}, limit: maxPoints}
}

// gaugeSeries is a gauge role over time, one sample per scrape (the sum
// over the scrape's series, the maximum for KV-cache usage), halved in
// resolution whenever it outgrows its limit.
type gaugeSeries struct {
	pts []gaugePoint
}

type gaugePoint struct {
	t      int64 // unix ns
	v, max float64
	n      float64 // samples merged into the point
}

func (g *gaugeSeries) add(t int64, v float64, limit int) {
	if n := len(g.pts); n > 0 && g.pts[n-1].t == t {
		return // a second metric of the same role in the same scrape
	}
	g.pts = append(g.pts, gaugePoint{t: t, v: v, max: v, n: 1})
	if len(g.pts) > limit {
		half := g.pts[:0]
		for i := 0; i+1 < len(g.pts); i += 2 {
			a, b := g.pts[i], g.pts[i+1]
			half = append(half, gaugePoint{t: a.t, v: (a.v*a.n + b.v*b.n) / (a.n + b.n), max: math.Max(a.max, b.max), n: a.n + b.n})
		}
		if len(g.pts)%2 == 1 {
			half = append(half, g.pts[len(g.pts)-1])
		}
		g.pts = half
	}
}

// counterSeries is one counter series' increase since its first scrape,
// across resets.
type counterSeries struct {
	last, increase float64
	firstRise      int64 // when it first went up (unix ns; 0: not yet)
}

func (c *counterSeries) add(t int64, v float64, first bool) {
	switch {
	case first:
	case v >= c.last:
		if v > c.last && c.firstRise == 0 {
			c.firstRise = t
		}
		c.increase += v - c.last
	default: // a reset: the new value is all new
		c.increase += v
	}
	c.last = v
}

// histSeries is one histogram series: its first scrape and its latest.
type histSeries struct {
	first, last       []bucket
	firstSum, lastSum float64
	firstN, lastN     float64
}

// consumeServerMetric takes m when its name is in the server table and
// reports whether it did.
func (s *state) consumeServerMetric(m pmetric.Metric, out map[string]int64) bool {
	def, ok := servermetrics.Lookup(m.Name())
	if !ok {
		return false
	}
	n := countPoints(m)
	ss := s.serverState()
	if ss.server == "" {
		ss.server = def.Server
	}
	if r, seen := ss.rank[def.Role]; def.Server != ss.server || (seen && def.Rank > r) {
		out[pointNotUsed] += n // another server's name, or an older name next to a newer one
		return true
	}
	if r, seen := ss.rank[def.Role]; !seen || def.Rank < r {
		ss.rank[def.Role], ss.names[def.Role] = def.Rank, m.Name()
		delete(ss.gauges, def.Role)
		delete(ss.counters, def.Role)
		delete(ss.hists, def.Role)
	}
	for _, t := range pointTimes(m) {
		ss.saw(t)
	}
	var outcome string
	switch {
	case def.Kind == servermetrics.Gauge && (m.Type() == pmetric.MetricTypeGauge || m.Type() == pmetric.MetricTypeSum):
		outcome = ss.gauge(def, numberPoints(m))
	case def.Kind == servermetrics.Counter && m.Type() == pmetric.MetricTypeSum:
		outcome = ss.counter(def, m.Sum().DataPoints(), m.Sum().AggregationTemporality())
	case def.Kind == servermetrics.Counter && m.Type() == pmetric.MetricTypeHistogram:
		outcome = ss.counter(def, histogramSums(m.Histogram()), m.Histogram().AggregationTemporality())
	case def.Kind == servermetrics.Histogram && m.Type() == pmetric.MetricTypeHistogram:
		outcome = ss.histogram(def, m.Histogram())
	default:
		outcome = pointWrongType
	}
	out[outcome] += n
	return true
}

func (s *state) serverState() *serverState {
	if s.server == nil {
		s.server = newServerState(s.cfg.Limits.MaxTimelinePoints)
	}
	return s.server
}

// pointTimes is the first and last timestamp of m's points (one scrape
// gives them all the same).
func pointTimes(m pmetric.Metric) [2]int64 {
	var first, last pcommon.Timestamp
	note := func(t pcommon.Timestamp) {
		if first == 0 {
			first = t
		}
		last = t
	}
	switch m.Type() {
	case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
		dps := numberPoints(m)
		for i := 0; i < dps.Len(); i++ {
			note(dps.At(i).Timestamp())
		}
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			note(dps.At(i).Timestamp())
		}
	}
	return [2]int64{int64(first), int64(last)}
}

func numberPoints(m pmetric.Metric) pmetric.NumberDataPointSlice {
	if m.Type() == pmetric.MetricTypeSum {
		return m.Sum().DataPoints()
	}
	return m.Gauge().DataPoints()
}

// gauge adds one scrape of a gauge role: the sum over its series (the
// maximum for KV-cache usage and hit rates, which are fractions).
func (ss *serverState) gauge(def servermetrics.Def, dps pmetric.NumberDataPointSlice) string {
	var t int64
	v, seen := 0.0, false
	fraction := servermetrics.IsFraction(def.Role)
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		x := pointValue(dp) * def.Scale
		if math.IsNaN(x) || math.IsInf(x, 0) || (fraction && x < 0) {
			continue // vLLM V0 prints a hit rate of -1 with prefix caching off
		}
		seen = true
		if fraction {
			v = math.Max(v, x)
		} else {
			v += x
		}
		t = max(t, int64(dp.Timestamp()))
	}
	if !seen {
		return pointUsed // read: the server says there is no value
	}
	g := ss.gauges[def.Role]
	if g == nil {
		g = &gaugeSeries{}
		ss.gauges[def.Role] = g
	}
	g.add(t, v, ss.limit)
	return pointUsed
}

// histogramSums is a histogram's sums as counter points (TGI's tokens per
// request: the sum is the tokens so far).
func histogramSums(h pmetric.Histogram) pmetric.NumberDataPointSlice {
	out := pmetric.NewNumberDataPointSlice()
	dps := h.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := out.AppendEmpty()
		dp.SetTimestamp(dps.At(i).Timestamp())
		dp.SetDoubleValue(dps.At(i).Sum())
		dps.At(i).Attributes().CopyTo(dp.Attributes())
	}
	return out
}

func (ss *serverState) counter(def servermetrics.Def, dps pmetric.NumberDataPointSlice, temporality pmetric.AggregationTemporality) string {
	series := ss.counters[def.Role]
	if series == nil {
		series = map[string]*counterSeries{}
		ss.counters[def.Role] = series
	}
	delta := temporality == pmetric.AggregationTemporalityDelta
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		v := pointValue(dp) * def.Scale
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		id := attrsID(dp.Attributes())
		c, seen := series[id]
		if !seen {
			c = &counterSeries{}
			series[id] = c
		}
		if delta {
			c.add(int64(dp.Timestamp()), c.last+v, !seen && v == 0)
			continue
		}
		c.add(int64(dp.Timestamp()), v, !seen)
	}
	return pointUsed
}

func (ss *serverState) histogram(def servermetrics.Def, h pmetric.Histogram) string {
	if h.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
		return pointNoTemporality // servers' /metrics are cumulative
	}
	series := ss.hists[def.Role]
	if series == nil {
		series = map[string]*histSeries{}
		ss.hists[def.Role] = series
	}
	dps := h.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		bs := explicitBuckets(dp)
		for j := range bs {
			bs[j].lo *= def.Scale
			bs[j].hi *= def.Scale
		}
		id := attrsID(dp.Attributes())
		hs := series[id]
		n, sum := float64(dp.Count()), dp.Sum()*def.Scale
		switch {
		case hs == nil:
			series[id] = &histSeries{first: bs, last: bs, firstSum: sum, lastSum: sum, firstN: n, lastN: n}
		case n < hs.lastN || !sameBounds(bs, hs.first):
			// A reset or new buckets: from here on, this is the series.
			series[id] = &histSeries{first: zeroed(bs), last: bs, lastSum: sum, lastN: n}
		default:
			hs.last, hs.lastSum, hs.lastN = bs, sum, n
		}
	}
	return pointUsed
}

func zeroed(bs []bucket) []bucket {
	out := make([]bucket, len(bs))
	for i, b := range bs {
		out[i] = bucket{lo: b.lo, hi: b.hi}
	}
	return out
}

// attrsID identifies a series by its attributes.
func attrsID(m pcommon.Map) string {
	var b strings.Builder
	for k, v := range m.All() {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v.AsString())
		b.WriteByte(0)
	}
	return b.String()
}
