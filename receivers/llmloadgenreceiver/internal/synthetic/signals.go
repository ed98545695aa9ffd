package synthetic

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// EventInferenceDetails is the GenAI event the receiver emits per model call.
const EventInferenceDetails = "gen_ai.client.inference.operation.details"

// seriesKey identifies one metric series (besides the token type).
type seriesKey struct {
	res   int
	model *modelState
	op    op
	err   string
}

type series struct {
	duration genai.ExplicitHistogram
	ttft     genai.ExplicitHistogram
	inTok    genai.ExplicitHistogram
	outTok   genai.ExplicitHistogram
	inSum    int64
	outSum   int64
}

// metricsAgg accumulates the GenAI client metrics of every emitted request,
// cumulatively from the run's start.
type metricsAgg struct {
	start  pcommon.Timestamp
	series map[seriesKey]*series
	order  []seriesKey
}

func newMetricsAgg(start int64) *metricsAgg {
	return &metricsAgg{start: pcommon.Timestamp(start), series: map[seriesKey]*series{}}
}

func (ma *metricsAgg) add(r *request) {
	for i := range r.spans {
		s := &r.spans[i]
		if s.op != opChat && s.op != opEmbeddings && s.op != opTool && s.op != opAgent {
			continue
		}
		k := seriesKey{res: r.resource, model: s.model, op: s.op}
		if s.fault != nil {
			k.err = s.fault.clientError
		}
		ma.seriesFor(k).record(s)
	}
}

// seriesFor returns the series of key k, creating it (and remembering its
// place in the emit order) on first use.
func (ma *metricsAgg) seriesFor(k seriesKey) *series {
	se, ok := ma.series[k]
	if !ok {
		se = &series{
			duration: genai.ExplicitHistogram{Bounds: genai.DurationBuckets},
			ttft:     genai.ExplicitHistogram{Bounds: genai.DurationBuckets},
			inTok:    genai.ExplicitHistogram{Bounds: genai.TokenBuckets},
			outTok:   genai.ExplicitHistogram{Bounds: genai.TokenBuckets},
		}
		ma.series[k] = se
		ma.order = append(ma.order, k)
	}
	return se
}

// record adds span s's duration, time to first chunk and token usage.
func (se *series) record(s *spanRec) {
	se.duration.Record(float64(s.end-s.start) / 1e9)
	if s.op == opChat && s.ttft >= 0 {
		se.ttft.Record(s.ttft)
	}
	if s.fault == nil && (s.op == opChat || s.op == opEmbeddings) {
		se.inTok.Record(float64(s.in))
		se.inSum += int64(s.in)
		if s.op == opChat {
			se.outTok.Record(float64(s.out))
			se.outSum += int64(s.out)
		}
	}
}

// emit builds the cumulative metrics at time now; it returns the data and
// its number of data points.
func (ma *metricsAgg) emit(rd *renderer, now int64) (pmetric.Metrics, int) {
	mo := &metricsOut{md: pmetric.NewMetrics(), rd: rd, start: ma.start, ts: pcommon.Timestamp(now),
		byRes: map[int]pmetric.MetricSlice{}, metrics: map[metricKey]pmetric.Metric{}}
	for _, k := range ma.order {
		se := ma.series[k]
		defs := genai.ClientMetricsFor(rd.d.metrics, genAIv141.opValue[k.op])
		mo.hist(k, defs.Duration, &se.duration, "")
		mo.hist(k, defs.TimeToFirstChunk, &se.ttft, "")
		if defs.TokenUsage.Name != "" {
			mo.hist(k, defs.TokenUsage, &se.inTok, genai.TokenTypeInput)
			mo.hist(k, defs.TokenUsage, &se.outTok, genai.TokenTypeOutput)
		} else {
			mo.hist(k, defs.InputTokens, &se.inTok, "")
			mo.hist(k, defs.OutputTokens, &se.outTok, "")
			mo.sum(k, defs.InputTokensTotal, se.inSum)
			mo.sum(k, defs.OutputTokensTotal, se.outSum)
		}
	}
	return mo.md, mo.points
}

type metricKey struct {
	res  int
	name string
}

// metricsOut builds one emission of the cumulative metrics: one resource
// per simulated service instance, one metric per name in it.
type metricsOut struct {
	md        pmetric.Metrics
	rd        *renderer
	start, ts pcommon.Timestamp
	byRes     map[int]pmetric.MetricSlice
	metrics   map[metricKey]pmetric.Metric
	points    int
}

// metric returns the metric def of resource res, adding it on first use.
func (mo *metricsOut) metric(res int, def genai.MetricDef) pmetric.Metric {
	mk := metricKey{res, def.Name}
	if m, ok := mo.metrics[mk]; ok {
		return m
	}
	ms, ok := mo.byRes[res]
	if !ok {
		rm := mo.md.ResourceMetrics().AppendEmpty()
		mo.rd.resources[res].CopyTo(rm.Resource().Attributes())
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ScopeName)
		sm.Scope().SetVersion(mo.rd.version)
		ms = sm.Metrics()
		mo.byRes[res] = ms
	}
	m := ms.AppendEmpty()
	m.SetName(def.Name)
	m.SetUnit(def.Unit)
	m.SetDescription(def.Description)
	if def.Instrument == genai.Counter {
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	} else {
		m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	}
	mo.metrics[mk] = m
	return m
}

