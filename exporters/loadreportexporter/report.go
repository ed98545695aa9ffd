package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// round keeps 6 significant digits so that reports are stable and readable.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return v
	}
	p := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func ptr(v float64) *float64 { r := round(v); return &r }

func latencyOf(s *sketch) *Latency {
	if s == nil || s.count == 0 {
		return nil
	}
	return &Latency{Count: int64(math.Round(s.count)), Mean: round(s.mean()), P50: round(s.quantile(0.50)),
		P90: round(s.quantile(0.90)), P95: round(s.quantile(0.95)), P99: round(s.quantile(0.99)), Max: round(s.max)}
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// build produces the report from the state at time now.
func (s *state) build(final bool) *Report {
	r := s.newReport(final)
	total := s.addSpanRows(r)
	totalRow := s.addMetricRows(r, total)
	totalRow.Target, totalRow.Model, totalRow.Scenario = "all", "all", "all"
	setRunSpan(r, total, &totalRow)
	r.SpanLoss = s.spanLoss()
	r.GPUs = s.gpuSummaries()
	r.Timeline = s.timelineReport()
	for _, p := range r.Timeline.Points {
		totalRow.PeakConc = max(totalRow.PeakConc, p.Concurrency)
	}
	r.Total = totalRow
	r.LoadCurve = s.loadCurve()
	r.Workload = s.workload.report()
	r.ServerSide = s.serverSideReport(s.jn, final)
	origin := total.first
	if origin == math.MaxInt64 {
		origin = 0 // no request yet
	}
	r.SteadyState = s.steadyState()
	r.Server = s.serverMetricsReport(r, origin)
	r.Saturation = s.saturationWarnings(r, origin)
	r.Histograms = Histograms{TTFT: histogramOf(total.ttft, 24), ITL: histogramOf(total.itl, 24)}
	s.judgeReport(r)
	s.applyBaseline(r)
	s.addShards(r)
	r.Summary = summarize(r)
	return r
}

// setRunSpan sets the run's start, end and duration from the first and
// last request, or the duration from the metrics when no span was seen.
func setRunSpan(r *Report, total *group, totalRow *Row) {
	if total.requests > 0 && total.first < total.last {
		st, en := time.Unix(0, total.first).UTC(), time.Unix(0, total.last).UTC()
		r.Run.Start, r.Run.End = &st, &en
		r.Run.DurationS = round(float64(total.last-total.first) / 1e9)
		return
	}
	r.Run.DurationS = totalRow.DurationS
}

// newReport is the report's header: what it is, how accurate, and its files.
func (s *state) newReport(final bool) *Report {
	cfg := s.cfg
	r := &Report{
		Title:       cfg.Title,
		GeneratedAt: s.now().UTC(),
		Final:       final,
		Accuracy: AccuracyInfo{
			Sketch:           SketchLibrary,
			RelativeAccuracy: cfg.Limits.RelativeAccuracy,
			Note: fmt.Sprintf("From spans, each percentile is the sample of rank q·(n−1) within ±%g%% of its value; mean and max are exact. "+
				"Rows built from histogram metrics are limited by the bucket widths.", cfg.Limits.RelativeAccuracy*100),
		},
		Goodput: GoodputInfo{TTFT: cfg.Goodput.TTFT.Seconds(), TPOT: cfg.Goodput.TPOT.Seconds(), E2E: cfg.Goodput.E2E.Seconds()},
	}
	r.Run.Spans = s.spansSeen
	for _, f := range cfg.Formats {
		r.Files = append(r.Files, fileNames[f])
	}
	return r
}

// addSpanRows adds a row per group of spans, in key order, and returns the
// groups merged into one.
func (s *state) addSpanRows(r *Report) *group {
	total := newGroup(groupKey{"all", "all", "all"}, s.spec)
	keys := make([]groupKey, 0, len(s.groups))
	for k := range s.groups {
		keys = append(keys, k)
	}
	sortKeys(keys)
	for _, k := range keys {
		g := s.groups[k]
		total.merge(g)
		r.Rows = append(r.Rows, s.rowOf(g, "spans"))
	}
	return total
}

// addMetricRows adds the rows built from metrics, sets the run's source and
// returns the total row: from spans when any request span arrived, else
// from metrics.
func (s *state) addMetricRows(r *Report, total *group) Row {
	metricRows, metricTotal := s.metricRows()
	r.Run.Source = "none"
	if total.requests <= 0 {
		r.Rows = append(r.Rows, metricRows...)
		if len(metricRows) > 0 {
			r.Run.Source = "metrics"
		}
		return metricTotal
	}
	r.Run.Source = "spans"
	totalRow := s.rowOf(total, "spans")
	// Rows only the metrics know are added: a target and model no span
	// arrived for. (GenAI metrics usually lack the scenario, so a metric
	// row matches span rows by target and model.)
	withSpans := map[[2]string]bool{}
	for k := range s.groups {
		withSpans[[2]string{k.Target, k.Model}] = true
	}
	for _, mr := range metricRows {
		if !withSpans[[2]string{mr.Target, mr.Model}] {
			r.Rows = append(r.Rows, mr)
			r.Run.Source = "spans+metrics"
		}
	}
	return totalRow
}

// judgeReport evaluates the SLOs on the total and on each row.
func (s *state) judgeReport(r *Report) {
	cfg := s.cfg
	r.SLOs, r.SLOsNotEvaluated = evaluateSLOs(cfg.SLOs, &r.Total, r.SpanLoss)
	r.Verdict = overall(r.SLOs, cfg.Exit.NoData)
	r.Total.Verdict = r.Verdict
	for i := range r.Rows {
		slos, _ := evaluateSLOs(cfg.SLOs, &r.Rows[i], r.SpanLoss)
		r.Rows[i].Verdict = overall(slos, cfg.Exit.NoData)
	}
}

func sortKeys(keys []groupKey) {
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if (a == overflowKey) != (b == overflowKey) {
			return b == overflowKey
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Scenario < b.Scenario
	})
}

