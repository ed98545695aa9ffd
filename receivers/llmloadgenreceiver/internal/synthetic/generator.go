package synthetic

import (
	"math"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

// opHTTP marks the app's HTTP server span at the root of every trace.
const opHTTP = numOps

// Finish reasons.
const (
	finishStop      = "stop"
	finishLength    = "length"
	finishToolCalls = "tool_calls"
)

// Agent roles (llm_loadgen.agent.role).
const (
	roleUser         = "user"
	roleOrchestrator = "orchestrator"
	roleAgent        = "agent"
)

var subAgentNames = []string{"researcher", "coder", "critic", "planner", "writer", "analyst", "reviewer", "retriever"}

// spanRec is one span of a simulated request, before a dialect renders it.
type spanRec struct {
	op     op
	parent int32 // index in request.spans; -1 for the root
	id     [8]byte
	start  int64 // unix nanoseconds
	end    int64

	model  *modelState
	in     int
	out    int
	ttft   float64 // seconds; < 0 when no chunk arrived
	chunks int
	finish string
	fault  *faultSpec // nil on success
	status int        // HTTP status (server span)
	resend int        // retry number of this attempt (http.request.resend_count)

	route string // server span
	name  string // tool or agent name
	role  string // agent role
	task  int    // task number within the orchestrator; 0 for none
	links []int32
	dims  int
}

// request is one simulated request: a trace.
type request struct {
	traceID  [16]byte
	resource int
	scenario int // index into generator.scenarios
	start    int64
	end      int64
	failed   bool
	spans    []spanRec
}

// modelState is a configured model with its samplers and precomputed names.
type modelState struct {
	cfg      *config.ModelConfig
	provider string // as the dialect spells it
	ttft     loadgen.Sampler
	itl      loadgen.Sampler
	in       loadgen.Sampler
	out      loadgen.Sampler
	names    [numOps]string // span names per op
	// chunkSpan names the per-chunk child spans (span_per_chunk).
	chunkSpan string
	// nAttrs is the number of attributes the renderer's common() puts per
	// op; nRespModel is 1 when the dialect records the response model.
	nAttrs     [numOps]int
	nRespModel int
}

type scenarioState struct {
	typ       string
	route     string
	routeName string // "POST <route>"
}

// picker draws an index by weight.
type picker struct{ cum []float64 }

func newPicker(weights []float64) picker {
	p := picker{cum: make([]float64, len(weights))}
	s := 0.0
	for i, w := range weights {
		s += w
		p.cum[i] = s
	}
	return p
}

func (p picker) pick(r *loadgen.Rand64) int {
	if len(p.cum) == 1 {
		return 0
	}
	u := r.Float64() * p.cum[len(p.cum)-1]
	for i, c := range p.cum {
		if u < c && (i == 0 || c > p.cum[i-1]) {
			return i
		}
	}
	return len(p.cum) - 1
}

// generator builds requests. It is not safe for concurrent use: one runner
// owns it, so that a seed reproduces the sequence.
type generator struct {
	cfg *config.Config
	d   *dialect
	rng *loadgen.Rand64

	scenarios []scenarioState
	scenPick  picker
	chat      []*modelState
	chatPick  picker
	emb       []*modelState
	embPick   picker
	faults    []fault
	rerank    *modelState

	toolLat      loadgen.Sampler
	retrievalLat loadgen.Sampler
	rerankLat    loadgen.Sampler
	toolNames    []string // span names per tool
	agentNames   map[string]string
	retrieveName string
	resources    int
	tokensChunk  int

	// faultAt counts down the model calls of the current request until its
	// fault applies.
	pending *fault
	faultAt int
}

var defaultRoutes = map[string]string{
	config.ScenarioChat:       "/v1/chat/completions",
	config.ScenarioRAG:        "/v1/rag/query",
	config.ScenarioAgent:      "/v1/agents/run",
	config.ScenarioEmbeddings: "/v1/embeddings",
}

func newGenerator(cfg *config.Config, seed uint64) *generator {
	d := dialects[cfg.Semconv]
	g := &generator{cfg: cfg, d: d, rng: loadgen.NewRand(seed), faults: newFaults(cfg.Faults), tokensChunk: cfg.Stream.TokensPerChunk}
	g.resources = cfg.Resources.Services * cfg.Resources.InstancesPerService
	g.initScenarios()
	g.initModels()
	src := g.rng.Source
	g.toolLat = loadgen.NewSampler(cfg.Agent.ToolLatency, src)
	g.retrievalLat = loadgen.NewSampler(cfg.RAG.RetrievalLatency, src)
	if cfg.RAG.RerankModel != "" {
		g.rerankLat = loadgen.NewSampler(cfg.RAG.RerankLatency, src)
		g.rerank = g.newModel(&config.ModelConfig{Name: cfg.RAG.RerankModel, Provider: "cohere", ServerAddress: "api.cohere.com"})
	}
	g.initNames()
	return g
}

// initScenarios resolves each configured scenario's route and builds the
// weighted scenario picker.
func (g *generator) initScenarios() {
	var sw []float64
	for _, s := range g.cfg.Scenarios {
		route := s.Route
		if route == "" {
			route = defaultRoutes[s.Type]
		}
		g.scenarios = append(g.scenarios, scenarioState{typ: s.Type, route: route, routeName: "POST " + route})
		sw = append(sw, s.Weight)
	}
	g.scenPick = newPicker(sw)
}

// initModels builds the state of every configured model, in config order,
// and the weighted pickers for chat and embedding models.
func (g *generator) initModels() {
	var cw, ew []float64
	for i := range g.cfg.Models {
		mc := &g.cfg.Models[i]
		m := g.newModel(mc)
		if mc.Embedding {
			g.emb = append(g.emb, m)
			ew = append(ew, mc.Weight)
		} else {
			g.chat = append(g.chat, m)
			cw = append(cw, mc.Weight)
		}
	}
	g.chatPick, g.embPick = newPicker(cw), newPicker(ew)
}

// initNames expands the span names of tools, agents and the retrieval step
// from the dialect's templates.
func (g *generator) initNames() {
	d := g.d
	for _, t := range g.cfg.Agent.Tools {
		g.toolNames = append(g.toolNames, expand(d.spanName[opTool], d.opValue[opTool], "", "", t, "", ""))
	}
	g.agentNames = map[string]string{roleOrchestrator: expand(d.spanName[opAgent], d.opValue[opAgent], "", "", "", roleOrchestrator, "")}
	for _, a := range subAgentNames {
		g.agentNames[a] = expand(d.spanName[opAgent], d.opValue[opAgent], "", "", "", a, "")
	}
	g.retrieveName = expand(d.spanName[opRetrieval], d.opValue[opRetrieval], "", "", "", "", g.cfg.RAG.Collection)
}

func (g *generator) newModel(mc *config.ModelConfig) *modelState {
	src := g.rng.Source
	m := &modelState{cfg: mc, provider: mc.Provider + g.d.providerSuffix}
	if mc.TTFT != (config.Distribution{}) {
		m.ttft = loadgen.NewSampler(mc.TTFT, src)
	}
	if mc.InputTokens != (config.Distribution{}) {
		m.in = loadgen.NewSampler(mc.InputTokens, src)
	}
	if !mc.Embedding && mc.OutputTokens != (config.Distribution{}) {
		m.itl = loadgen.NewSampler(mc.ITL, src)
		m.out = loadgen.NewSampler(mc.OutputTokens, src)
	}
	for o := range numOps {
		m.names[o] = expand(g.d.spanName[o], g.d.opValue[o], mc.Name, mc.Provider, "", "", "")
	}
	m.chunkSpan = strings.ReplaceAll(g.d.chunkSpan, "{provider}", mc.Provider)
	return m
}

// expand fills a span-name template.
func expand(tmpl, opv, model, provider, tool, agent, collection string) string {
	return strings.NewReplacer("{op}", opv, "{model}", model, "{provider}", provider, "{tool}", tool, "{agent}", agent, "{collection}", collection).Replace(tmpl)
}

func (g *generator) spanID() (id [8]byte) {
	v := g.rng.Uint64() | 1 // never all-zero
	for i := range 8 {
		id[i] = byte(v >> (8 * i))
	}
	return id
}

func (g *generator) traceID() (id [16]byte) {
	a, b := g.rng.Uint64(), g.rng.Uint64()|1
	for i := range 8 {
		id[i] = byte(a >> (8 * i))
		id[8+i] = byte(b >> (8 * i))
	}
	return id
}

func nanos(s float64) int64 { return int64(math.Round(s * 1e9)) }

// uniform returns a draw in [lo, hi) seconds as nanoseconds.
func (g *generator) uniform(lo, hi float64) int64 { return nanos(lo + (hi-lo)*g.rng.Float64()) }

func (g *generator) add(r *request, s spanRec) int32 {
	s.id = g.spanID()
	r.spans = append(r.spans, s)
	return int32(len(r.spans) - 1)
}

// build fills r with a new request starting at start (unix nanoseconds).
// r's span slice is reused.
func (g *generator) build(r *request, start int64) {
	r.spans = r.spans[:0]
	r.traceID = g.traceID()
	r.resource = int(g.rng.Uint64N(uint64(g.resources)))
	r.scenario = g.scenPick.pick(g.rng)
	r.start = start
	r.failed = false
	g.pending = g.pickFault()
	g.faultAt = 0
	sc := &g.scenarios[r.scenario]

	root := g.add(r, spanRec{op: opHTTP, parent: -1, start: start, route: sc.routeName, role: roleUser, status: 200})
	t := start + g.uniform(0.0003, 0.002)
	res := g.runScenario(r, sc.typ, root, t)
	rs := &r.spans[root]
	rs.end = res.end + g.uniform(0.0002, 0.001)
	if res.fault != nil {
		rs.status = res.fault.status
		rs.fault = res.fault
		r.failed = true
	}
	r.end = rs.end
}

// runScenario simulates the work of one scenario type under the root span
// at t and returns the result of its last call.
func (g *generator) runScenario(r *request, typ string, root int32, t int64) callResult {
	var res callResult
	switch typ {
	case config.ScenarioChat:
		res = g.chatCall(r, root, t, g.chat[g.chatPick.pick(g.rng)], 0, finishStop)
	case config.ScenarioEmbeddings:
		res = g.embCall(r, root, t)
	case config.ScenarioRAG:
		res = g.rag(r, root, t)
	case config.ScenarioAgent:
		if g.pending != nil {
			g.faultAt = int(g.rng.Uint64N(uint64(g.cfg.Agent.MinSteps)))
		}
		res = g.agent(r, root, t, 0, roleOrchestrator, roleOrchestrator, 0)
	}
	return res
}

type callResult struct {
	end   int64
	fault *faultSpec
	span  int32
}

// takeFault returns the request's fault if it applies to this model call.
func (g *generator) takeFault(streaming bool) *fault {
	f := g.pending
	if f == nil {
		return nil
	}
	if g.faultAt > 0 {
		g.faultAt--
		return nil
	}
	if f.spec.streamingOnly && !streaming {
		return nil
	}
	g.pending = nil
	return f
}

// retries simulates rate limiting: attempts the provider refuses with 429
// before the call goes through. It returns the time the final attempt starts
// and whether the client gave up.
func (g *generator) retries(r *request, parent int32, t int64, m *modelState, o op, f *fault) (int64, int, bool) {
	rejections := 1 + int(g.rng.Uint64N(uint64(f.maxRetries+1)))
	gaveUp := rejections > f.maxRetries
	n := rejections
	if gaveUp {
		n = f.maxRetries + 1
	}
	for i := range n {
		end := t + g.uniform(0.02, 0.08)
		g.add(r, spanRec{op: o, parent: parent, start: t, end: end, model: m, ttft: -1, fault: f.spec, resend: i, in: 0})
		if i == n-1 && gaveUp {
			return end, i, true
		}
		t = end + nanos(f.retryAfter)
	}
	return t, n, false
}

// chatCall simulates one streaming chat completion.
func (g *generator) chatCall(r *request, parent int32, t int64, m *modelState, extraIn int, finish string) callResult {
	f := g.takeFault(true)
	in := m.in.Tokens(1) + extraIn
	out := m.out.Tokens(1)
	ttft := m.ttft.Sample()
	itl := m.itl.Sample()
	resend := 0
	if f != nil && f.spec.kind == config.FaultRateLimit {
		var gaveUp bool
		t, resend, gaveUp = g.retries(r, parent, t, m, opChat, f)
		if gaveUp {
			return callResult{end: t, fault: f.spec, span: int32(len(r.spans) - 1)}
		}
		f = nil
	}
	s := spanRec{op: opChat, parent: parent, start: t, model: m, in: in, ttft: ttft, resend: resend}
	ctx := m.cfg.ContextWindow
	if in >= ctx && f == nil {
		f = &fault{spec: ptr(faultTable[config.FaultContextLength])}
	}
	if f != nil {
		g.failChat(&s, f, out, itl)
		idx := g.add(r, s)
		return callResult{end: s.end, fault: f.spec, span: idx}
	}
	g.completeChat(&s, out, itl, finish)
	idx := g.add(r, s)
	return callResult{end: s.end, span: idx}
}

// failChat shapes a chat span that fault f ends: its duration, the tokens it
// produced before failing and its chunk count.
func (g *generator) failChat(s *spanRec, f *fault, out int, itl float64) {
	t, ttft, ctx := s.start, s.ttft, s.model.cfg.ContextWindow
	s.fault = f.spec
	switch f.spec.kind {
	case config.FaultContextLength:
		if s.in < ctx {
			s.in = ctx + 1 + int(g.rng.Uint64N(uint64(ctx/10+1)))
		}
		s.ttft = -1
		s.end = t + g.uniform(0.03, 0.1)
	case config.FaultOverloaded:
		s.ttft = -1
		s.end = t + g.uniform(0.01, 0.2)
	case config.FaultTimeout:
		s.ttft = -1
		s.end = t + nanos(f.timeout)
	case config.FaultMidStream, config.FaultCancel:
		produced := int(g.rng.Uint64N(uint64(out)))
		if f.spec.kind == config.FaultMidStream && produced == 0 {
			produced = 1
		}
		if produced == 0 {
			s.ttft = -1
			s.end = t + nanos(ttft*g.rng.Float64())
		} else {
			s.out = produced
			s.end = t + nanos(ttft+itl*float64(produced-1))
		}
	}
	s.chunks = (s.out + g.tokensChunk - 1) / g.tokensChunk
}

// completeChat finishes a successful chat span: out tokens (cut to the
// context window, with finish reason length), chunks and end time.
func (g *generator) completeChat(s *spanRec, out int, itl float64, finish string) {
	s.finish = finish
	if ctx := s.model.cfg.ContextWindow; s.in+out > ctx {
		out = ctx - s.in
		s.finish = finishLength
	}
	s.out = out
	s.chunks = (out + g.tokensChunk - 1) / g.tokensChunk
	s.end = s.start + nanos(s.ttft+itl*float64(out-1))
}

func ptr[T any](v T) *T { return &v }

// embCall simulates one embeddings call.
func (g *generator) embCall(r *request, parent int32, t int64) callResult {
	m := g.emb[g.embPick.pick(g.rng)]
	f := g.takeFault(false)
	in := m.in.Tokens(1)
	lat := m.ttft.Sample()
	resend := 0
	if f != nil && f.spec.kind == config.FaultRateLimit {
		var gaveUp bool
		t, resend, gaveUp = g.retries(r, parent, t, m, opEmbeddings, f)
		if gaveUp {
			return callResult{end: t, fault: f.spec, span: int32(len(r.spans) - 1)}
		}
		f = nil
	}
	s := spanRec{op: opEmbeddings, parent: parent, start: t, model: m, in: in, ttft: -1, resend: resend, dims: m.cfg.EmbeddingDimensions}
	ctx := m.cfg.ContextWindow
	if in > ctx && f == nil {
		f = &fault{spec: ptr(faultTable[config.FaultContextLength])}
	}
	if f != nil {
		g.failEmbeddings(&s, f, lat)
		idx := g.add(r, s)
		return callResult{end: s.end, fault: f.spec, span: idx}
	}
	s.end = t + nanos(lat)
	idx := g.add(r, s)
	return callResult{end: s.end, span: idx}
}

// failEmbeddings sets the end of an embeddings span that fault f ends; lat
// is the latency the call would have had.
func (g *generator) failEmbeddings(s *spanRec, f *fault, lat float64) {
	s.fault = f.spec
	switch f.spec.kind {
	case config.FaultTimeout:
		s.end = s.start + nanos(f.timeout)
	case config.FaultCancel:
		s.end = s.start + nanos(lat*g.rng.Float64())
	default:
		s.end = s.start + g.uniform(0.01, 0.1)
	}
}

// rag: query embedding → vector-store retrieval → rerank → chat with the
// retrieved context.
func (g *generator) rag(r *request, parent int32, t int64) callResult {
	res := g.embCall(r, parent, t)
	if res.fault != nil {
		return res
	}
	t = res.end + g.uniform(0.0001, 0.0005)
	end := t + nanos(g.retrievalLat.Sample())
	g.add(r, spanRec{op: opRetrieval, parent: parent, start: t, end: end, ttft: -1})
	t = end
	if g.rerank != nil {
		end = t + nanos(g.rerankLat.Sample())
		g.add(r, spanRec{op: opRerank, parent: parent, start: t, end: end, model: g.rerank, ttft: -1})
		t = end
	}
	// Retrieved passages of ~200 tokens each enlarge the prompt.
	ctxTokens := g.cfg.RAG.TopK * (150 + int(g.rng.Uint64N(100)))
	return g.chatCall(r, parent, t+g.uniform(0.0001, 0.0005), g.chat[g.chatPick.pick(g.rng)], ctxTokens, finishStop)
}

// chunkOffsets returns, for chunk i of n, its arrival time relative to the
// span start: the first at ttft, the rest evenly spread up to the end with a
// deterministic jitter of up to ±20 % of a gap.
func chunkOffset(s *spanRec, i int) int64 {
	first := nanos(s.ttft)
	if s.chunks <= 1 || i == 0 {
		return first
	}
	dur := s.end - s.start - first
	gap := float64(dur) / float64(s.chunks-1)
	h := uint64(s.id[0]) | uint64(i)<<8
	h ^= h >> 7
	h *= 0x9e3779b97f4a7c15
	j := (float64(h>>40)/float64(1<<24) - 0.5) * 0.4
	if i == s.chunks-1 {
		j = 0
	}
	return first + int64(gap*(float64(i)+j))
}
