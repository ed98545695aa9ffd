package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Attribute names the receiver adds that no convention defines.
const (
	attrAgentRole = "llm_loadgen.agent.role"
	attrAgentTask = "llm_loadgen.agent.task"
	attrLinkType  = "llm_loadgen.link.type"
	attrScenario  = "llm_loadgen.scenario"
	attrChunkIdx  = "llm_loadgen.chunk.index"
)

const temperature = 0.7

// renderer turns requests into pdata in one dialect. It keeps per-batch
// state and is not safe for concurrent use.
type renderer struct {
	cfg       *Config
	d         *dialect
	g         *generator
	resources []pcommon.Map
	version   string

	traces ptrace.Traces
	byRes  []ptrace.SpanSlice
	hasRes []bool
	spans  int // spans in the current batch

	prompt, completion string // synthetic content, when enabled
	invocationParams   string
	spanPerChunkName   []string // per chat model
}

func newRenderer(cfg *Config, g *generator, version string) *renderer {
	rd := &renderer{cfg: cfg, d: g.d, g: g, version: version}
	rc := cfg.Resources
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
			rd.resources = append(rd.resources, m)
		}
	}
	rd.byRes = make([]ptrace.SpanSlice, len(rd.resources))
	rd.hasRes = make([]bool, len(rd.resources))
	if cfg.Content.Enabled {
		rd.prompt = syntheticText(cfg.Content.PromptBytes)
		rd.completion = syntheticText(cfg.Content.CompletionBytes)
	}
	if g.d.invocationParams != "" {
		rd.invocationParams = `{"stream":true,"temperature":` + strconv.FormatFloat(temperature, 'f', -1, 64) + `}`
	}
	rd.reset()
	return rd
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
		rd.hasRes[i] = false
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
		rs := rd.traces.ResourceSpans().AppendEmpty()
		rd.resources[res].CopyTo(rs.Resource().Attributes())
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(metadata.ScopeName)
		ss.Scope().SetVersion(rd.version)
		rd.byRes[res] = ss.Spans()
		rd.hasRes[res] = true
	}
	return rd.byRes[res]
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
	tid := pcommon.TraceID(r.traceID)
	for i := range r.spans {
		s := &r.spans[i]
		sp := ss.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID(s.id))
		if s.parent >= 0 {
			sp.SetParentSpanID(pcommon.SpanID(r.spans[s.parent].id))
		}
		sp.SetStartTimestamp(pcommon.Timestamp(s.start))
		sp.SetEndTimestamp(pcommon.Timestamp(s.end))
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
			rd.agentSpan(r, s, sp)
		}
	}
}