func (s *state) rowOf(g *group, source string) Row {
	row := Row{
		Target: g.key.Target, Model: g.key.Model, Scenario: g.key.Scenario, Source: source,
		Requests: g.requests, Successes: g.successes, Cancelled: g.cancelled,
		InputTokens: g.inputTokens, OutputTokens: g.outputTokens, GoodRequests: g.good,
		TTFT: latencyOf(g.ttft), ITL: latencyOf(g.itl), TPOT: latencyOf(g.tpot), E2E: latencyOf(g.e2e),
		TimeToFirstAnswer: latencyOf(g.ttfa), ClientDelay: latencyOf(g.clientDelay), GeneratorCPU: latencyOf(g.generatorCPU),
	}
	row.Errors = g.requests - g.successes
	row.ErrorsByType = s.errorCounts(g.errors, g.requests)
	switch {
	case g.itlFromEvents > 0 && g.itlFromTPOT > 0:
		row.ITLSource = "chunk_events+tpot"
	case g.itlFromEvents > 0:
		row.ITLSource = "chunk_events"
	case g.itlFromTPOT > 0:
		row.ITLSource = "tpot"
	}
	dur := 0.0
	if g.last > g.first {
		dur = float64(g.last-g.first) / 1e9
	}
	s.fillRates(&row, dur, g.busy)
	return row
}

// fillRates derives rates from counts over a window of dur seconds.
func (s *state) fillRates(row *Row, dur, busy float64) {
	row.ErrorRate = round(ratio(float64(row.Errors-row.Cancelled), float64(row.Requests)))
	row.CancelledRate = round(ratio(float64(row.Cancelled), float64(row.Requests)))
	row.GoodputRatio = round(ratio(float64(row.GoodRequests), float64(row.Requests)))
	row.DurationS = round(dur)
	row.RequestRate = round(ratio(float64(row.Requests), dur))
	row.OutputTokenPS = round(ratio(float64(row.OutputTokens), dur))
	row.GoodputRate = round(ratio(float64(row.GoodRequests), dur))
	if busy > 0 {
		row.Concurrency = round(ratio(busy, dur))
	}
}

