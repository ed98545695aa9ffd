package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

type endpoint int

const (
	endpointChat endpoint = iota
	endpointText
)

func (e endpoint) path() string {
	if e == endpointChat {
		return "/v1/chat/completions"
	}
	return "/v1/completions"
}

type completionRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
		// ContinuousUsageStats (vLLM) puts the usage so far on every chunk.
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	User                string `json:"user"`
	MaxTokens           *int   `json:"max_tokens"`
	MaxCompletionTokens *int   `json:"max_completion_tokens"`
	IgnoreEOS           bool   `json:"ignore_eos"`
}

// promptTokens estimates a prompt's length at four bytes per token plus a
// few tokens of chat framing per message.
func (q *completionRequest) promptTokens() int {
	n := 0
	for _, m := range q.Messages {
		n += 4 + (textLen(m.Content)+3)/4
	}
	n += (textLen(q.Prompt) + 3) / 4
	return max(n, 1)
}

// textLen is the length of a JSON string's text (of the raw JSON for any
// other value, e.g. content parts).
func textLen(raw json.RawMessage) int {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return len(s)
	}
	return len(raw)
}

// plan is what the latency model decided for one request.
type plan struct {
	ttft       time.Duration
	forcedTTFT bool // X-Mock-Ttft-Ms set it: not slowed by the batch
	itl        time.Duration
	jitter     float64
	tokens     int
	finish     string
	faultAfter int // content chunks before a mid-stream fault
	// wordOffset is the answer's first word (0 but for session turns).
	wordOffset int
	cached     int   // prompt tokens the prefix cache served
	cacheSeq   int64 // the prefix cache lookup's order
}

var words = []string{" the", " model", " streams", " tokens", " over", " server", "-sent", " events", " while", " the",
	" client", " measures", " each", " gap", ",", " and", " reports", " latency", ".", " Then"}

// handleCompletion serves chat completions and text completions.
func (s *Server) handleCompletion(ep endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// A server takes a request up once its body is in, which a client
		// may write long after the header: the request's clocks and its
		// span start then.
		raw, readErr := readBody(w, r)
		if cutBody(readErr) {
			s.cutBodies.Add(1) // the client went before the whole request came
			return
		}
		n := s.seq.Add(1)
		s.requests.Add(1)
		rec := Record{
			ID: fmt.Sprintf("%s-%x-%d", idPrefix(ep), s.seed&0xffffff, n), Endpoint: ep.path(),
			Traceparent: r.Header.Get("traceparent"), Tracestate: r.Header.Get("tracestate"),
			Received: time.Now(), Arrived: arrivedAt(r),
		}
		e := &entry{rec: Record{ID: rec.ID}, done: make(chan struct{})}
		s.hist.add(e)
		ctx, span := s.startSpan(r, "chat")
		defer s.finishCompletion(e, &rec, span)
		w.Header().Set(HeaderRequestID, rec.ID)

		q, ok := s.readCompletionRequest(w, raw, readErr, ep, &rec, span)
		if !ok {
			return
		}
		rng := s.rng(n)
		fault, p, ok := s.planCompletion(w, r, &q, rng, &rec, span)
		if !ok {
			return
		}
		s.serveCompletion(ctx, w, r, ep, &q, p, fault, rng, &rec, span)
	}
}

// finishCompletion ends the request's span and files its record.
func (s *Server) finishCompletion(e *entry, rec *Record, span trace.Span) {
	rec.EndAt = time.Now()
	if rec.ClientGone {
		s.gone.Add(1)
	}
	span.SetAttributes(attribute.Int("http.response.status_code", rec.Status),
		attribute.Int("gen_ai.usage.output_tokens", rec.SentTokens),
		attribute.Int("gen_ai.usage.input_tokens", rec.PromptTokens))
	if rec.Status == http.StatusOK {
		t := timesOf(rec)
		setServerTimes(span, rec, t)
		s.metrics.observe(rec.Model, rec, t)
	}
	span.End()
	s.hist.finish(e, rec)
}

