package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"math"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Outcomes of a metric data point, counted in otelcol_load_report_metric_points.
const (
	pointUsed          = "used"
	pointNotUsed       = "not_used"       // a metric the report does not read
	pointSeriesLimit   = "series_limit"   // a new stream beyond limits.max_series
	pointWrongType     = "wrong_type"     // a known name with an unexpected instrument
	pointNoTemporality = "no_temporality" // a sum or histogram without temporality
)

// Roles of metric streams in the report.
const (
	roleE2E          = "e2e"
	roleTTFT         = "ttft"
	roleTPOT         = "tpot"
	roleRequests     = "requests"
	roleOutputTokens = "output_tokens"
	roleTokenUsage   = "token_usage"
	roleGoodput      = "goodput"
	roleConcurrency  = "concurrency"
	roleGuardRecv    = "guard_received"
	roleGuardDropped = "guard_dropped"
	roleGuardRefused = "guard_refused"
	roleGPUMemUsage  = "gpu_memory_usage"
	roleGPUMemLimit  = "gpu_memory_limit"
	roleGPUUtil      = "gpu_utilization"
	roleTargetRate   = "target_rate"
)

// metricRoles maps metric names to their role. GenAI names are those of
// llm_metrics (both convention targets); span_guard's counters appear with
// or without the _total suffix a Prometheus scrape adds; GPU names are the
// hw.gpu.* conventions.
var metricRoles = func() map[string]string {
	v141 := genai.ClientMetricsFor(genai.TargetV1_41, genai.OpChat)
	latest := genai.ClientMetricsFor(genai.TargetLatest, genai.OpChat)
	m := map[string]string{
		genai.MetricLLMRequests:        roleRequests,
		genai.MetricLLMOutputTokens:    roleOutputTokens,
		genai.MetricLLMGoodputRequests: roleGoodput,
		genai.MetricLLMConcurrency:     roleConcurrency,
		genai.MetricHWGPUMemoryUsage:   roleGPUMemUsage,
		genai.MetricHWGPUMemoryLimit:   roleGPUMemLimit,
		genai.MetricHWGPUUtilization:   roleGPUUtil,
	}
	for _, d := range []genai.ClientMetrics{v141, latest} {
		m[d.Duration.Name] = roleE2E
		m[d.TimeToFirstChunk.Name] = roleTTFT
		m[d.TimePerOutputChunk.Name] = roleTPOT
	}
	m[v141.TokenUsage.Name] = roleTokenUsage
	for name, role := range map[string]string{
		genai.SpanGuardMetricSpansReceived: roleGuardRecv,
		genai.SpanGuardMetricSpansDropped:  roleGuardDropped,
		genai.SpanGuardMetricSpansRefused:  roleGuardRefused,
	} {
		m[name] = role
		m[name+genai.PrometheusCounterSuffix] = role
	}
	return m
}()

// bucket is one histogram bucket (lo, hi] with a count.
type bucket struct {
	lo, hi float64
	n      float64
}

// stream is the remembered state of one metric stream: the latest value of a
// cumulative stream, or the sum of a delta stream.
type stream struct {
	role    string
	key     groupKey
	label   string // outcome / error.type / reason, by role
	value   float64
	buckets []bucket
	sum     float64
	count   float64
	start   int64
	last    int64
}

// gpuState summarizes one GPU over the run in O(1) memory: memory growth is
// the least-squares slope of usage over time.
type gpuState struct {
	id, name                string
	n                       float64
	st, sv, stt, stv        float64 // sums for the regression, t in seconds since t0
	t0                      int64
	first, last             float64
	firstT, lastT           int64
	peak, limit             float64
	utilSum, utilN, utilMax float64
}

func (g *gpuState) addMemory(t int64, v float64) {
	if g.n == 0 {
		g.t0, g.first, g.firstT = t, v, t
	}
	x := float64(t-g.t0) / 1e9
	g.n++
	g.st += x
	g.sv += v
	g.stt += x * x
	g.stv += x * v
	g.peak = max(g.peak, v)
	if t >= g.lastT {
		g.last, g.lastT = v, t
	}
}

