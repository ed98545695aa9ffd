package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/sse"
)

// streamState is the parsing state of one stream, reused across requests.
type streamState struct {
	rd    *sse.Reader
	chunk sse.ChunkSummary
}

var streamStates = sync.Pool{New: func() any { return &streamState{rd: sse.NewReader(nil, 0)} }}

// readStream parses the event stream, timestamping each event as it is
// parsed, and checks the stream's integrity.
func (c *liveClient) readStream(rctx, runCtx context.Context, body io.Reader, res *liveResult, pt *phaseTimer) {
	st := streamStates.Get().(*streamState)
	defer func() {
		st.rd.Reset(nil)
		streamStates.Put(st)
	}()
	rd := st.rd
	rd.Reset(body)
	c.reserveGaps(res)
	order := eventOrder{usageAt: -1, finishAt: -1}
	for {
		ev, err := rd.Next()
		if err != nil {
			res.End = time.Now()
			failStreamRead(rctx, runCtx, err, res)
			break
		}
		res.Events++
		res.Comments += ev.Comments
		at := eventTime(ev, res)
		if sse.IsDone(ev.Data) {
			c.drainAfterDone(body, rd, at, res, pt)
			break
		}
		// Every event extends the idle timeout; the TTFT timeout stays
		// armed until content arrives.
		pt.touch(ev.Time)
		noToken := res.FirstToken.IsZero()
		c.takeChunk(ev.Data, at, &st.chunk, &order, res, pt)
		if noToken && !res.FirstToken.IsZero() && res.Delay.Kernel {
			res.Delay.FirstToken = max(ev.Time.Sub(ev.Arrived), 0)
		}
	}
	if n := len(res.Gaps); n > 0 {
		c.gapHint.Store(int64(min(n, 1<<12)))
	}
	checkStreamEnd(res)
}

// reserveGaps sizes the result's gaps (and chunk times) for as many content
// events as the previous stream had.
func (c *liveClient) reserveGaps(res *liveResult) {
	if n := c.gapHint.Load(); n > 0 {
		res.Gaps = make([]float64, 0, n)
		if c.keepTimes {
			res.ChunkTimes = make([]time.Time, 0, n+1)
		}
	}
}

// failStreamRead names why the stream could not be read to data: [DONE].
func failStreamRead(rctx, runCtx context.Context, err error, res *liveResult) {
	switch {
	case errors.Is(err, io.EOF):
		if !res.DoneSeen {
			res.fail(errTypeIncomplete, errors.New("stream ended without data: [DONE]"))
		}
	case errors.Is(err, sse.ErrEventTooLarge):
		res.fail(errTypeTooLargeResponse, err)
	case errors.Is(err, sse.ErrUnterminatedEvent):
		// The body ended cleanly, mid-event: the server's end, not the
		// connection's.
		res.fail(errTypeIncomplete, err)
	default:
		res.fail(classifyErr(rctx, runCtx, err), err)
	}
}

// drainAfterDone ends the measurement at data: [DONE]. It reads the body's
// end (the chunked terminator follows [DONE] at once) so the connection goes
// back to the idle pool instead of being closed; bounded in bytes and time,
// and anything found there is out of order.
func (c *liveClient) drainAfterDone(body io.Reader, rd *sse.Reader, at time.Time, res *liveResult, pt *phaseTimer) {
	res.DoneSeen = true
	res.End = at
	pt.arm(min(c.cfg.Timeouts.Idle, time.Second), phaseDrain)
	n, _ := io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	if n += int64(rd.Buffered()); n > 0 {
		res.fail(errTypeEventOrder, fmt.Errorf("%d bytes after data: [DONE]", n))
	}
	pt.stop()
}

// eventOrder is where in a stream the usage and finish_reason events came
// (event numbers, -1 before they come), to check what follows them.
type eventOrder struct {
	usageAt  int
	finishAt int
}

// takeChunk records one chunk event: identity, usage, the first chunk and
// content times, the finish reason, and events out of order.
func (c *liveClient) takeChunk(data []byte, at time.Time, chunk *sse.ChunkSummary, order *eventOrder, res *liveResult, pt *phaseTimer) {
	if err := sse.ScanChunk(data, chunk); err != nil {
		res.fail(errTypeMalformed, err)
		return
	}
	prevOut, hadUsage := res.OutputTokens, res.UsageSeen
	if chunk.Error != nil {
		// An error event may carry the usage of what was generated before
		// it (OpenRouter's does).
		takeUsage(chunk, order, res)
		res.fail(errTypeStreamError, fmt.Errorf("error event: %s", chunk.Error.Message))
		return
	}
	takeIdentity(chunk, res)
	takeUsage(chunk, order, res)
	if chunk.Choices == 0 {
		return
	}
	if order.usageAt >= 0 && order.usageAt < res.Events {
		res.fail(errTypeEventOrder, errors.New("choices after the usage chunk"))
	}
	if res.FirstChunk.IsZero() {
		res.FirstChunk = at
	}
	if chunk.Content {
		c.takeContent(at, order, res, pt, chunkTokens(chunk, prevOut, hadUsage))
		if !chunk.Answer {
			res.ReasoningChunks++
		} else if res.FirstAnswer.IsZero() {
			res.FirstAnswer = at
		}
		if res.session != nil {
			appendAnswer(data, res)
		}
	}
	takeFinish(chunk, order, res)
}

