package live

import (
	"net"
	"net/url"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Attributes of live client spans beyond the GenAI conventions: measured
// timings in seconds, from the scheduled send time unless stated.
const (
	attrLiveQueueTime   = genai.AttrLoadgenQueueTime         // scheduled → dispatched from the client queue
	attrLiveDNS         = "llm_loadgen.dns_time"             // DNS lookup
	attrLiveConnect     = "llm_loadgen.connect_time"         // TCP connect
	attrLiveTLS         = "llm_loadgen.tls_time"             // TLS handshake
	attrLiveReused      = "llm_loadgen.conn_reused"          // connection taken from the idle pool
	attrLiveFirstByte   = "llm_loadgen.first_byte"           // scheduled → first response byte
	attrLiveTTFT        = "llm_loadgen.ttft"                 // scheduled → first content chunk
	attrLiveTTFC        = "llm_loadgen.ttfc"                 // scheduled → first chunk with choices (role chunk counts)
	attrLiveE2E         = "llm_loadgen.e2e"                  // scheduled → last content chunk
	attrLiveTTFA        = genai.AttrLoadgenTimeToFirstAnswer // scheduled → first content that is not reasoning
	attrLiveReasoning   = "llm_loadgen.reasoning_chunks"     // content chunks with reasoning only
	attrLiveTPOT        = "llm_loadgen.tpot"                 // (e2e − ttft)/(output tokens − 1)
	attrLiveITLMean     = genai.AttrLoadgenITLMean           // mean gap between content chunks
	attrLiveITLMax      = genai.AttrLoadgenITLMax            // largest gap
	attrLiveChunks      = "llm_loadgen.chunks"               // content chunks
	attrLiveEvents      = "llm_loadgen.events"               // SSE events parsed
	attrLiveDone        = "llm_loadgen.done_seen"            // data: [DONE] arrived
	attrLiveUsageSeen   = "llm_loadgen.usage_seen"           // a usage object arrived
	attrLiveRequestID   = "llm_loadgen.request_id"           // server's x-request-id
	attrLiveSeq         = genai.AttrLoadgenSequence          // request number in the run
	attrLiveRetryAfter  = "llm_loadgen.retry_after"          // Retry-After of a refused request
	attrLiveErrorDetail = "llm_loadgen.error_message"        // what went wrong, in words
	attrLiveDatasetRow  = "llm_loadgen.dataset.row"          // line (jsonl) or conversation (sharegpt) of live.dataset
	attrLivePrefixGroup = "llm_loadgen.prefix.group"         // shared-prefix group of the request
	attrLiveCacheable   = genai.AttrLoadgenCacheableTokens   // its tokens shared with the group
	attrLiveTurn        = genai.AttrLoadgenSessionTurn       // the turn's number in its session (1-based)
	attrLiveHistory     = genai.AttrLoadgenHistoryTokens     // tokens of the earlier turns it carried
	attrLivePromptToks  = "llm_loadgen.prompt.tokens"        // the client's count of the prompt's tokens
	attrLiveTokenizer   = "llm_loadgen.prompt.tokenizer"     // the tokenizer that count is exact under; absent: an estimate
	attrHTTPStatus      = genai.AttrHTTPResponseStatusCode
	attrResponseID      = genai.AttrResponseID
	attrRequestMaxTok   = "gen_ai.request.max_tokens"
)

// liveRenderer turns results into spans and metrics.
type liveRenderer struct {
	cfg       *config.LiveConfig
	op        string
	host      string
	port      int64
	chunkMode string
	// tokenizer names live.prompt.tokenizer ("" when token counts are
	// estimates).
	tokenizer string

	td    ptrace.Traces
	spans ptrace.SpanSlice
	n     int

	agg *liveMetrics
	// cpu is the process's CPU use, put on every span so that the report
	// can tell a generator that ran out of CPU.
	cpu cpuMeter

	plan loadgen.ShardPlan // run id and shard on every resource (internal/loadgen/shard.go)
}

func newLiveRenderer(cfg *config.LiveConfig, version string, start time.Time) *liveRenderer {
	r := &liveRenderer{cfg: cfg, op: genai.OpChat, chunkMode: cfg.ChunkEvents}
	if cfg.Operation == config.LiveOpText {
		r.op = genai.OpTextCompletion
	}
	if u, err := url.Parse(cfg.Client.Endpoint); err == nil {
		r.host = u.Hostname()
		p := u.Port()
		if p == "" {
			p = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		r.port, _ = strconv.ParseInt(p, 10, 64)
		if ip := net.ParseIP(r.host); ip != nil {
			r.host = ip.String()
		}
	}
	r.agg = newLiveMetrics(r, start)
	r.reset(version)
	return r
}

func (r *liveRenderer) reset(version string) {
	r.td = ptrace.NewTraces()
	rs := r.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "llm_loadgen")
	if version != "" {
		rs.Resource().Attributes().PutStr("service.version", version)
	}
	r.plan.PutIdentity(rs.Resource().Attributes())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	r.spans = ss.Spans()
	r.n = 0
}

// take returns the batch so far and starts a new one.
func (r *liveRenderer) take(version string) (ptrace.Traces, int) {
	td, n := r.td, r.n
	r.reset(version)
	return td, n
}

func ts(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

func secs(d time.Duration) float64 { return d.Seconds() }

// render appends the client span of one request.
func (r *liveRenderer) render(res *liveResult) {
	sp := r.spans.AppendEmpty()
	r.n++
	sp.SetTraceID(res.TraceID)
	sp.SetSpanID(res.SpanID)
	sp.SetName(r.op + " " + r.cfg.Model)
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetStartTimestamp(ts(res.Scheduled))
	end := res.End
	if end.IsZero() {
		end = time.Now()
	}
	sp.SetEndTimestamp(ts(end))
	a := sp.Attributes()
	r.putGenAIAttrs(a, res)
	putNetworkTimes(a, res)
	putStreamTimes(a, res)
	putClientDelay(a, res)
	if u, ok := r.cpu.sample(time.Now()); ok {
		a.PutDouble(genai.AttrLoadgenProcessCPU, u)
	}
	r.putOutcome(sp, res)
	r.addEvents(sp.Events(), res)
}

// putGenAIAttrs adds the GenAI request and response attributes.
func (r *liveRenderer) putGenAIAttrs(a pcommon.Map, res *liveResult) {
	r.putRequestAttrs(a, res)
	r.putResponseAttrs(a, res)
}

// putRequestAttrs adds what the request asked for: operation, model, token
// limit, dataset row, prompt and session details.
func (r *liveRenderer) putRequestAttrs(a pcommon.Map, res *liveResult) {
	a.PutStr(genai.AttrOperationName, r.op)
	a.PutStr(genai.AttrProviderName, r.cfg.Provider)
	a.PutStr(genai.AttrRequestModel, r.cfg.Model)
	a.PutBool(genai.AttrRequestStream, r.cfg.Stream)
	maxTok := r.cfg.MaxTokens
	if res.MaxTokens > 0 {
		maxTok = res.MaxTokens
	}
	a.PutInt(attrRequestMaxTok, int64(maxTok))
	if res.DatasetRow > 0 {
		a.PutInt(attrLiveDatasetRow, res.DatasetRow)
	}
	if res.CacheableTokens > 0 {
		a.PutInt(attrLivePrefixGroup, int64(res.PrefixGroup))
		a.PutInt(attrLiveCacheable, int64(res.CacheableTokens))
	}
	if res.PromptTokens > 0 {
		a.PutInt(attrLivePromptToks, int64(res.PromptTokens))
		if r.tokenizer != "" && res.traced == nil && r.cfg.Dataset.Path == "" {
			a.PutStr(attrLiveTokenizer, r.tokenizer)
		}
	}
	if res.SessionID != "" {
		a.PutStr(genai.AttrConversationID, res.SessionID)
		a.PutInt(attrLiveTurn, int64(res.SessionTurn))
		a.PutInt(attrLiveHistory, int64(res.HistoryTokens))
	}
}

// putResponseAttrs adds the server, what it answered (model, id, status,
// finish reason, usage) and the load the request was sent under.
func (r *liveRenderer) putResponseAttrs(a pcommon.Map, res *liveResult) {
	if r.host != "" {
		a.PutStr(genai.AttrServerAddress, r.host)
		a.PutInt(genai.AttrServerPort, r.port)
	}
	if res.RespModel != "" {
		a.PutStr(genai.AttrResponseModel, res.RespModel)
	}
	if res.ResponseID != "" {
		a.PutStr(attrResponseID, res.ResponseID)
	}
	if res.Status != 0 {
		a.PutInt(attrHTTPStatus, int64(res.Status))
	}
	if res.Finish != "" {
		a.PutEmptySlice(genai.AttrFinishReasons).AppendEmpty().SetStr(res.Finish)
	}
	a.PutInt(genai.AttrUsageInputTokens, int64(res.InputTokens))
	a.PutInt(genai.AttrUsageOutputTokens, int64(res.OutputTokens))
	if res.ReasoningTokens > 0 {
		a.PutInt(genai.AttrUsageReasoningOutputTokens, int64(res.ReasoningTokens))
	}
	if res.CachedTokens > 0 {
		a.PutInt(genai.AttrUsageCacheReadInputTokens, int64(res.CachedTokens))
	}
	a.PutInt(attrLiveSeq, res.Seq)
	if res.TargetRate > 0 {
		a.PutDouble(genai.AttrLoadgenTargetRate, res.TargetRate)
	}
	if res.Cap > 0 {
		a.PutInt(genai.AttrLoadgenConcurrencyCap, res.Cap)
	}
}

// putNetworkTimes adds the queue time, the network phases that happened
// and the time to the first response byte.
func putNetworkTimes(a pcommon.Map, res *liveResult) {
	a.PutDouble(attrLiveQueueTime, secs(sub(res.Dispatched, res.Scheduled)))
	if d := res.Net.phase(netDNSStart, netDNSDone); d > 0 {
		a.PutDouble(attrLiveDNS, secs(d))
	}
	if d := res.Net.phase(netConnStart, netConnDone); d > 0 {
		a.PutDouble(attrLiveConnect, secs(d))
	}
	if d := res.Net.phase(netTLSStart, netTLSDone); d > 0 {
		a.PutDouble(attrLiveTLS, secs(d))
	}
	a.PutBool(attrLiveReused, res.ConnReused)
	if !res.FirstByte.IsZero() {
		a.PutDouble(attrLiveFirstByte, secs(sub(res.FirstByte, res.Scheduled)))
	}
}

// putClientDelay says which clock timed the events and, with kernel
// timestamps, how long the client took to see them.
func putClientDelay(a pcommon.Map, res *liveResult) {
	if !res.Delay.Kernel {
		a.PutStr(genai.AttrLoadgenTimestamps, genai.TimestampsUser)
		return
	}
	a.PutStr(genai.AttrLoadgenTimestamps, genai.TimestampsKernel)
	a.PutDouble(genai.AttrLoadgenClientDelayMean, secs(res.Delay.mean()))
	a.PutDouble(genai.AttrLoadgenClientDelayMax, secs(res.Delay.Max))
	if !res.FirstToken.IsZero() {
		a.PutDouble(genai.AttrLoadgenClientDelayFirst, secs(res.Delay.FirstToken))
	}
	if res.Delay.Shared > 0 {
		a.PutInt(genai.AttrLoadgenSharedStamps, int64(res.Delay.Shared))
	}
}

// putStreamTimes adds the times to the first chunk and token, the end to end
// time, TPOT and the inter-chunk gaps.
func putStreamTimes(a pcommon.Map, res *liveResult) {
	if !res.FirstChunk.IsZero() {
		a.PutDouble(attrLiveTTFC, secs(sub(res.FirstChunk, res.Scheduled)))
	}
	if !res.FirstToken.IsZero() {
		a.PutDouble(genai.AttrTimeToFirstChunk, secs(res.ttft()))
		a.PutDouble(attrLiveTTFT, secs(res.ttft()))
		a.PutDouble(attrLiveE2E, secs(res.e2e()))
	}
	// A reasoning model thinks before it answers: the time to its first
	// answer token is a number of its own.
	if res.ReasoningChunks > 0 {
		a.PutInt(attrLiveReasoning, int64(res.ReasoningChunks))
		if !res.FirstAnswer.IsZero() {
			a.PutDouble(attrLiveTTFA, secs(sub(res.FirstAnswer, res.Scheduled)))
		}
	}
	if d := res.tpot(); d > 0 {
		a.PutDouble(attrLiveTPOT, secs(d))
	}
	if len(res.Gaps) > 0 {
		sum, mx := 0.0, 0.0
		for _, g := range res.Gaps {
			sum += g
			mx = max(mx, g)
		}
		a.PutDouble(attrLiveITLMean, sum/float64(len(res.Gaps)))
		a.PutDouble(attrLiveITLMax, mx)
		if res.TokensKnown {
			a.PutDouble(genai.AttrLoadgenITLPerToken, sum/float64(gapTokens(res)))
		}
	}
}

// putOutcome adds the stream's counts, the server's request id and, for a
// failed request, the error and the span's error status.
func (r *liveRenderer) putOutcome(sp ptrace.Span, res *liveResult) {
	a := sp.Attributes()
	if r.cfg.Stream {
		a.PutInt(attrLiveChunks, int64(res.Chunks))
		a.PutInt(attrLiveEvents, int64(res.Events))
		a.PutBool(attrLiveDone, res.DoneSeen)
		a.PutBool(attrLiveUsageSeen, res.UsageSeen)
	}
	if res.RequestID != "" {
		a.PutStr(attrLiveRequestID, res.RequestID)
	}
	if res.ErrorType != "" {
		a.PutStr(genai.AttrErrorType, res.ErrorType)
		a.PutStr(attrLiveErrorDetail, res.ErrorMsg)
		if res.RetryAfter != "" {
			a.PutStr(attrLiveRetryAfter, res.RetryAfter)
		}
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(res.ErrorType)
	}
}

// gapTokens is the tokens the gaps of res delivered: each chunk's count
// where known, one where not.
func gapTokens(res *liveResult) int {
	n := 0
	for i := range res.Gaps {
		if i < len(res.GapTokens) && res.GapTokens[i] > 0 {
			n += int(res.GapTokens[i])
		} else {
			n++
		}
	}
	return n
}

// addEvents adds the span events of the request's milestones and, as
// chunk_events says, of its content chunks.
func (r *liveRenderer) addEvents(ev ptrace.SpanEventSlice, res *liveResult) {
	if res.Dispatched.After(res.Scheduled) {
		addEvent(ev, "llm_loadgen.dispatched", res.Dispatched)
	}
	addEvent(ev, "llm_loadgen.request_sent", res.WroteReq)
	addEvent(ev, "llm_loadgen.first_byte", res.FirstByte)
	switch r.chunkMode {
	case config.ChunkEventsAll:
		for i, t := range res.ChunkTimes {
			e := ev.AppendEmpty()
			e.SetName(genai.EventLoadgenLiveChunk)
			e.SetTimestamp(ts(t))
			e.Attributes().PutInt("llm_loadgen.chunk.index", int64(i))
			if i < len(res.ChunkTokens) && res.ChunkTokens[i] > 0 {
				e.Attributes().PutInt(genai.AttrLoadgenChunkTokens, int64(res.ChunkTokens[i]))
			}
		}
	case config.ChunkEventsFirst:
		addEvent(ev, genai.EventLoadgenFirstChunk, res.FirstToken)
	}
	addEvent(ev, "llm_loadgen.stream_end", res.End)
}

// addEvent adds a span event at t, unless t is zero.
func addEvent(ev ptrace.SpanEventSlice, name string, t time.Time) {
	if !t.IsZero() {
		e := ev.AppendEmpty()
		e.SetName(name)
		e.SetTimestamp(ts(t))
	}
}

// histogram is the shared explicit-bucket histogram.
type histogram = genai.ExplicitHistogram

func newHistogram(bounds []float64) *histogram { return &histogram{Bounds: bounds} }

// liveSeriesKey identifies one metric series.
type liveSeriesKey struct {
	errorType string
	respModel string
	tokenType string
}

// liveMetrics accumulates the GenAI client metrics and request counts.
type liveMetrics struct {
	r        *liveRenderer
	start    pcommon.Timestamp
	defs     genai.ClientMetrics
	duration map[liveSeriesKey]*histogram
	ttft     map[liveSeriesKey]*histogram
	tpoc     map[liveSeriesKey]*histogram
	tokens   map[liveSeriesKey]*histogram
	requests map[liveSeriesKey]int64
}

func newLiveMetrics(r *liveRenderer, start time.Time) *liveMetrics {
	return &liveMetrics{
		r: r, start: ts(start), defs: genai.ClientMetricsFor(genai.TargetV1_41, r.op),
		duration: map[liveSeriesKey]*histogram{}, ttft: map[liveSeriesKey]*histogram{},
		tpoc: map[liveSeriesKey]*histogram{}, tokens: map[liveSeriesKey]*histogram{},
		requests: map[liveSeriesKey]int64{},
	}
}

func histFor(m map[liveSeriesKey]*histogram, k liveSeriesKey, bounds []float64) *histogram {
	h := m[k]
	if h == nil {
		h = newHistogram(bounds)
		m[k] = h
	}
	return h
}

// add records one request. Operation duration runs from the scheduled send
// time to the end of the response; TTFT and per-chunk times are recorded for
// requests that received content.
func (m *liveMetrics) add(res *liveResult) {
	k := liveSeriesKey{errorType: res.ErrorType, respModel: res.RespModel}
	m.requests[liveSeriesKey{errorType: res.ErrorType}]++
	if res.ErrorType == errTypeQueueFull {
		return // never sent: no operation to measure
	}
	end := res.End
	if end.IsZero() {
		end = time.Now()
	}
	histFor(m.duration, k, m.defs.Duration.Buckets).Record(secs(end.Sub(res.Scheduled)))
	if !res.FirstToken.IsZero() && m.r.cfg.Stream {
		histFor(m.ttft, k, m.defs.TimeToFirstChunk.Buckets).Record(secs(res.ttft()))
		h := histFor(m.tpoc, k, m.defs.TimePerOutputChunk.Buckets)
		for _, g := range res.Gaps {
			h.Record(g)
		}
	}
	if res.ErrorType == "" {
		if res.InputTokens > 0 {
			histFor(m.tokens, liveSeriesKey{respModel: res.RespModel, tokenType: genai.TokenTypeInput}, m.defs.TokenUsage.Buckets).Record(float64(res.InputTokens))
		}
		histFor(m.tokens, liveSeriesKey{respModel: res.RespModel, tokenType: genai.TokenTypeOutput}, m.defs.TokenUsage.Buckets).Record(float64(res.OutputTokens))
	}
}

func (m *liveMetrics) attrs(a pcommon.Map, k liveSeriesKey) {
	a.PutStr(genai.AttrOperationName, m.r.op)
	a.PutStr(genai.AttrProviderName, m.r.cfg.Provider)
	a.PutStr(genai.AttrRequestModel, m.r.cfg.Model)
	if k.respModel != "" {
		a.PutStr(genai.AttrResponseModel, k.respModel)
	}
	if m.r.host != "" {
		a.PutStr(genai.AttrServerAddress, m.r.host)
		a.PutInt(genai.AttrServerPort, m.r.port)
	}
	if k.errorType != "" {
		a.PutStr(genai.AttrErrorType, k.errorType)
	}
	if k.tokenType != "" {
		a.PutStr(genai.AttrTokenType, k.tokenType)
	}
}

// emit returns every series as cumulative points at now.
func (m *liveMetrics) emit(now time.Time, version string) (pmetric.Metrics, int) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "llm_loadgen")
	if version != "" {
		rm.Resource().Attributes().PutStr("service.version", version)
	}
	m.r.plan.PutIdentity(rm.Resource().Attributes())
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	points := m.emitHistograms(sm, now)
	points += m.emitRequests(sm, now)
	return md, points
}