// slope returns bytes per second, NaN with fewer than two distinct times.
func (g *gpuState) slope() float64 {
	den := g.n*g.stt - g.st*g.st
	if g.n < 2 || den <= 0 {
		return math.NaN()
	}
	return (g.n*g.stv - g.st*g.sv) / den
}

func streamID(name string, res, attrs pcommon.Map) string {
	var b strings.Builder
	b.WriteString(name)
	for _, m := range []pcommon.Map{res, attrs} {
		keys := make([]string, 0, m.Len())
		m.Range(func(k string, _ pcommon.Value) bool { keys = append(keys, k); return true })
		sort.Strings(keys)
		b.WriteByte('|')
		for _, k := range keys {
			v, _ := m.Get(k)
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(v.AsString())
			b.WriteByte(';')
		}
	}
	return b.String()
}

// consumeMetrics adds the data points of md and returns points by outcome.
func (s *state) consumeMetrics(md pmetric.Metrics) map[string]int64 {
	out := map[string]int64{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		res := rms.At(i).Resource().Attributes()
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				s.consumeMetric(ms.At(k), res, out)
			}
		}
	}
	return out
}

func countPoints(m pmetric.Metric) int64 {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return int64(m.Gauge().DataPoints().Len())
	case pmetric.MetricTypeSum:
		return int64(m.Sum().DataPoints().Len())
	case pmetric.MetricTypeHistogram:
		return int64(m.Histogram().DataPoints().Len())
	case pmetric.MetricTypeExponentialHistogram:
		return int64(m.ExponentialHistogram().DataPoints().Len())
	case pmetric.MetricTypeSummary:
		return int64(m.Summary().DataPoints().Len())
	}
	return 0
}

// consumeMetric routes one metric to the schedule, server or role readers
// and counts each of its points in out by what became of it.
func (s *state) consumeMetric(m pmetric.Metric, res pcommon.Map, out map[string]int64) {
	if s.consumeScheduleMetric(m, res, out) || s.consumeServerMetric(m, out) {
		return
	}
	role, ok := metricRoles[m.Name()]
	if !ok && slices.Contains(s.cfg.TargetRate.Metrics, m.Name()) {
		role, ok = roleTargetRate, true
	}
	if !ok {
		out[pointNotUsed] += countPoints(m)
		return
	}
	switch m.Type() {
	case pmetric.MetricTypeHistogram, pmetric.MetricTypeExponentialHistogram:
		s.consumeHistogramMetric(role, m, res, out)
	case pmetric.MetricTypeSum:
		s.consumeSum(role, m, res, out)
	case pmetric.MetricTypeGauge:
		for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
			out[s.numberPoint(role, m.Name(), res, m.Gauge().DataPoints().At(i), false)]++
		}
	default:
		out[pointWrongType] += countPoints(m)
	}
}

// consumeHistogramMetric reads an explicit or exponential histogram's
// points as buckets.
func (s *state) consumeHistogramMetric(role string, m pmetric.Metric, res pcommon.Map, out map[string]int64) {
	if m.Type() == pmetric.MetricTypeHistogram {
		dps := m.Histogram().DataPoints()
		s.histograms(role, m.Name(), res, m.Histogram().AggregationTemporality(), dps.Len(), func(i int) histPoint {
			dp := dps.At(i)
			return histPoint{dp.Attributes(), int64(dp.StartTimestamp()), int64(dp.Timestamp()), explicitBuckets(dp), dp.Sum(), float64(dp.Count())}
		}, out)
		return
	}
	dps := m.ExponentialHistogram().DataPoints()
	s.histograms(role, m.Name(), res, m.ExponentialHistogram().AggregationTemporality(), dps.Len(), func(i int) histPoint {
		dp := dps.At(i)
		return histPoint{dp.Attributes(), int64(dp.StartTimestamp()), int64(dp.Timestamp()), exponentialBuckets(dp), dp.Sum(), float64(dp.Count())}
	}, out)
}

