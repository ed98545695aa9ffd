package synthetic

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Attribute names the receiver adds that no convention defines.
const (
	attrAgentRole = "llm_loadgen.agent.role"
	attrAgentTask = "llm_loadgen.agent.task"
	attrLinkType  = "llm_loadgen.link.type"
	attrScenario  = genai.AttrLoadgenScenario
	attrChunkIdx  = "llm_loadgen.chunk.index"
)

const temperature = 0.7

// renderer turns requests into pdata in one dialect. It keeps per-batch
// state and is not safe for concurrent use.
type renderer struct {
	cfg       *config.Config
	d         *dialect
	g         *generator
	resources []pcommon.Map
	version   string

	traces ptrace.Traces
	byRes  []ptrace.SpanSlice
	hasRes []bool
	spans  int // spans in the current batch
	// resSpans counts the current batch's spans per resource; lastSpans
	// holds the previous batch's counts, which size the next batch's span
	// slices so that they do not grow by doubling.
	resSpans, lastSpans []int

	prompt, completion string // synthetic content, when enabled
	invocationParams   string

	// ids holds the batch's id strings (response, tool call, agent and
	// conversation ids) back to back in shared buffers.
	ids idArena
	// Attribute counts that depend only on the dialect and the
	// configuration, so that each span's attribute map is allocated once at
	// its final size.
	commonNil  [numOps]int // common() without a model
	chatStatic int         // stream, temperature, invocation parameters
	chatFirst  int         // time to first chunk, response id
	chatOK     int         // usage, finish reasons, completion content
	inContent  int         // prompt content
	embStatic  int         // embedding input type
	embOK      int         // usage, dimensions
	retrieval  int
	tool       int
	agent      int // without the task and the error
}

func newRenderer(cfg *config.Config, g *generator, version string) *renderer {
	rd := &renderer{cfg: cfg, d: g.d, g: g, version: version}
	rd.resources = resourceAttrs(&cfg.Resources)
	rd.byRes = make([]ptrace.SpanSlice, len(rd.resources))
	rd.hasRes = make([]bool, len(rd.resources))
	rd.resSpans = make([]int, len(rd.resources))
	rd.lastSpans = make([]int, len(rd.resources))
	if cfg.Content.Enabled {
		rd.prompt = syntheticText(cfg.Content.PromptBytes)
		rd.completion = syntheticText(cfg.Content.CompletionBytes)
	}
	if g.d.invocationParams != "" {
		rd.invocationParams = `{"stream":true,"temperature":` + strconv.FormatFloat(temperature, 'f', -1, 64) + `}`
	}
	rd.countAttrs()
	rd.reset()
	return rd
}