func (rd *renderer) httpSpan(r *request, s *spanRec, sp ptrace.Span) {
	sc := &rd.g.scenarios[r.scenario]
	sp.SetName(sc.routeName)
	sp.SetKind(ptrace.SpanKindServer)
	a := sp.Attributes()
	a.EnsureCapacity(7)
	a.PutStr("http.request.method", "POST")
	a.PutStr("http.route", sc.route)
	a.PutStr("url.path", sc.route)
	a.PutInt("http.response.status_code", int64(s.status))
	a.PutStr(attrScenario, sc.typ)
	if sc.typ == scenarioAgent {
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
	d := rd.d
	m := s.model
	sp.SetName(m.names[opChat])
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	a.EnsureCapacity(16)
	rd.common(a, opChat, m)
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
		putStr(a, d.attrs[fResponseID], hexID("chatcmpl-", s.id))
		rd.chunkEvents(s, sp)
	}
	if rd.cfg.Content.Enabled {
		putStr(a, d.attrs[fInputContent], rd.prompt)
	}
	if s.fault != nil {
		setError(sp, a, s.fault)
	} else {
		putStr(a, d.attrs[fResponseModel], m.cfg.Name)
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
	if rd.cfg.Stream.SpanPerChunk && s.chunks > 0 {
		rd.chunkSpans(r, s, sp, ss)
	}
}

func (rd *renderer) chunkEvents(s *spanRec, sp ptrace.Span) {
	n := 0
	switch rd.cfg.Stream.ChunkEvents {
	case chunkEventsFirst:
		n = min(1, s.chunks)
	case chunkEventsAll:
		n = s.chunks
	}
	if n == 0 {
		return
	}
	ev := sp.Events()
	ev.EnsureCapacity(n)
	for i := range n {
		e := ev.AppendEmpty()
		e.SetName(rd.d.chunkEvent)
		e.SetTimestamp(pcommon.Timestamp(s.start + chunkOffset(s, i)))
		if n > 1 {
			e.Attributes().PutInt(attrChunkIdx, int64(i))
		}
		if i == 0 && rd.d.attrs[fTTFT] != "" {
			e.Attributes().PutDouble(rd.d.attrs[fTTFT], s.ttft*rd.d.ttftScale)
		}
	}
}

// chunkSpanID derives the id of chunk span i from its parent's id without
// drawing from the generator: the parent's id with its last three bytes
// XORed with i+1. It never equals the parent's id (i+1 is not zero), the
// chunks of one parent never share one (up to 2^24-1 chunks), and it is
// never all-zero (the first byte is the parent's, which is odd).
func chunkSpanID(parent [8]byte, i int) [8]byte {
	n := uint32(i + 1)
	parent[5] ^= byte(n >> 16)
	parent[6] ^= byte(n)
	parent[7] ^= byte(n >> 8)
	return parent
}

func (rd *renderer) chunkSpans(r *request, s *spanRec, parent ptrace.Span, ss ptrace.SpanSlice) {
	n := s.chunks
	if c := rd.cfg.Stream.MaxChunkSpans; c > 0 && n > c {
		n = c
	}
	name := strings.ReplaceAll(rd.d.chunkSpan, "{provider}", s.model.cfg.Provider)
	prev := s.start
	for i := range n {
		c := ss.AppendEmpty()
		c.SetTraceID(parent.TraceID())
		c.SetParentSpanID(parent.SpanID())
		c.SetSpanID(pcommon.SpanID(chunkSpanID(s.id, i)))
		c.SetName(name)
		c.SetKind(ptrace.SpanKindInternal)
		at := s.start + chunkOffset(s, i)
		c.SetStartTimestamp(pcommon.Timestamp(prev))
		c.SetEndTimestamp(pcommon.Timestamp(at))
		c.Attributes().PutInt(attrChunkIdx, int64(i))
		prev = at
		rd.spans++
	}
	_ = r
}

func (rd *renderer) embeddingsSpan(s *spanRec, sp ptrace.Span) {
	d := rd.d
	sp.SetName(s.model.names[opEmbeddings])
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	a.EnsureCapacity(10)
	rd.common(a, opEmbeddings, s.model)
	if s.resend > 0 {
		a.PutInt("http.request.resend_count", int64(s.resend))
	}
	putStr(a, d.attrs[fEmbeddingInputType], "text")
	if s.fault != nil {
		setError(sp, a, s.fault)
		return
	}
	putStr(a, d.attrs[fResponseModel], s.model.cfg.Name)
	putInt(a, d.attrs[fInputTokens], s.in)
	putInt(a, d.attrs[fTotalTokens], s.in)
	putInt(a, d.attrs[fEmbeddingDims], s.dims)
}

func (rd *renderer) retrievalSpan(sp ptrace.Span) {
	rc := &rd.cfg.RAG
	sp.SetName(rd.g.retrieveName)
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	a.EnsureCapacity(7)
	rd.common(a, opRetrieval, nil)
	a.PutStr("db.system.name", rc.VectorStore)
	putStr(a, "db.collection.name", rc.Collection)
	a.PutStr("db.operation.name", "query")
	a.PutInt("db.response.returned_rows", int64(rc.TopK))
	if rd.d.attrs[fOperation] == genai.AttrOperationName {
		putStr(a, "gen_ai.data_source.id", rc.Collection)
	}
}

func (rd *renderer) rerankSpan(s *spanRec, sp ptrace.Span) {
	sp.SetName(s.model.names[opRerank])
	sp.SetKind(ptrace.SpanKindClient)
	a := sp.Attributes()
	a.EnsureCapacity(6)
	rd.common(a, opRerank, s.model)
	a.PutInt("rerank.top_n", int64(rd.cfg.RAG.TopK))
}

func (rd *renderer) toolSpan(s *spanRec, sp ptrace.Span) {
	d := rd.d
	sp.SetName(rd.g.toolNames[s.task])
	sp.SetKind(ptrace.SpanKindInternal)
	a := sp.Attributes()
	a.EnsureCapacity(5)
	rd.common(a, opTool, nil)
	putStr(a, d.attrs[fToolName], s.name)
	putStr(a, d.attrs[fToolCallID], hexID("call_", s.id))
	if d.attrs[fOperation] == genai.AttrOperationName {
		a.PutStr("gen_ai.tool.type", "function")
	}
}

func (rd *renderer) agentSpan(r *request, s *spanRec, sp ptrace.Span) {
	d := rd.d
	sp.SetName(rd.g.agentNames[s.name])
	sp.SetKind(ptrace.SpanKindInternal)
	a := sp.Attributes()
	a.EnsureCapacity(7)
	rd.common(a, opAgent, nil)
	putStr(a, d.attrs[fAgentName], s.name)
	putStr(a, d.attrs[fAgentID], hexID("asst_", s.id))
	putStr(a, d.attrs[fConversationID], hexID("conv_", r.spans[0].id))
	a.PutStr(attrAgentRole, s.role)
	if s.task > 0 {
		a.PutInt(attrAgentTask, int64(s.task))
	}
	for _, l := range s.links {
		ln := sp.Links().AppendEmpty()
		ln.SetTraceID(pcommon.TraceID(r.traceID))
		ln.SetSpanID(pcommon.SpanID(r.spans[l].id))
		ln.Attributes().PutStr(attrLinkType, "depends_on")
	}
	if s.fault != nil {
		setError(sp, a, s.fault)
	}
}