// consumeSum reads a sum's points, delta or cumulative; a sum without a
// temporality cannot be read and its points are counted as such.
func (s *state) consumeSum(role string, m pmetric.Metric, res pcommon.Map, out map[string]int64) {
	sum := m.Sum()
	if sum.AggregationTemporality() == pmetric.AggregationTemporalityUnspecified {
		out[pointNoTemporality] += int64(sum.DataPoints().Len())
		return
	}
	delta := sum.AggregationTemporality() == pmetric.AggregationTemporalityDelta
	for i := 0; i < sum.DataPoints().Len(); i++ {
		out[s.numberPoint(role, m.Name(), res, sum.DataPoints().At(i), delta)]++
	}
}

// histPoint is an explicit or exponential histogram data point as buckets.
type histPoint struct {
	attrs      pcommon.Map
	start, ts  int64
	buckets    []bucket
	sum, count float64
}

// histograms adds n histogram points of one metric.
func (s *state) histograms(role, name string, res pcommon.Map, temporality pmetric.AggregationTemporality, n int,
	point func(int) histPoint, out map[string]int64,
) {
	if temporality == pmetric.AggregationTemporalityUnspecified {
		out[pointNoTemporality] += int64(n)
		return
	}
	delta := temporality == pmetric.AggregationTemporalityDelta
	for i := 0; i < n; i++ {
		out[s.histogramPoint(role, name, res, point(i), delta)]++
	}
}

func explicitBuckets(dp pmetric.HistogramDataPoint) []bucket {
	bounds := dp.ExplicitBounds().AsRaw()
	counts := dp.BucketCounts().AsRaw()
	bs := make([]bucket, 0, len(counts))
	for i, c := range counts {
		lo, hi := math.Inf(-1), math.Inf(1)
		if i > 0 && i-1 < len(bounds) {
			lo = bounds[i-1]
		}
		if i < len(bounds) {
			hi = bounds[i]
		}
		bs = append(bs, bucket{lo: lo, hi: hi, n: float64(c)})
	}
	return bs
}

func exponentialBuckets(dp pmetric.ExponentialHistogramDataPoint) []bucket {
	base := math.Pow(2, math.Pow(2, -float64(dp.Scale())))
	var bs []bucket
	if dp.ZeroCount() > 0 {
		bs = append(bs, bucket{lo: 0, hi: 0, n: float64(dp.ZeroCount())})
	}
	pos := dp.Positive()
	for i, c := range pos.BucketCounts().AsRaw() {
		if c == 0 {
			continue
		}
		idx := float64(int(pos.Offset()) + i)
		bs = append(bs, bucket{lo: math.Pow(base, idx), hi: math.Pow(base, idx+1), n: float64(c)})
	}
	return bs
}

// remember returns the stream for id, creating it unless limits.max_series is reached.
func (s *state) remember(id, role string, k groupKey, label string) *stream {
	if st, ok := s.streams[id]; ok {
		return st
	}
	if len(s.streams) >= s.cfg.Limits.MaxSeries {
		return nil
	}
	st := &stream{role: role, key: k, label: label}
	s.streams[id] = st
	return st
}

func (s *state) histogramPoint(role, name string, res pcommon.Map, p histPoint, delta bool) string {
	attrs, start, ts, bs, sum, count := p.attrs, p.start, p.ts, p.buckets, p.sum, p.count
	switch role {
	case roleE2E, roleTTFT, roleTPOT, roleTokenUsage:
	default:
		return pointWrongType
	}
	if !modelCallPoint(attrs) {
		return pointNotUsed
	}
	label := ""
	if role == roleTokenUsage {
		label = firstAttr([]string{genai.AttrTokenType}, attrs)
	}
	if role == roleE2E {
		label = firstAttr([]string{genai.AttrErrorType}, attrs)
	}
	st := s.remember(streamID(name, res, attrs), role, s.keyFor(attrs, res), label)
	if st == nil {
		return pointSeriesLimit
	}
	if delta && sameBounds(st.buckets, bs) {
		for i := range bs {
			st.buckets[i].n += bs[i].n
		}
		st.sum += sum
		st.count += count
	} else {
		st.buckets, st.sum, st.count = bs, sum, count
		if !delta || st.start == 0 {
			st.start = start
		}
	}
	if st.start == 0 || (start > 0 && start < st.start) {
		st.start = start
	}
	st.last = max(st.last, ts)
	return pointUsed
}