// maxBody bounds a request body.
const maxBody = 32 << 20

// readBody reads r's body to its end (at most maxBody bytes). Reading it
// to its end also lets net/http watch the connection, so that a client
// leaving while queued cancels r.Context().
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
}

// cutBody reports a body read that failed for another reason than its
// size: the client closed or reset the connection before the body ended.
func cutBody(err error) bool {
	var mbe *http.MaxBytesError
	return err != nil && !errors.As(err, &mbe)
}

// readCompletionRequest decodes the body raw (readErr: its read failed),
// names the span after the request and checks the model; false when it
// answered an error.
func (s *Server) readCompletionRequest(w http.ResponseWriter, raw []byte, readErr error, ep endpoint, rec *Record, span trace.Span) (completionRequest, bool) {
	var q completionRequest
	err := readErr
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(raw)).Decode(&q)
	}
	if err != nil {
		rec.Status = http.StatusBadRequest
		setSpanError(span, "400")
		writeError(w, rec.Status, "invalid_request_error", "", "request body is not valid JSON: "+err.Error())
		return q, false
	}
	if q.Model == "" {
		q.Model = s.cfg.Models[0]
	}
	rec.Model, rec.Stream = q.Model, q.Stream
	rec.IncludeUsage = q.StreamOptions != nil && q.StreamOptions.IncludeUsage
	rec.PromptTokens = q.promptTokens()
	op := "chat"
	if ep == endpointText {
		op = "text_completion"
	}
	span.SetName(op + " " + q.Model)
	span.SetAttributes(attribute.String("gen_ai.operation.name", op), attribute.String("gen_ai.request.model", q.Model),
		attribute.Bool("gen_ai.request.stream", q.Stream), attribute.String("gen_ai.response.id", rec.ID))
	if !s.hasModel(q.Model) {
		rec.Status = http.StatusNotFound
		setSpanError(span, "404")
		writeError(w, rec.Status, "invalid_request_error", "model", fmt.Sprintf("The model `%s` does not exist.", q.Model))
		return q, false
	}
	return q, true
}

// planCompletion picks the request's fault and plans its answer; false when
// it answered an error (a bad override header).
func (s *Server) planCompletion(w http.ResponseWriter, r *http.Request, q *completionRequest, rng *rand.Rand, rec *Record, span trace.Span) (string, plan, bool) {
	fault, err := s.pickFault(r, rng)
	if err != nil {
		rec.Status = http.StatusBadRequest
		writeError(w, rec.Status, "invalid_request_error", HeaderFault, err.Error())
		return fault, plan{}, false
	}
	p, err := s.plan(r, q, rng, rec.PromptTokens)
	if err != nil {
		rec.Status = http.StatusBadRequest
		writeError(w, rec.Status, "invalid_request_error", "", err.Error())
		return fault, p, false
	}
	rec.Fault = fault
	if fault != FaultNone {
		s.faults.Add(1)
		s.faultsByKind[fault].Add(1)
		span.SetAttributes(attribute.String("mockllm.fault", fault))
	}
	rec.PlannedTokens, rec.PlannedTTFT, rec.PlannedITL, rec.CachedTokens, rec.CacheSeq = p.tokens, p.ttft, p.itl, p.cached, p.cacheSeq
	if q.User != "" {
		rec.Session = q.User
		rec.SessionTurn, rec.HistoryChecked, rec.HistoryOK = s.sessions.begin(q.User, q)
		if rec.HistoryChecked && !rec.HistoryOK {
			s.historyMismatches.Add(1)
		}
		p.wordOffset = int(s.seq.Load() % uint64(len(words)))
	}
	return fault, p, true
}