// resourceAttrs builds the attributes of every simulated service instance,
// service by service.
func resourceAttrs(rc *config.ResourcesConfig) []pcommon.Map {
	var out []pcommon.Map
	for s := range rc.Services {
		for i := range rc.InstancesPerService {
			m := pcommon.NewMap()
			m.PutStr("service.name", rc.ServiceNamePrefix+"-"+strconv.Itoa(s))
			m.PutStr("service.instance.id", rc.ServiceNamePrefix+"-"+strconv.Itoa(s)+"-"+strconv.Itoa(i))
			m.PutStr("service.version", "1.0.0")
			m.PutStr("telemetry.sdk.name", "llm_loadgen")
			for k, v := range rc.Attributes {
				m.PutStr(k, v)
			}
			out = append(out, m)
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countAttrs precomputes how many attributes each kind of span carries in
// the dialect, mirroring what the span writers below put (putStr and putInt
// skip an empty key, putStr also an empty value).
func (rd *renderer) countAttrs() {
	d, g := rd.d, rd.g
	has := func(f field) bool { return d.attrs[f] != "" }
	for o := range numOps {
		rd.commonNil[o] = rd.commonCount(o, nil)
	}
	for _, ms := range [][]*modelState{g.chat, g.emb, {g.rerank}} {
		for _, m := range ms {
			rd.countModelAttrs(m)
		}
	}
	content := rd.cfg.Content.Enabled
	rd.chatStatic = b2i(has(fStream)) + b2i(has(fTemperature)) + b2i(d.invocationParams != "" && rd.invocationParams != "")
	rd.chatFirst = b2i(has(fTTFT)) + b2i(has(fResponseID))
	rd.inContent = b2i(content && has(fInputContent) && rd.prompt != "")
	rd.chatOK = b2i(has(fInputTokens)) + b2i(has(fOutputTokens)) + b2i(has(fTotalTokens)) + b2i(has(fChoiceCount)) +
		b2i(has(fFinishReasons)) + b2i(content && has(fOutputContent) && rd.completion != "")
	rd.embStatic = b2i(has(fEmbeddingInputType))
	rd.embOK = b2i(has(fInputTokens)) + b2i(has(fTotalTokens)) + b2i(has(fEmbeddingDims))
	rc := &rd.cfg.RAG
	rd.retrieval = rd.commonNil[opRetrieval] + 3 + b2i(rc.Collection != "") + b2i(d.attrs[fOperation] == genai.AttrOperationName && rc.Collection != "")
	rd.tool = rd.commonNil[opTool] + b2i(has(fToolCallID)) + b2i(d.attrs[fOperation] == genai.AttrOperationName)
	rd.agent = rd.commonNil[opAgent] + b2i(has(fAgentID)) + b2i(has(fConversationID)) + 1
}

// countModelAttrs precomputes the per-operation attribute counts of model m,
// which may be nil (no rerank model).
func (rd *renderer) countModelAttrs(m *modelState) {
	if m == nil {
		return
	}
	for o := range numOps {
		m.nAttrs[o] = rd.commonCount(o, m)
	}
	if rd.d.attrs[fResponseModel] != "" && m.cfg.Name != "" {
		m.nRespModel = 1
	}
}

// commonCount is the number of attributes common() puts.
func (rd *renderer) commonCount(o op, m *modelState) int {
	d := rd.d
	n := b2i(d.attrs[fOperation] != "" && d.opValue[o] != "") + b2i(d.kindKey != "" && d.kindValue[o] != "")
	if m != nil {
		key := d.modelKey[o]
		if key == "" {
			key = d.attrs[fRequestModel]
		}
		n += b2i(d.attrs[fProvider] != "" && m.provider != "") + b2i(key != "" && m.cfg.Name != "") + b2i(m.cfg.ServerAddress != "")
	}
	return n
}

// idArena hands out short immutable strings carved from shared byte
// buffers: one allocation per few hundred ids instead of one per id. Bytes
// are only ever appended past what earlier strings cover, and a full buffer
// is left to the strings that point into it, so no string changes.
type idArena struct{ buf []byte }

const idArenaSize = 8 << 10

// hex returns prefix followed by the 16 hex digits of id.
func (a *idArena) hex(prefix string, id [8]byte) string {
	n := len(prefix) + 16
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(idArenaSize, n))
	}
	start := len(a.buf)
	a.buf = append(a.buf, prefix...)
	const digits = "0123456789abcdef"
	for _, v := range id {
		a.buf = append(a.buf, digits[v>>4], digits[v&15])
	}
	return unsafe.String(&a.buf[start], n)
}

const lorem = "The quick brown fox jumps over the lazy dog while the model streams tokens to the client. "

func syntheticText(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(lorem, n/len(lorem)+1)[:n]
}

// reset starts a new batch.
func (rd *renderer) reset() {
	rd.traces = ptrace.NewTraces()
	for i := range rd.hasRes {
		if rd.hasRes[i] {
			rd.lastSpans[i] = rd.resSpans[i]
		}
		rd.hasRes[i] = false
		rd.resSpans[i] = 0
	}
	rd.spans = 0
}

// take returns the current batch and starts a new one.
func (rd *renderer) take() (ptrace.Traces, int) {
	t, n := rd.traces, rd.spans
	rd.reset()
	return t, n
}

func (rd *renderer) slice(res int) ptrace.SpanSlice {
	if !rd.hasRes[res] {
		all := rd.traces.ResourceSpans()
		if all.Len() == 0 {
			all.EnsureCapacity(len(rd.resources))
		}
		rs := all.AppendEmpty()
		rd.resources[res].CopyTo(rs.Resource().Attributes())
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(metadata.ScopeName)
		ss.Scope().SetVersion(rd.version)
		spans := ss.Spans()
		// Size the slice for as many spans as this resource had in the
		// previous batch, with some slack for the random spread.
		if n := rd.lastSpans[res]; n > 0 {
			spans.EnsureCapacity(n + n/8 + 4)
		}
		rd.byRes[res] = spans
		rd.hasRes[res] = true
	}
	return rd.byRes[res]
}

// sizeCheck makes every span writer check that it put exactly as many
// attributes as it sized the span's attribute map for. Tests set it; a
// miscount would cost an extra allocation, not a wrong span.
var sizeCheck bool

func checkSized(a pcommon.Map, n int) {
	if sizeCheck && a.Len() != n {
		panic(fmt.Sprintf("llm_loadgen: sized a span's attributes for %d, put %d: %v", n, a.Len(), a.AsRaw()))
	}
}

func putStr(m pcommon.Map, k, v string) {
	if k != "" && v != "" {
		m.PutStr(k, v)
	}
}

func putInt(m pcommon.Map, k string, v int) {
	if k != "" {
		m.PutInt(k, int64(v))
	}
}

// render appends the spans of r to the current batch.
func (rd *renderer) render(r *request) {
	ss := rd.slice(r.resource)
	before := rd.spans
	tid := pcommon.TraceID(r.traceID)
	conv := ""
	for i := range r.spans {
		s := &r.spans[i]
		sp := ss.AppendEmpty()
		setSpanIdentity(sp, r, s, tid)
		rd.spans++
		switch s.op {
		case opHTTP:
			rd.httpSpan(r, s, sp)
		case opChat:
			rd.chatSpan(r, s, sp, ss)
		case opEmbeddings:
			rd.embeddingsSpan(s, sp)
		case opRetrieval:
			rd.retrievalSpan(sp)
		case opRerank:
			rd.rerankSpan(s, sp)
		case opTool:
			rd.toolSpan(s, sp)
		case opAgent:
			if conv == "" && rd.d.attrs[fConversationID] != "" {
				conv = rd.ids.hex("conv_", r.spans[0].id)
			}
			rd.agentSpan(r, s, sp, conv)
		}
	}
	rd.resSpans[r.resource] += rd.spans - before
}

// setSpanIdentity sets the ids and timestamps of span s of request r.
func setSpanIdentity(sp ptrace.Span, r *request, s *spanRec, tid pcommon.TraceID) {
	sp.SetTraceID(tid)
	sp.SetSpanID(pcommon.SpanID(s.id))
	if s.parent >= 0 {
		sp.SetParentSpanID(pcommon.SpanID(r.spans[s.parent].id))
	}
	sp.SetStartTimestamp(pcommon.Timestamp(s.start))
	sp.SetEndTimestamp(pcommon.Timestamp(s.end))
}

func (rd *renderer) httpSpan(r *request, s *spanRec, sp ptrace.Span) {
	sc := &rd.g.scenarios[r.scenario]
	sp.SetName(sc.routeName)
	sp.SetKind(ptrace.SpanKindServer)
	a := sp.Attributes()
	n := 5 + b2i(sc.typ == config.ScenarioAgent) + b2i(s.status >= 400 || s.fault != nil)
	a.EnsureCapacity(n)
	a.PutStr("http.request.method", "POST")
	a.PutStr("http.route", sc.route)
	a.PutStr("url.path", sc.route)
	a.PutInt(genai.AttrHTTPResponseStatusCode, int64(s.status))
	a.PutStr(attrScenario, sc.typ)
	if sc.typ == config.ScenarioAgent {
		a.PutStr(attrAgentRole, s.role) // the user who asked the orchestrator
	}
	switch {
	case s.status >= 400:
		a.PutStr(genai.AttrErrorType, strconv.Itoa(s.status))
		if s.status >= 500 {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	case s.fault != nil:
		// The response had started (200) when the stream broke.
		a.PutStr(genai.AttrErrorType, s.fault.clientError)
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(s.fault.message)
	}
	checkSized(a, n)
}

// common writes the attributes every GenAI span of the dialect carries.
func (rd *renderer) common(a pcommon.Map, o op, m *modelState) {
	d := rd.d
	putStr(a, d.attrs[fOperation], d.opValue[o])
	putStr(a, d.kindKey, d.kindValue[o])
	if m != nil {
		putStr(a, d.attrs[fProvider], m.provider)
		key := d.modelKey[o]
		if key == "" {
			key = d.attrs[fRequestModel]
		}
		putStr(a, key, m.cfg.Name)
		putStr(a, genai.AttrServerAddress, m.cfg.ServerAddress)
	}
}

func setError(sp ptrace.Span, a pcommon.Map, f *faultSpec) {
	a.PutStr(genai.AttrErrorType, f.clientError)
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.Status().SetMessage(f.message)
}

func (rd *renderer) chatSpan(r *request, s *spanRec, sp ptrace.Span, ss ptrace.SpanSlice) {
	m := s.model
	sp.SetName(m.names[opChat])
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	n := rd.chatAttrCount(s)
	a.EnsureCapacity(n)
	rd.common(a, opChat, m)
	rd.chatRequestAttrs(a, s, sp)
	if s.fault != nil {
		setError(sp, a, s.fault)
	} else {
		rd.chatResponseAttrs(a, s)
	}
	checkSized(a, n)
	if rd.cfg.Stream.SpanPerChunk && s.chunks > 0 {
		rd.chunkSpans(r, s, sp, ss)
	}
}

// chatAttrCount is the number of attributes chatSpan puts on chat span s.
func (rd *renderer) chatAttrCount(s *spanRec) int {
	n := s.model.nAttrs[opChat] + rd.chatStatic + b2i(s.resend > 0) + rd.inContent
	if s.ttft >= 0 {
		n += rd.chatFirst
	}
	if s.fault != nil {
		n++
	} else {
		n += s.model.nRespModel + rd.chatOK
	}
	return n
}

// chatRequestAttrs puts the request side of chat span s: stream and sampling
// parameters, resends, the first-chunk time and events, the prompt content.
func (rd *renderer) chatRequestAttrs(a pcommon.Map, s *spanRec, sp ptrace.Span) {
	d := rd.d
	if d.attrs[fStream] != "" {
		a.PutBool(d.attrs[fStream], true)
	}
	if d.attrs[fTemperature] != "" {
		a.PutDouble(d.attrs[fTemperature], temperature)
	}
	putStr(a, d.invocationParams, rd.invocationParams)
	if s.resend > 0 {
		a.PutInt("http.request.resend_count", int64(s.resend))
	}
	if s.ttft >= 0 {
		if d.attrs[fTTFT] != "" {
			a.PutDouble(d.attrs[fTTFT], s.ttft*d.ttftScale)
		}
		if k := d.attrs[fResponseID]; k != "" {
			a.PutStr(k, rd.ids.hex("chatcmpl-", s.id))
		}
		rd.chunkEvents(s, sp)
	}
	if rd.cfg.Content.Enabled {
		putStr(a, d.attrs[fInputContent], rd.prompt)
	}
}

// chatResponseAttrs puts the response side of a successful chat span s:
// model, usage, finish reason and the completion content.
func (rd *renderer) chatResponseAttrs(a pcommon.Map, s *spanRec) {
	d := rd.d
	putStr(a, d.attrs[fResponseModel], s.model.cfg.Name)
	putInt(a, d.attrs[fInputTokens], s.in)
	putInt(a, d.attrs[fOutputTokens], s.out)
	putInt(a, d.attrs[fTotalTokens], s.in+s.out)
	putInt(a, d.attrs[fChoiceCount], 1)
	if k := d.attrs[fFinishReasons]; k != "" {
		if d.finishAsString {
			a.PutStr(k, s.finish)
		} else {
			a.PutEmptySlice(k).AppendEmpty().SetStr(s.finish)
		}
	}
	if rd.cfg.Content.Enabled {
		putStr(a, d.attrs[fOutputContent], rd.completion)
	}
}

func (rd *renderer) embeddingsSpan(s *spanRec, sp ptrace.Span) {
	d := rd.d
	sp.SetName(s.model.names[opEmbeddings])
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	n := s.model.nAttrs[opEmbeddings] + b2i(s.resend > 0) + rd.embStatic
	if s.fault != nil {
		n++
	} else {
		n += s.model.nRespModel + rd.embOK
	}
	a.EnsureCapacity(n)
	rd.common(a, opEmbeddings, s.model)
	if s.resend > 0 {
		a.PutInt("http.request.resend_count", int64(s.resend))
	}
	putStr(a, d.attrs[fEmbeddingInputType], "text")
	if s.fault != nil {
		setError(sp, a, s.fault)
	} else {
		putStr(a, d.attrs[fResponseModel], s.model.cfg.Name)
		putInt(a, d.attrs[fInputTokens], s.in)
		putInt(a, d.attrs[fTotalTokens], s.in)
		putInt(a, d.attrs[fEmbeddingDims], s.dims)
	}
	checkSized(a, n)
}

func (rd *renderer) retrievalSpan(sp ptrace.Span) {
	rc := &rd.cfg.RAG
	sp.SetName(rd.g.retrieveName)
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	a.EnsureCapacity(rd.retrieval)
	rd.common(a, opRetrieval, nil)
	a.PutStr("db.system.name", rc.VectorStore)
	putStr(a, "db.collection.name", rc.Collection)
	a.PutStr("db.operation.name", "query")
	a.PutInt("db.response.returned_rows", int64(rc.TopK))
	if rd.d.attrs[fOperation] == genai.AttrOperationName {
		putStr(a, "gen_ai.data_source.id", rc.Collection)
	}
	checkSized(a, rd.retrieval)
}

func (rd *renderer) rerankSpan(s *spanRec, sp ptrace.Span) {
	sp.SetName(s.model.names[opRerank])
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	n := s.model.nAttrs[opRerank] + 1
	a.EnsureCapacity(n)
	rd.common(a, opRerank, s.model)
	a.PutInt("rerank.top_n", int64(rd.cfg.RAG.TopK))
	checkSized(a, n)
}

func (rd *renderer) toolSpan(s *spanRec, sp ptrace.Span) {
	d := rd.d
	sp.SetName(rd.g.toolNames[s.task])
	sp.SetKind(ptrace.SpanKindInternal)
	a := sp.Attributes()
	n := rd.tool + b2i(d.attrs[fToolName] != "" && s.name != "")
	a.EnsureCapacity(n)
	rd.common(a, opTool, nil)
	putStr(a, d.attrs[fToolName], s.name)
	if k := d.attrs[fToolCallID]; k != "" {
		a.PutStr(k, rd.ids.hex("call_", s.id))
	}
	if d.attrs[fOperation] == genai.AttrOperationName {
		a.PutStr("gen_ai.tool.type", "function")
	}
	checkSized(a, n)
}

func (rd *renderer) agentSpan(r *request, s *spanRec, sp ptrace.Span, conv string) {
	d := rd.d
	sp.SetName(rd.g.agentNames[s.name])
	sp.SetKind(ptrace.SpanKindInternal)
	a := sp.Attributes()
	n := rd.agent + b2i(d.attrs[fAgentName] != "" && s.name != "") + b2i(s.task > 0) + b2i(s.fault != nil)
	a.EnsureCapacity(n)
	rd.common(a, opAgent, nil)
	putStr(a, d.attrs[fAgentName], s.name)
	if k := d.attrs[fAgentID]; k != "" {
		a.PutStr(k, rd.ids.hex("asst_", s.id))
	}
	putStr(a, d.attrs[fConversationID], conv)
	a.PutStr(attrAgentRole, s.role)
	if s.task > 0 {
		a.PutInt(attrAgentTask, int64(s.task))
	}
	addDependencyLinks(r, s, sp)
	if s.fault != nil {
		setError(sp, a, s.fault)
	}
	checkSized(a, n)
}

// addDependencyLinks links agent span s to the spans of the tasks it depends on.
func addDependencyLinks(r *request, s *spanRec, sp ptrace.Span) {
	if len(s.links) > 0 {
		sp.Links().EnsureCapacity(len(s.links))
	}
	for _, l := range s.links {
		ln := sp.Links().AppendEmpty()
		ln.SetTraceID(pcommon.TraceID(r.traceID))
		ln.SetSpanID(pcommon.SpanID(r.spans[l].id))
		ln.Attributes().PutStr(attrLinkType, "depends_on")
	}
}
