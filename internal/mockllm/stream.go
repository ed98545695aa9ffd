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
	if c.usage {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, "}\n\n"...)
	c.buf = b
}

func (c *chunkWriter) usageChunk(prompt, completion int) {
	b := append(c.buf[:0], c.head...)
	b = append(b, `],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, "}}\n\n"...)
	c.buf = b
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
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, ep endpoint, q *completionRequest, p plan, fault string, rng *rand.Rand, rec *Record, span trace.Span) {
	a := s.active.Add(1)
	for {
		m := s.maxActive.Load()
		if a <= m || s.maxActive.CompareAndSwap(m, a) {
			break
		}
	}
	defer s.active.Add(-1)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rec.Status = http.StatusOK
	cw := newChunkWriter(w, ep, rec.ID, q.Model, s.created, rec.IncludeUsage)
	if err := cw.rc.Flush(); err != nil {
		rec.ClientGone = true
		return
	}
	rec.HeadersAt = time.Now()
	gone := func() { rec.ClientGone = true }

	if ep == endpointChat {
		cw.choice("assistant", "", "")
		if cw.flush() != nil {
			gone()
			return
		}
		rec.SentChunks++
	}
	if s.cfg.RecordTokenTimes {
		rec.ChunkTimes = make([]time.Time, 0, (p.tokens+s.cfg.TokensPerChunk-1)/s.cfg.TokensPerChunk)
	}
	due := rec.Received.Add(rec.QueueWait + p.ttft)
	text := make([]byte, 0, 16*s.cfg.TokensPerChunk)
	chunks := 0
	for sent := 0; sent < p.tokens; {
		if chunks == p.faultAfter {
			switch fault {
			case FaultErrorEvent:
				cw.raw(`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":500}}` + "\n\n")
				if cw.flush() == nil {
					cw.raw("data: [DONE]\n\n")
					rec.DoneSent = cw.flush() == nil
				}
				rec.FinishReason = "error"
				setSpanError(span, "stream_error")
				return
			case FaultStall:
				if !sleepUntil(ctx, time.Now().Add(s.cfg.StallDuration)) {
					gone()
					return
				}
				due = time.Now()
			case FaultDrop:
				setSpanError(span, "connection_dropped")
				rec.FinishReason = "dropped"
				// Aborting the handler makes net/http close the
				// connection (HTTP/1.1) or reset the stream (HTTP/2)
				// without a clean end of the body.
				panic(http.ErrAbortHandler)
			case FaultMalformed:
				cw.raw(`data: {"id":"` + rec.ID + `","choices":[{"index":0,"delta":{"content":"` + "\n\n")
				if cw.flush() != nil {
					gone()
					return
				}
				rec.SentChunks++
			}
		}
		if !sleepUntil(ctx, due) {
			gone()
			return
		}
		n := min(s.cfg.TokensPerChunk, p.tokens-sent)
		text = text[:0]
		for i := 0; i < n; i++ {
			text = append(text, words[(sent+i)%len(words)]...)
		}
		// The chunk's time is taken as it is handed to the connection: a
		// client cannot see it earlier, however late this goroutine runs
		// after the write.
		now := time.Now()
		cw.choice("", string(text), "")
		if cw.flush() != nil {
			gone()
			return
		}
		if chunks == 0 {
			rec.FirstContentAt = now
		}
		if rec.ChunkTimes != nil {
			rec.ChunkTimes = append(rec.ChunkTimes, now)
		}
		chunks++
		rec.SentChunks++
		sent += n
		rec.SentTokens = sent
		f := s.eng.slowdown(s.cfg.BatchSlowdown)
		for i := 0; i < n && sent < p.tokens; i++ {
			due = due.Add(slowed(jitter(rng, p.itl, p.jitter), f))
		}
	}
	cw.choice("", "", p.finish)
	if cw.flush() != nil {
		gone()
		return
	}
	rec.SentChunks++
	rec.FinishReason = p.finish
	if rec.IncludeUsage {
		cw.usageChunk(rec.PromptTokens, rec.SentTokens)
		if cw.flush() != nil {
			gone()
			return
		}
		rec.SentChunks++
	}
	span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{p.finish}))
	if fault == FaultMissingDone {
		s.completed.Add(1)
		return
	}
	cw.raw("data: [DONE]\n\n")
	if cw.flush() != nil {
		gone()
		return
	}
	rec.DoneSent = true
	s.completed.Add(1)
}