// serveCompletion answers a planned request: the refusals first (context
// length, refusing faults, a full queue), then the stream or the unary
// answer once admitted.
func (s *Server) serveCompletion(ctx context.Context, w http.ResponseWriter, r *http.Request, ep endpoint, q *completionRequest, p plan, fault string, rng *rand.Rand, rec *Record, span trace.Span) {
	if s.tooLong(w, q, fault, rec, span) || s.refuse(w, fault, rec, span) {
		return
	}
	sl, ok := s.admit(w, r, rec, span)
	if !ok {
		return
	}
	defer sl.release()
	if fault == FaultSlowHeaders && !sleepUntil(r.Context(), time.Now().Add(s.cfg.SlowHeaders)) {
		rec.ClientGone = true
		return
	}
	if q.Stream {
		s.stream(ctx, w, ep, q, p, fault, rng, sl, rec, span)
		return
	}
	s.unary(w, r, ep, q, p, rng, sl, rec, span)
}

// tooLong answers the requests whose prompt and maximum output exceed the
// context window (or that carry the context-length fault); true when it did.
func (s *Server) tooLong(w http.ResponseWriter, q *completionRequest, fault string, rec *Record, span trace.Span) bool {
	maxTok := requestedMax(q)
	if fault != FaultContextLength && rec.PromptTokens+maxTok <= s.cfg.ContextWindow {
		return false
	}
	rec.Status = http.StatusBadRequest
	setSpanError(span, "400")
	writeError(w, rec.Status, "invalid_request_error", "messages", fmt.Sprintf(
		"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		s.cfg.ContextWindow, rec.PromptTokens+maxTok, rec.PromptTokens, maxTok))
	return true
}

// refuse answers the faults that refuse a request before it is served;
// true when it did.
func (s *Server) refuse(w http.ResponseWriter, fault string, rec *Record, span trace.Span) bool {
	switch fault {
	case FaultRateLimit:
		rec.Status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.cfg.RetryAfter.Seconds()))))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(s.cfg.RetryAfter.Milliseconds(), 10))
		setSpanError(span, "429")
		writeError(w, rec.Status, "requests", "", "Rate limit reached for requests. Please try again later.")
		return true
	case FaultOverloaded:
		writeOverloaded(w, rec, span)
		return true
	}
	return false
}

// writeOverloaded is the 503 of the overloaded fault and of a full queue.
func writeOverloaded(w http.ResponseWriter, rec *Record, span trace.Span) {
	rec.Status = http.StatusServiceUnavailable
	setSpanError(span, "503")
	writeError(w, rec.Status, "server_error", "", "The engine is currently overloaded, please try again later.")
}

func idPrefix(ep endpoint) string {
	if ep == endpointChat {
		return "chatcmpl"
	}
	return "cmpl"
}

func requestedMax(q *completionRequest) int {
	if q.MaxCompletionTokens != nil {
		return *q.MaxCompletionTokens
	}
	if q.MaxTokens != nil {
		return *q.MaxTokens
	}
	return 0
}