// hist adds series k's histogram h as a point of def, unless def is not in
// the dialect's metrics or h is empty.
func (mo *metricsOut) hist(k seriesKey, def genai.MetricDef, h *genai.ExplicitHistogram, tokenType string) {
	if def.Name == "" || h.Count == 0 {
		return
	}
	dp := mo.metric(k.res, def).Histogram().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(mo.start)
	dp.SetTimestamp(mo.ts)
	h.CopyTo(dp)
	metricAttrs(dp.Attributes(), k, tokenType)
	mo.points++
}

// sum adds series k's total v as a point of def, unless def is not in the
// dialect's metrics or v is 0.
func (mo *metricsOut) sum(k seriesKey, def genai.MetricDef, v int64) {
	if def.Name == "" || v == 0 {
		return
	}
	dp := mo.metric(k.res, def).Sum().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(mo.start)
	dp.SetTimestamp(mo.ts)
	dp.SetIntValue(v)
	metricAttrs(dp.Attributes(), k, "")
	mo.points++
}

func metricAttrs(a pcommon.Map, k seriesKey, tokenType string) {
	a.PutStr(genai.AttrOperationName, genAIv141.opValue[k.op])
	if k.model != nil {
		a.PutStr(genai.AttrProviderName, k.model.cfg.Provider)
		a.PutStr(genai.AttrRequestModel, k.model.cfg.Name)
		if k.err == "" {
			a.PutStr(genai.AttrResponseModel, k.model.cfg.Name)
		}
		a.PutStr(genai.AttrServerAddress, k.model.cfg.ServerAddress)
	}
	if k.err != "" {
		a.PutStr(genai.AttrErrorType, k.err)
	}
	if tokenType != "" {
		a.PutStr(genai.AttrTokenType, tokenType)
	}
}

// logsBuilder turns model calls into gen_ai.client.inference.operation.details
// events.
type logsBuilder struct {
	rd     *renderer
	logs   plog.Logs
	byRes  map[int]plog.LogRecordSlice
	record int
}

func newLogsBuilder(rd *renderer) *logsBuilder {
	return &logsBuilder{rd: rd, logs: plog.NewLogs(), byRes: map[int]plog.LogRecordSlice{}}
}

func (lb *logsBuilder) add(r *request) {
	for i := range r.spans {
		s := &r.spans[i]
		if s.op != opChat {
			continue
		}
		lb.putRecord(lb.records(r.resource).AppendEmpty(), r, s)
		lb.record++
	}
}

// records returns the log record slice of resource res, creating its
// resource and scope on first use.
func (lb *logsBuilder) records(res int) plog.LogRecordSlice {
	rs, ok := lb.byRes[res]
	if !ok {
		rl := lb.logs.ResourceLogs().AppendEmpty()
		lb.rd.resources[res].CopyTo(rl.Resource().Attributes())
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		sl.Scope().SetVersion(lb.rd.version)
		rs = sl.LogRecords()
		lb.byRes[res] = rs
	}
	return rs
}

// putRecord fills lr with the inference-details event of chat span s.
func (lb *logsBuilder) putRecord(lr plog.LogRecord, r *request, s *spanRec) {
	lr.SetEventName(EventInferenceDetails)
	lr.SetTimestamp(pcommon.Timestamp(s.end))
	lr.SetObservedTimestamp(pcommon.Timestamp(s.end))
	lr.SetTraceID(pcommon.TraceID(r.traceID))
	lr.SetSpanID(pcommon.SpanID(s.id))
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	a := lr.Attributes()
	a.PutStr(genai.AttrOperationName, genai.OpChat)
	a.PutStr(genai.AttrProviderName, s.model.cfg.Provider)
	a.PutStr(genai.AttrRequestModel, s.model.cfg.Name)
	if s.fault != nil {
		a.PutStr(genai.AttrErrorType, s.fault.clientError)
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
	} else {
		a.PutStr(genai.AttrResponseModel, s.model.cfg.Name)
		a.PutInt(genai.AttrUsageInputTokens, int64(s.in))
		a.PutInt(genai.AttrUsageOutputTokens, int64(s.out))
		a.PutEmptySlice(genai.AttrFinishReasons).AppendEmpty().SetStr(s.finish)
		if lb.rd.cfg.Content.Enabled {
			a.PutStr(genai.AttrInputMessages, lb.rd.prompt)
			a.PutStr(genai.AttrOutputMessages, lb.rd.completion)
		}
	}
}

func (lb *logsBuilder) take() (plog.Logs, int) {
	l, n := lb.logs, lb.record
	lb.logs, lb.byRes, lb.record = plog.NewLogs(), map[int]plog.LogRecordSlice{}, 0
	return l, n
}
