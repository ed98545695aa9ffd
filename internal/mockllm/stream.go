package mockllm

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"math/rand/v2"
)

// chunkWriter builds the SSE events of one stream into a reused buffer.
type chunkWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     []byte
	head    string // `data: {"id":…,"choices":[{"index":0,`
	usage   bool
	chatAPI bool
	// continuous puts the usage so far on every chunk (vLLM's
	// continuous_usage_stats): prompt tokens and the completion tokens sent.
	continuous         bool
	prompt, completion int
}

func newChunkWriter(w http.ResponseWriter, ep endpoint, id, model string, created int64, includeUsage bool) *chunkWriter {
	object := "chat.completion.chunk"
	if ep == endpointText {
		object = "text_completion"
	}
	head := `data: {"id":"` + id + `","object":"` + object + `","created":` + strconv.FormatInt(created, 10) +
		`,"model":` + strconv.Quote(model) + `,"choices":[`
	return &chunkWriter{w: w, rc: http.NewResponseController(w), buf: make([]byte, 0, 512), head: head, usage: includeUsage, chatAPI: ep == endpointChat}
}

// choice writes one chunk with a single choice. delta is the chat delta
// object's body; text is the completion text; finish is empty or a reason.
func (c *chunkWriter) choice(role, text, finish string) {
	b := append(c.buf[:0], c.head...)
	b = append(b, `{"index":0,`...)
	if c.chatAPI {
		b = append(b, `"delta":{`...)
		if role != "" {
			b = append(b, `"role":"`...)
			b = append(b, role...)
			b = append(b, `","content":""`...)
		} else if finish == "" {
			b = append(b, `"content":`...)
			b = strconv.AppendQuote(b, text)
		}
		b = append(b, '}')
	} else {
		b = append(b, `"text":`...)
		b = strconv.AppendQuote(b, text)
	}
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, finish)
	}
	b = append(b, `}]`...)
	c.buf = c.appendChunkUsage(b)
}

// appendChunkUsage ends a chunk with its usage member: the usage so far
// with continuous usage, null when usage comes in a chunk of its own.
func (c *chunkWriter) appendChunkUsage(b []byte) []byte {
	switch {
	case c.continuous:
		b = append(b, `,"usage":`...)
		b = appendUsage(b, c.prompt, c.completion)
	case c.usage:
		b = append(b, `,"usage":null`...)
	}
	return append(b, "}\n\n"...)
}

func appendUsage(b []byte, prompt, completion int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	return append(b, '}')
}

// reasoning writes one chat chunk of thinking under delta.<field>, with
// content empty as Ollama and vLLM send it.
func (c *chunkWriter) reasoning(field, text string) {
	b := append(c.buf[:0], c.head...)
	b = append(b, `{"index":0,"delta":{"content":"","`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = strconv.AppendQuote(b, text)
	b = append(b, `},"logprobs":null,"finish_reason":null}]`...)
	c.buf = c.appendChunkUsage(b)
}

func (c *chunkWriter) usageChunk(prompt, completion int) {
	b := append(c.buf[:0], c.head...)
	b = append(b, `],"usage":`...)
	b = appendUsage(b, prompt, completion)
	c.buf = append(b, "}\n\n"...)
}

func (c *chunkWriter) raw(s string) { c.buf = append(c.buf[:0], s...) }

// flush writes the built event and flushes it to the network.
func (c *chunkWriter) flush() error {
	if _, err := c.w.Write(c.buf); err != nil {
		return err
	}
	return c.rc.Flush()
}

// stream sends a streamed completion following the plan.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, ep endpoint, q *completionRequest, p plan, fault string, rng *rand.Rand, sl *slot, rec *Record, span trace.Span) {
	s.countActive()
	defer s.active.Add(-1)

	cw, ok := s.openStream(w, ep, q, rec)
	if !ok || !s.streamTokens(ctx, cw, p, fault, rng, sl, rec, span) {
		return
	}
	s.noteAnswer(rec, p)
	s.finishStream(cw, p, fault, rec, span)
}

// countActive counts a stream as open and raises the peak if it is one.
func (s *Server) countActive() {
	a := s.active.Add(1)
	for {
		m := s.maxActive.Load()
		if a <= m || s.maxActive.CompareAndSwap(m, a) {
			break
		}
	}
}