// modelCallPoint reports whether a GenAI data point is about model calls:
// points of tool, agent, retrieval or rerank operations are not requests to
// a model endpoint (as for spans). Points without an operation are kept.
func modelCallPoint(attrs pcommon.Map) bool {
	op := firstAttr([]string{genai.AttrOperationName}, attrs)
	return op == "" || isModelCall(op)
}

func sameBounds(a, b []bucket) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].lo != b[i].lo || a[i].hi != b[i].hi {
			return false
		}
	}
	return true
}

func pointValue(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

func (s *state) numberPoint(role, name string, res pcommon.Map, dp pmetric.NumberDataPoint, delta bool) string {
	attrs := dp.Attributes()
	v := pointValue(dp)
	ts := int64(dp.Timestamp())
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return pointWrongType
	}
	switch role {
	case roleGPUMemUsage, roleGPUMemLimit, roleGPUUtil:
		s.gpuPoint(role, res, attrs, ts, v)
		return pointUsed
	case roleTargetRate:
		if ts > 0 && v > 0 {
			p := s.timeline.at(ts)
			p.targetRate = max(p.targetRate, v)
		}
		return pointUsed
	case roleE2E, roleTTFT, roleTPOT, roleTokenUsage:
		return pointWrongType
	}
	switch role {
	case roleRequests, roleOutputTokens, roleGoodput, roleConcurrency:
		if !modelCallPoint(attrs) {
			return pointNotUsed
		}
	}
	st := s.remember(streamID(name, res, attrs), role, s.keyFor(attrs, res), streamLabel(role, attrs))
	if st == nil {
		return pointSeriesLimit
	}
	s.addPoint(st, role, v, delta)
	if start := int64(dp.StartTimestamp()); start > 0 && (st.start == 0 || start < st.start) {
		st.start = start
	}
	st.last = max(st.last, ts)
	return pointUsed
}

// streamLabel is what tells apart the streams of a role besides their
// group: the outcome and error type of request counts, the reason of span
// guard drops and refusals.
func streamLabel(role string, attrs pcommon.Map) string {
	switch role {
	case roleRequests:
		return firstAttr([]string{genai.AttrLLMOutcome}, attrs) + "|" + firstAttr([]string{genai.AttrErrorType}, attrs)
	case roleGuardDropped, roleGuardRefused:
		return firstAttr([]string{genai.AttrSpanGuardReason}, attrs)
	}
	return ""
}

// addPoint takes a point's value v into its stream: the highest and the
// mean of a concurrency gauge, the sum of deltas, the last cumulative
// value. Requests counted are arrivals.
func (s *state) addPoint(st *stream, role string, v float64, delta bool) {
	switch {
	case role == roleConcurrency:
		// A gauge: keep the highest value and the mean of the values seen.
		st.value = max(st.value, v)
		st.sum += v
		st.count++
	case delta:
		st.value += v
	default:
		if role == roleRequests && v > st.value {
			s.observeArrival()
		}
		st.value = v
	}
	if role == roleRequests && delta && v > 0 {
		s.observeArrival()
	}
}

func (s *state) gpuPoint(role string, res, attrs pcommon.Map, ts int64, v float64) {
	id := firstAttr([]string{genai.AttrHWID}, attrs, res)
	if id == "" {
		id = "gpu"
	}
	g, ok := s.gpus[id]
	if !ok {
		if len(s.gpus) >= s.cfg.Limits.MaxGroups {
			s.tel.gpusFolded++
			id = overflowValue
			if g, ok = s.gpus[id]; !ok {
				g = &gpuState{id: id}
				s.gpus[id] = g
			}
		} else {
			g = &gpuState{id: id, name: firstAttr([]string{genai.AttrHWName, genai.AttrHWModel}, attrs, res)}
			s.gpus[id] = g
		}
	}
	switch role {
	case roleGPUMemUsage:
		g.addMemory(ts, v)
	case roleGPUMemLimit:
		g.limit = max(g.limit, v)
	case roleGPUUtil:
		if task := firstAttr([]string{genai.AttrHWGPUTask}, attrs); task != "" && task != genai.HWGPUTaskGeneral {
			return
		}
		g.utilSum += v
		g.utilN++
		g.utilMax = max(g.utilMax, v)
	}
}