// plan applies the latency model and the request's overrides.
func (s *Server) plan(r *http.Request, q *completionRequest, rng *rand.Rand, promptTokens int) (plan, error) {
	p := plan{jitter: s.cfg.Jitter, finish: "stop"}
	p.cached, p.cacheSeq = s.cachedTokens(q, promptTokens)
	p.ttft = jitter(rng, s.cfg.TTFT+time.Duration(promptTokens-p.cached)*s.cfg.PrefillPerToken, s.cfg.Jitter)
	p.itl = s.cfg.ITL
	if v, ok, err := headerInt(r, HeaderTTFT); err != nil {
		return p, err
	} else if ok {
		p.ttft, p.forcedTTFT = time.Duration(v)*time.Millisecond, true
	}
	if v, ok, err := headerInt(r, HeaderITL); err != nil {
		return p, err
	} else if ok {
		p.itl = time.Duration(v) * time.Millisecond
	}
	p.tokens = s.cfg.OutputTokens
	if s.cfg.OutputJitter > 0 {
		p.tokens = max(1, int(math.Round(float64(s.cfg.OutputTokens)*(1-s.cfg.OutputJitter+2*s.cfg.OutputJitter*rng.Float64()))))
	}
	maxTok := requestedMax(q)
	if maxTok > 0 && (q.IgnoreEOS || p.tokens > maxTok) {
		p.tokens, p.finish = maxTok, "length"
	}
	if v, ok, err := headerInt(r, HeaderOutputTokens); err != nil {
		return p, err
	} else if ok {
		p.tokens, p.finish = max(v, 1), "stop"
	}
	chunks := (p.tokens + s.cfg.TokensPerChunk - 1) / s.cfg.TokensPerChunk
	p.faultAfter = max(1, chunks/2)
	if v, ok, err := headerInt(r, HeaderFaultAfter); err != nil {
		return p, err
	} else if ok {
		p.faultAfter = v
	}
	return p, nil
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// unary answers a non-streaming request after the whole generation time.
func (s *Server) unary(w http.ResponseWriter, r *http.Request, ep endpoint, q *completionRequest, p plan, rng *rand.Rand, sl *slot, rec *Record, span trace.Span) {
	// The answer is generated token by token as a stream would be: each
	// gap batch-slowed as it starts, each token taking its KV cache.
	due := rec.Received.Add(rec.QueueWait + s.prefill(p))
	for i := 0; i < p.tokens; i++ {
		if i > 0 {
			due = due.Add(slowed(jitter(rng, p.itl, p.jitter), s.eng.slowdown(s.cfg.BatchSlowdown)))
		}
		var ok bool
		if due, ok = s.tokensDue(r.Context(), sl, 1, due, rec, span); !ok {
			rec.ClientGone = true
			return
		}
	}
	text := make([]byte, 0, p.tokens*7)
	text = appendWords(text, p.wordOffset, p.tokens)
	usage := map[string]int{"prompt_tokens": rec.PromptTokens, "completion_tokens": p.tokens, "total_tokens": rec.PromptTokens + p.tokens}
	var choice map[string]any
	object := "chat.completion"
	if ep == endpointChat {
		choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(text)}, "logprobs": nil, "finish_reason": p.finish}
	} else {
		object = "text_completion"
		choice = map[string]any{"index": 0, "text": string(text), "logprobs": nil, "finish_reason": p.finish}
	}
	rec.Status, rec.SentTokens, rec.FinishReason = http.StatusOK, p.tokens, p.finish
	s.noteAnswer(rec, p)
	rec.FirstContentAt = time.Now()
	rec.LastContentAt = rec.FirstContentAt
	writeJSON(w, http.StatusOK, map[string]any{
		"id": rec.ID, "object": object, "created": s.created, "model": q.Model,
		"choices": []any{choice}, "usage": usage,
	})
	s.completed.Add(1)
	span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{p.finish}))
}

func embeddingVector(input string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(input))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	_, span := s.startSpan(r, "embeddings")
	defer span.End()
	var q struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&q); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "request body is not valid JSON: "+err.Error())
		return
	}
	inputs, ok := embeddingInputs(q.Input)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "input", "input: must be a string or a non-empty array of strings")
		return
	}
	if q.Model == "" {
		q.Model = s.cfg.Models[0]
	}
	span.SetName("embeddings " + q.Model)
	if !sleepUntil(r.Context(), time.Now().Add(s.cfg.EmbeddingLatency)) {
		return
	}
	data, tokens := embeddings(inputs, s.cfg.EmbeddingDimensions)
	span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", tokens))
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": q.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// embeddingInputs reads an embeddings request's input: a string or a
// non-empty array of strings.
func embeddingInputs(raw json.RawMessage) ([]string, bool) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, true
	}
	var inputs []string
	if err := json.Unmarshal(raw, &inputs); err != nil || len(inputs) == 0 {
		return nil, false
	}
	return inputs, true
}

// embeddingItem is one vector of an embeddings response.
type embeddingItem struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// embeddings are the vectors of the inputs and their token count (a token
// per four bytes, at least one per input).
func embeddings(inputs []string, dims int) ([]embeddingItem, int) {
	tokens := 0
	data := make([]embeddingItem, len(inputs))
	for i, in := range inputs {
		data[i] = embeddingItem{Object: "embedding", Index: i, Embedding: embeddingVector(in, dims)}
		tokens += max(1, (len(in)+3)/4)
	}
	return data, tokens
}