// takeIdentity keeps the response id and model of the stream's first chunk
// (copied only when they differ from what res already holds).
func takeIdentity(chunk *sse.ChunkSummary, res *liveResult) {
	if res.ResponseID == "" {
		res.ResponseID = string(chunk.ID)
		if string(chunk.Model) != res.RespModel {
			res.RespModel = string(chunk.Model)
		}
	}
}

// takeUsage keeps the usage a chunk carries and notes where it came.
func takeUsage(chunk *sse.ChunkSummary, order *eventOrder, res *liveResult) {
	if chunk.HasUsage {
		res.UsageSeen = true
		res.InputTokens = chunk.Usage.Prompt
		res.OutputTokens = chunk.Usage.Output()
		res.ReasoningTokens, res.CachedTokens = chunk.Usage.Reasoning, chunk.Usage.Cached
		order.usageAt = res.Events
	}
}

// takeFinish keeps a chunk's finish reason and notes where it came.
func takeFinish(chunk *sse.ChunkSummary, order *eventOrder, res *liveResult) {
	if len(chunk.Finish) > 0 {
		if string(chunk.Finish) != res.Finish {
			res.Finish = string(chunk.Finish)
		}
		order.finishAt = res.Events
	}
}

// chunkTokens is the number of tokens a content chunk carries when the
// usage on it says (vLLM's continuous_usage_stats: the completion tokens so
// far on every chunk), else 0 (unknown).
func chunkTokens(chunk *sse.ChunkSummary, prevOut int, hadUsage bool) int {
	if !chunk.HasUsage {
		return 0
	}
	if !hadUsage {
		prevOut = 0
	}
	return max(chunk.Usage.Output()-prevOut, 0)
}

// appendTokens appends a chunk's token count to counts, which holds the
// counts of the n chunks before it; it stays nil (no memory) until a count
// is known, and is then filled with zeros (unknown) for the chunks before.
func appendTokens(counts []int32, n, tokens int) []int32 {
	if counts == nil {
		if tokens == 0 {
			return nil
		}
		counts = make([]int32, n, n+16)
	}
	return append(counts, int32(tokens))
}

// takeContent records the time of a content event, the gap since the
// previous one and the tokens it carried (0: unknown); the first one ends
// the TTFT phase.
func (c *liveClient) takeContent(at time.Time, order *eventOrder, res *liveResult, pt *phaseTimer, tokens int) {
	if order.finishAt >= 0 {
		res.fail(errTypeEventOrder, errors.New("content after finish_reason"))
	}
	if res.FirstToken.IsZero() {
		res.FirstToken = at
		pt.arm(c.cfg.Timeouts.Idle, phaseIdle)
	} else {
		if res.Delay.Kernel && at.Equal(res.LastToken) {
			res.Delay.Shared++ // the kernel merged the two events' segments, or they came as one
		}
		res.Gaps = append(res.Gaps, at.Sub(res.LastToken).Seconds())
		res.GapTokens = appendTokens(res.GapTokens, len(res.Gaps)-1, tokens)
	}
	res.TokensKnown = res.TokensKnown || tokens > 0
	res.LastToken = at
	res.Chunks++
	if c.keepTimes {
		res.ChunkTimes = append(res.ChunkTimes, at)
		res.ChunkTokens = appendTokens(res.ChunkTokens, len(res.ChunkTimes)-1, tokens)
	}
}

// checkStreamEnd settles the output token count and checks what a complete
// stream must have carried: usage consistent with the content, and a
// finish_reason.
func checkStreamEnd(res *liveResult) {
	if !res.UsageSeen {
		res.OutputTokens = res.Chunks
	} else if res.ErrorType == "" && res.OutputTokens < res.Chunks {
		res.fail(errTypeUsageMismatch, fmt.Errorf("usage.completion_tokens %d < %d content chunks", res.OutputTokens, res.Chunks))
	}
	if res.ErrorType == "" && res.Finish == "" {
		res.fail(errTypeNoFinishReason, errors.New("no chunk carried a finish_reason"))
	}
}

// eventTime is the time an event counts at: when the kernel received its
// bytes, where the transport stamps reads (the client's delay after that is
// added to res.Delay), else when the parser saw it.
func eventTime(ev sse.Event, res *liveResult) time.Time {
	if ev.Arrived.IsZero() {
		return ev.Time
	}
	res.Delay.add(max(ev.Time.Sub(ev.Arrived), 0))
	return ev.Arrived
}
