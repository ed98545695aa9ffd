package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	_ "embed"
	"fmt"
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// The inference server's own metrics during the run: a scrape of its
// /metrics (the prometheus receiver) read by the names of
// servermetrics.yaml, one table per server. Gauges (KV-cache usage,
// running and waiting requests) are kept as a bounded series over time;
// counters and histograms as the increase from the first scrape to the last,
// per series, so that a server that ran before the test counts only the
// test.

// Server metric roles.
const (
	srvKVCache       = "kv_cache_usage"
	srvRunning       = "running"
	srvWaiting       = "waiting"
	srvPrefixHitRate = "prefix_hit_rate"
	srvPreemptions   = "preemptions"
	srvPrefixQueries = "prefix_queries"
	srvPrefixHits    = "prefix_hits"
	srvPromptTokens  = "prompt_tokens"
	srvGenTokens     = "generation_tokens"
	srvTTFT          = "ttft"
	srvITL           = "itl"
	srvE2E           = "e2e"
	srvQueueTime     = "queue_time"
	srvPrefillTime   = "prefill_time"
	srvDecodeTime    = "decode_time"
)

type srvKind uint8

const (
	srvGauge srvKind = iota + 1
	srvCounter
	srvHistogram
)

var serverRoleKinds = map[string]srvKind{
	srvKVCache: srvGauge, srvRunning: srvGauge, srvWaiting: srvGauge, srvPrefixHitRate: srvGauge,
	srvPreemptions: srvCounter, srvPrefixQueries: srvCounter, srvPrefixHits: srvCounter, srvPromptTokens: srvCounter, srvGenTokens: srvCounter,
	srvTTFT: srvHistogram, srvITL: srvHistogram, srvE2E: srvHistogram, srvQueueTime: srvHistogram, srvPrefillTime: srvHistogram, srvDecodeTime: srvHistogram,
}

// Gauge roles in report order, and the histogram roles.
var (
	serverGaugeRoles     = []string{srvKVCache, srvRunning, srvWaiting, srvPrefixHitRate}
	serverCounterRoles   = []string{srvPreemptions, srvPrefixQueries, srvPrefixHits, srvPromptTokens, srvGenTokens}
	serverHistogramRoles = []string{srvTTFT, srvITL, srvE2E, srvQueueTime, srvPrefillTime, srvDecodeTime}
)

//go:embed servermetrics.yaml
var serverMetricsYAML []byte

type serverTableFile struct {
	Servers []struct {
		Name       string                  `yaml:"name"`
		ModelLabel string                  `yaml:"model_label"`
		Roles      map[string][]scaledName `yaml:"roles"`
	} `yaml:"servers"`
}

// scaledName is a metric name with the factor to the role's unit: a plain
// string, or {name, scale}.
type scaledName struct {
	Name  string  `yaml:"name"`
	Scale float64 `yaml:"scale"`
}

func (n *scaledName) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		n.Name, n.Scale = v.Value, 1
		return nil
	}
	type plain scaledName
	p := plain{Scale: 1}
	if err := v.Decode(&p); err != nil {
		return err
	}
	*n = scaledName(p)
	return nil
}

// serverMetricDef is one name of the table.
type serverMetricDef struct {
	server, role string
	kind         srvKind
	rank         int // position among the role's names: the lowest present wins
	scale        float64
	name         string
}

// serverMetricNames indexes the table by metric name, without a counter's
// _total.
var serverMetricNames = mustServerTable(serverMetricsYAML)

func mustServerTable(data []byte) map[string]serverMetricDef {
	m, err := parseServerTable(data)
	if err != nil {
		panic(fmt.Sprintf("servermetrics.yaml: %v", err)) // embedded; checked by its test
	}
	return m
}