func (s *state) errorCounts(m map[string]int64, requests int64) []ErrorCount {
	out := make([]ErrorCount, 0, len(m))
	for t, n := range m {
		out = append(out, ErrorCount{Type: t, Count: n, Share: round(ratio(float64(n), float64(requests))),
			Cancelled: isCancelled(t, s.cfg.CancelledErrorTypes)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Type < out[j].Type
	})
	return out
}

// metricAcc gathers the metric streams of one row.
type metricAcc struct {
	g          *group
	dur        float64
	hasReq     bool
	concurrent float64
}

// metricRows builds rows from the remembered metric streams.
func (s *state) metricRows() ([]Row, Row) {
	accs := map[groupKey]*metricAcc{}
	total := &metricAcc{g: newGroup(groupKey{"all", "all", "all"}, s.spec)}
	ids := make([]string, 0, len(s.streams))
	for id := range s.streams {
		ids = append(ids, id)
	}
	sort.Strings(ids) // deterministic float sums
	for _, id := range ids {
		st := s.streams[id]
		switch st.role {
		case roleE2E, roleTTFT, roleTPOT, roleTokenUsage, roleRequests, roleOutputTokens, roleGoodput, roleConcurrency:
		default:
			continue
		}
		a := s.metricAccFor(accs, st.key)
		span := 0.0
		if st.start > 0 && st.last > st.start {
			span = float64(st.last-st.start) / 1e9
		}
		for _, x := range []*metricAcc{a, total} {
			x.dur = max(x.dur, span)
			s.addStream(x, st)
		}
	}
	rows := s.metricRowsOf(accs)
	total.countFromDurations()
	return rows, s.metricRow(total.g, total.dur, total.concurrent)
}

// metricRowsOf is a row for each of accs with requests, in key order.
func (s *state) metricRowsOf(accs map[groupKey]*metricAcc) []Row {
	keys := make([]groupKey, 0, len(accs))
	for k := range accs {
		keys = append(keys, k)
	}
	sortKeys(keys)
	var rows []Row
	for _, k := range keys {
		a := accs[k]
		a.countFromDurations()
		if a.g.requests == 0 {
			continue
		}
		rows = append(rows, s.metricRow(a.g, a.dur, a.concurrent))
	}
	return rows
}

// metricAccFor is the row of key k, the overflow row once accs holds
// Limits.MaxGroups rows.
func (s *state) metricAccFor(accs map[groupKey]*metricAcc, k groupKey) *metricAcc {
	if a, ok := accs[k]; ok {
		return a
	}
	if len(accs) >= s.cfg.Limits.MaxGroups {
		k = overflowKey
		if a, ok := accs[k]; ok {
			return a
		}
	}
	a := &metricAcc{g: newGroup(k, s.spec)}
	accs[k] = a
	return a
}

// addStream adds one metric stream to the row x, by the stream's role.
func (s *state) addStream(x *metricAcc, st *stream) {
	g := x.g
	switch st.role {
	case roleE2E:
		if st.label == "" {
			addBuckets(g.e2e, st.buckets)
		}
	case roleTTFT:
		addBuckets(g.ttft, st.buckets)
	case roleTPOT:
		addBuckets(g.tpot, st.buckets)
		addBuckets(g.itl, st.buckets)
	case roleTokenUsage:
		if st.label == genai.TokenTypeInput {
			g.inputTokens += int64(st.sum)
		}
	case roleRequests:
		x.hasReq = true
		s.addRequests(g, st)
	case roleOutputTokens:
		g.outputTokens += int64(math.Round(st.value))
	case roleGoodput:
		g.good += int64(math.Round(st.value))
	case roleConcurrency:
		if st.count > 0 {
			x.concurrent += st.sum / st.count
		}
	}
}

// addRequests counts a request stream (label "outcome|error.type") into g.
func (s *state) addRequests(g *group, st *stream) {
	outcome, errType, _ := strings.Cut(st.label, "|")
	n := int64(math.Round(st.value))
	g.requests += n
	if outcome != genai.LLMOutcomeError {
		g.successes += n
		return
	}
	if errType == "" {
		errType = genai.ErrorTypeOther
	}
	g.errors[errType] += n
	if isCancelled(errType, s.cfg.CancelledErrorTypes) {
		g.cancelled += n
	}
}

// countFromDurations takes the request counts from the duration histogram
// when no llm.requests stream came.
func (a *metricAcc) countFromDurations() {
	if !a.hasReq {
		a.g.requests = int64(a.g.e2e.count)
		a.g.successes = a.g.requests
	}
}

func (s *state) metricRow(g *group, dur, concurrency float64) Row {
	row := s.rowOf(g, "metrics")
	s.fillRates(&row, dur, 0)
	row.Concurrency = round(concurrency)
	if row.ITL != nil {
		row.ITLSource = "time_per_output_chunk"
	}
	return row
}

// addBuckets feeds histogram buckets into a sketch at each bucket's midpoint
// (the lower bound for the overflow bucket, the upper for the first).
func addBuckets(sk *sketch, bs []bucket) {
	for _, b := range bs {
		if b.n <= 0 {
			continue
		}
		v := (b.lo + b.hi) / 2
		switch {
		case math.IsInf(b.lo, -1) && math.IsInf(b.hi, 1):
			continue
		case math.IsInf(b.lo, -1):
			v = b.hi / 2
		case math.IsInf(b.hi, 1):
			v = b.lo
		}
		sk.addCount(v, b.n)
	}
}

func (s *state) spanLoss() *SpanLoss {
	var recv, dropped, refused float64
	by := map[string]int64{}
	seen := false
	for _, st := range s.streams {
		switch st.role {
		case roleGuardRecv:
			recv += st.value
			seen = true
		case roleGuardDropped:
			dropped += st.value
			by[st.label] += int64(st.value)
			seen = true
		case roleGuardRefused:
			refused += st.value
			by["refused:"+st.label] += int64(st.value)
			seen = true
		}
	}
	if seen {
		l := &SpanLoss{Source: "metrics", Received: int64(recv), Dropped: int64(dropped), Refused: int64(refused), ByReason: by}
		l.Ratio = round(ratio(dropped+refused, recv))
		return l
	}
	return s.spanLossFromSummaries()
}

// spanLossFromSummaries is the span loss told by span_guard's summary
// spans, for runs whose span_guard metrics did not reach the report; nil
// when there were none either.
func (s *state) spanLossFromSummaries() *SpanLoss {
	if s.summaries == 0 {
		return nil
	}
	// Summary spans only cover the traces span_guard changed: the spans that
	// arrived here plus those removed stand for what span_guard received.
	recv := float64(s.spansSeen + s.summaryDropped + s.summaryFolded)
	l := &SpanLoss{Source: "summary_spans", Received: int64(recv), Dropped: s.summaryDropped, ByReason: map[string]int64{}}
	for k, v := range s.summaryDroppedBy {
		l.ByReason[k] = v
	}
	l.Ratio = round(ratio(float64(s.summaryDropped), recv))
	return l
}

func (s *state) gpuSummaries() []GPUSummary {
	ids := make([]string, 0, len(s.gpus))
	for id := range s.gpus {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []GPUSummary
	for _, id := range ids {
		g := s.gpus[id]
		sum := GPUSummary{ID: g.id, Name: g.name, PeakMemoryBytes: g.peak, MemoryLimitBytes: g.limit,
			FirstMemoryBytes: g.first, LastMemoryBytes: g.last, Samples: int64(g.n)}
		if sl := g.slope(); !math.IsNaN(sl) {
			sum.GrowthMiBPerMin = ptr(sl * 60 / (1 << 20))
		}
		if g.utilN > 0 {
			sum.MeanUtilization = ptr(g.utilSum / g.utilN)
			sum.PeakUtilization = ptr(g.utilMax)
		}
		out = append(out, sum)
	}
	return out
}

func (s *state) timelineReport() Timeline {
	tl := s.timeline
	res := float64(tl.res) / 1e9
	out := Timeline{ResolutionS: res, Points: make([]TimePoint, 0, len(tl.points))}
	for i, p := range tl.points {
		tp := TimePoint{OffsetS: round(float64(i) * res), Started: p.started, Completed: p.completed, Errors: p.errors,
			AchievedRPS: round(float64(p.started) / res), Concurrency: round(p.busy / res),
			TokensPS: round(float64(p.outputTokens) / res)}
		if p.targetRate > 0 {
			tp.TargetRPS = ptr(p.targetRate)
		}
		if p.ttft != nil && p.ttft.count > 0 {
			tp.TTFTP50, tp.TTFTP95, tp.TTFTP99 = ptr(p.ttft.quantile(0.5)), ptr(p.ttft.quantile(0.95)), ptr(p.ttft.quantile(0.99))
		}
		if p.e2e != nil && p.e2e.count > 0 {
			tp.E2EP50, tp.E2EP95, tp.E2EP99 = ptr(p.e2e.quantile(0.5)), ptr(p.e2e.quantile(0.95)), ptr(p.e2e.quantile(0.99))
		}
		out.Points = append(out.Points, tp)
	}
	return out
}

// histogramOf regroups a sketch's bins into at most n log-spaced bars.
func histogramOf(sk *sketch, n int) []HistBin {
	if sk == nil || sk.count == 0 {
		return nil
	}
	lo, hi := sk.min, sk.max
	if lo <= 0 {
		lo = math.Max(hi/1e4, 1e-6)
	}
	if hi <= lo {
		return []HistBin{{Lo: round(sk.min), Hi: round(sk.max), Count: sk.count}}
	}
	step := math.Log(hi/lo) / float64(n)
	bins := make([]HistBin, n)
	for i := range bins {
		bins[i] = HistBin{Lo: round(lo * math.Exp(step*float64(i))), Hi: round(lo * math.Exp(step*float64(i+1)))}
	}
	sk.forEach(func(v, c float64) {
		i := 0
		if v > lo {
			i = int(math.Log(v/lo) / step)
		}
		i = min(max(i, 0), n-1)
		bins[i].Count += c
	})
	for i := range bins {
		bins[i].Count = round(bins[i].Count)
	}
	return bins
}