// openStream sends the event-stream headers and, on the chat endpoint, the
// role chunk; false when the client is gone.
func (s *Server) openStream(w http.ResponseWriter, ep endpoint, q *completionRequest, rec *Record) (*chunkWriter, bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rec.Status = http.StatusOK
	cw := newChunkWriter(w, ep, rec.ID, q.Model, s.created, rec.IncludeUsage)
	if q.StreamOptions != nil && q.StreamOptions.IncludeUsage && q.StreamOptions.ContinuousUsageStats {
		cw.continuous, cw.prompt = true, rec.PromptTokens
	}
	if err := cw.rc.Flush(); err != nil {
		rec.ClientGone = true
		return nil, false
	}
	rec.HeadersAt = time.Now()
	if ep == endpointChat {
		cw.choice("assistant", "", "")
		if !cw.send(rec) {
			return nil, false
		}
	}
	return cw, true
}

// send flushes the built event as one more chunk; false (client gone) when
// it could not be written.
func (c *chunkWriter) send(rec *Record) bool {
	if c.flush() != nil {
		rec.ClientGone = true
		return false
	}
	rec.SentChunks++
	return true
}

// streamTokens sends the content chunks, each when it is due, and the
// mid-stream fault; false when the stream ended before its last token.
func (s *Server) streamTokens(ctx context.Context, cw *chunkWriter, p plan, fault string, rng *rand.Rand, sl *slot, rec *Record, span trace.Span) bool {
	if s.cfg.RecordTokenTimes {
		rec.ChunkTimes = make([]time.Time, 0, (p.tokens+s.cfg.TokensPerChunk-1)/s.cfg.TokensPerChunk)
	}
	due := rec.Received.Add(rec.QueueWait + s.prefill(p))
	text := make([]byte, 0, 16*s.cfg.TokensPerChunk)
	chunks := 0
	itl := s.metrics.itl.WithLabelValues(rec.Model)
	for sent := 0; sent < p.tokens; {
		if chunks == p.faultAfter {
			var ok bool
			if due, ok = s.midStreamFault(ctx, cw, fault, due, rec, span); !ok {
				return false
			}
		}
		n := min(s.cfg.TokensPerChunk, p.tokens-sent)
		thinking := cw.chatAPI && sent < s.cfg.ReasoningTokens
		if thinking {
			n = min(n, s.cfg.ReasoningTokens-sent) // a chunk is thinking or answer, not both
		}
		var ok bool
		if due, ok = s.tokensDue(ctx, sl, n, due, rec, span); !ok {
			rec.ClientGone = true
			return false
		}
		text = appendWords(text[:0], p.wordOffset+sent, n)
		// The chunk's time is taken as it is handed to the connection: a
		// client cannot see it earlier, however late this goroutine runs
		// after the write.
		now := time.Now()
		cw.completion = sent + n
		if thinking {
			cw.reasoning(s.cfg.ReasoningField, string(text))
		} else {
			cw.choice("", string(text), "")
		}
		if !cw.send(rec) {
			return false
		}
		if chunks > 0 {
			itl.Observe(now.Sub(rec.LastContentAt).Seconds())
		}
		rec.noteContent(chunks == 0, now)
		chunks++
		sent += n
		rec.SentTokens = sent
		due = s.nextDue(due, rng, p, n, sent)
	}
	return true
}

// tokensDue waits until the next n tokens are due and the request holds
// their KV cache, and returns when that was; false when the client went
// away first. A request preempted while it waited recomputes and waits again.
func (s *Server) tokensDue(ctx context.Context, sl *slot, n int, due time.Time, rec *Record, span trace.Span) (time.Time, bool) {
	for {
		var ok bool
		if due, ok = s.holdKV(ctx, sl, n, due, rec, span); !ok || !sleepUntil(ctx, due) {
			return due, false
		}
		if sl.running() {
			return due, true
		}
	}
}