func parseServerTable(data []byte) (map[string]serverMetricDef, error) {
	var f serverTableFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	out := map[string]serverMetricDef{}
	for _, s := range f.Servers {
		for role, names := range s.Roles {
			kind, ok := serverRoleKinds[role]
			if !ok {
				return nil, fmt.Errorf("server %s: unknown role %q", s.Name, role)
			}
			for i, n := range names {
				key := strings.TrimSuffix(n.Name, genai.PrometheusCounterSuffix)
				if _, dup := out[key]; dup {
					return nil, fmt.Errorf("server %s: %s is listed twice", s.Name, n.Name)
				}
				if !(n.Scale > 0) {
					return nil, fmt.Errorf("server %s: %s: scale must be positive", s.Name, n.Name)
				}
				out[key] = serverMetricDef{server: s.Name, role: role, kind: kind, rank: i, scale: n.Scale, name: n.Name}
			}
		}
	}
	return out, nil
}

func lookupServerMetric(name string) (serverMetricDef, bool) {
	d, ok := serverMetricNames[strings.TrimSuffix(name, genai.PrometheusCounterSuffix)]
	return d, ok
}

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
	def, ok := lookupServerMetric(m.Name())
	if !ok {
		return false
	}
	n := countPoints(m)
	ss := s.serverState()
	if ss.server == "" {
		ss.server = def.server
	}
	if r, seen := ss.rank[def.role]; def.server != ss.server || (seen && def.rank > r) {
		out[pointNotUsed] += n // another server's name, or an older name next to a newer one
		return true
	}
	if r, seen := ss.rank[def.role]; !seen || def.rank < r {
		ss.rank[def.role], ss.names[def.role] = def.rank, m.Name()
		delete(ss.gauges, def.role)
		delete(ss.counters, def.role)
		delete(ss.hists, def.role)
	}
	for _, t := range pointTimes(m) {
		ss.saw(t)
	}
	var outcome string
	switch {
	case def.kind == srvGauge && (m.Type() == pmetric.MetricTypeGauge || m.Type() == pmetric.MetricTypeSum):
		outcome = ss.gauge(def, numberPoints(m))
	case def.kind == srvCounter && m.Type() == pmetric.MetricTypeSum:
		outcome = ss.counter(def, m.Sum().DataPoints(), m.Sum().AggregationTemporality())
	case def.kind == srvCounter && m.Type() == pmetric.MetricTypeHistogram:
		outcome = ss.counter(def, histogramSums(m.Histogram()), m.Histogram().AggregationTemporality())
	case def.kind == srvHistogram && m.Type() == pmetric.MetricTypeHistogram:
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
func (ss *serverState) gauge(def serverMetricDef, dps pmetric.NumberDataPointSlice) string {
	var t int64
	v, seen := 0.0, false
	fraction := def.role == srvKVCache || def.role == srvPrefixHitRate
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		x := pointValue(dp) * def.scale
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
	g := ss.gauges[def.role]
	if g == nil {
		g = &gaugeSeries{}
		ss.gauges[def.role] = g
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

func (ss *serverState) counter(def serverMetricDef, dps pmetric.NumberDataPointSlice, temporality pmetric.AggregationTemporality) string {
	series := ss.counters[def.role]
	if series == nil {
		series = map[string]*counterSeries{}
		ss.counters[def.role] = series
	}
	delta := temporality == pmetric.AggregationTemporalityDelta
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		v := pointValue(dp) * def.scale
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

func (ss *serverState) histogram(def serverMetricDef, h pmetric.Histogram) string {
	if h.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
		return pointNoTemporality // servers' /metrics are cumulative
	}
	series := ss.hists[def.role]
	if series == nil {
		series = map[string]*histSeries{}
		ss.hists[def.role] = series
	}
	dps := h.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		bs := explicitBuckets(dp)
		for j := range bs {
			bs[j].lo *= def.scale
			bs[j].hi *= def.scale
		}
		id := attrsID(dp.Attributes())
		hs := series[id]
		n, sum := float64(dp.Count()), dp.Sum()*def.scale
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

// pointsOrNil is the series' points; nil for no series.
func (g *gaugeSeries) pointsOrNil() []gaugePoint {
	if g == nil {
		return nil
	}
	return g.pts
}