// emitHistograms appends the GenAI client histograms that have series.
func (m *liveMetrics) emitHistograms(sm pmetric.ScopeMetrics, now time.Time) int {
	points := 0
	for _, h := range []struct {
		def    genai.MetricDef
		series map[liveSeriesKey]*histogram
	}{{m.defs.Duration, m.duration}, {m.defs.TimeToFirstChunk, m.ttft}, {m.defs.TimePerOutputChunk, m.tpoc}, {m.defs.TokenUsage, m.tokens}} {
		if len(h.series) == 0 {
			continue
		}
		mt := sm.Metrics().AppendEmpty()
		mt.SetName(h.def.Name)
		mt.SetUnit(h.def.Unit)
		mt.SetDescription(h.def.Description)
		hist := mt.SetEmptyHistogram()
		hist.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for _, k := range sortedKeys(h.series) {
			dp := hist.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(m.start)
			dp.SetTimestamp(ts(now))
			m.attrs(dp.Attributes(), k)
			h.series[k].CopyTo(dp)
			points++
		}
	}
	return points
}

// emitRequests appends the request counts by outcome and error.type.
func (m *liveMetrics) emitRequests(sm pmetric.ScopeMetrics, now time.Time) int {
	if len(m.requests) == 0 {
		return 0
	}
	mt := sm.Metrics().AppendEmpty()
	mt.SetName("llm_loadgen.client.requests")
	mt.SetUnit("{request}")
	mt.SetDescription("Requests of the live run by outcome (ok, error) and error.type.")
	sum := mt.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	keys := make([]liveSeriesKey, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].errorType < keys[j].errorType })
	for _, k := range keys {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(m.start)
		dp.SetTimestamp(ts(now))
		m.attrs(dp.Attributes(), k)
		outcome := "ok"
		if k.errorType != "" {
			outcome = "error"
		}
		dp.Attributes().PutStr("outcome", outcome)
		dp.SetIntValue(m.requests[k])
	}
	return len(keys)
}

func sortedKeys(m map[liveSeriesKey]*histogram) []liveSeriesKey {
	keys := make([]liveSeriesKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.errorType != b.errorType {
			return a.errorType < b.errorType
		}
		if a.respModel != b.respModel {
			return a.respModel < b.respModel
		}
		return a.tokenType < b.tokenType
	})
	return keys
}