// holdKV takes the KV cache for the next n tokens, due at due. When the
// request is preempted instead, it waits to be admitted again and returns
// the new due time, after the recompute of every token it held; false when
// the client went away meanwhile.
func (s *Server) holdKV(ctx context.Context, sl *slot, n int, due time.Time, rec *Record, span trace.Span) (time.Time, bool) {
	for !sl.grow(n) {
		start := time.Now()
		tokens, ok := sl.resume(ctx)
		if !ok {
			return due, false
		}
		rec.Preemptions++
		rec.PreemptedFor += time.Since(start)
		recompute := s.cfg.TTFT + time.Duration(tokens)*s.cfg.PrefillPerToken
		rec.Recompute += recompute
		span.AddEvent("preempted", trace.WithAttributes(attribute.Int("mockllm.recomputed_tokens", tokens),
			attribute.Float64("mockllm.waited_s", time.Since(start).Seconds())))
		due = later(due, time.Now().Add(recompute))
	}
	return due, true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// noteContent records when a content chunk was handed to the connection.
func (r *Record) noteContent(first bool, at time.Time) {
	if first {
		r.FirstContentAt = at
	}
	r.LastContentAt = at
	if r.ChunkTimes != nil {
		r.ChunkTimes = append(r.ChunkTimes, at)
	}
}

// appendWords appends the text of n tokens starting at token from.
func appendWords(text []byte, from, n int) []byte {
	for i := 0; i < n; i++ {
		text = append(text, words[(from+i)%len(words)]...)
	}
	return text
}

// nextDue moves the due time past the n tokens just sent, one jittered and
// batch-slowed inter-token gap each, unless the last token went out.
func (s *Server) nextDue(due time.Time, rng *rand.Rand, p plan, n, sent int) time.Time {
	f := s.eng.slowdown(s.cfg.BatchSlowdown)
	for i := 0; i < n && sent < p.tokens; i++ {
		due = due.Add(slowed(jitter(rng, p.itl, p.jitter), f))
	}
	return due
}

// midStreamFault injects the request's mid-stream fault before the next
// content chunk and returns when that chunk is due; false when the fault (or
// a client leaving meanwhile) ended the stream.
func (s *Server) midStreamFault(ctx context.Context, cw *chunkWriter, fault string, due time.Time, rec *Record, span trace.Span) (time.Time, bool) {
	switch fault {
	case FaultErrorEvent:
		cw.raw(`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":500}}` + "\n\n")
		if cw.flush() == nil {
			cw.raw("data: [DONE]\n\n")
			rec.DoneSent = cw.flush() == nil
		}
		rec.FinishReason = "error"
		setSpanError(span, "stream_error")
		return due, false
	case FaultStall:
		if !sleepUntil(ctx, time.Now().Add(s.cfg.StallDuration)) {
			rec.ClientGone = true
			return due, false
		}
		return time.Now(), true
	case FaultDrop:
		setSpanError(span, "connection_dropped")
		rec.FinishReason = "dropped"
		// Aborting the handler makes net/http close the
		// connection (HTTP/1.1) or reset the stream (HTTP/2)
		// without a clean end of the body.
		panic(http.ErrAbortHandler)
	case FaultCutEvent:
		// A whole chunk, but no blank line after it: the event never
		// completes, and the handler's return ends the body cleanly.
		cw.choice("", " cut", "")
		cw.buf = cw.buf[:len(cw.buf)-1]
		rec.FinishReason = "cut"
		setSpanError(span, "event_cut")
		cw.send(rec)
		return due, false
	case FaultMalformed:
		cw.raw(`data: {"id":"` + rec.ID + `","choices":[{"index":0,"delta":{"content":"` + "\n\n")
		if !cw.send(rec) {
			return due, false
		}
	}
	return due, true
}

// finishStream sends the finish chunk, the usage chunk when asked for and
// data: [DONE] (unless the fault leaves it out), and counts the completion.
func (s *Server) finishStream(cw *chunkWriter, p plan, fault string, rec *Record, span trace.Span) {
	cw.choice("", "", p.finish)
	if !cw.send(rec) {
		return
	}
	rec.FinishReason = p.finish
	if rec.IncludeUsage {
		cw.usageChunk(rec.PromptTokens, rec.SentTokens)
		if !cw.send(rec) {
			return
		}
	}
	span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{p.finish}))
	if fault == FaultMissingDone {
		s.completed.Add(1)
		return
	}
	cw.raw("data: [DONE]\n\n")
	if cw.flush() != nil {
		rec.ClientGone = true
		return
	}
	rec.DoneSent = true
	s.completed.Add(1)
}
