package live

import (
	"context"
	"strings"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/httpstream"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// rawReadBuffer is each connection's read buffer: a few SSE events of
// 200–400 bytes, or the batch a read brings in when the client falls
// behind; it grows for a longer header block or chunk-size line.
const rawReadBuffer = 2048

// rawTransport is the streaming HTTP/1.1 client (internal/httpstream) with
// the header fields every request carries; per request only traceparent is
// added.
type rawTransport struct {
	client *httpstream.Client
	header []httpstream.Header
}

// newRawTransport builds the raw client for url: the request's own header
// fields first, then live.client.headers, which replace fields of the same
// name as they do on the net/http path.
func newRawTransport(lc *config.LiveConfig, url, auth string) (*rawTransport, error) {
	idle := lc.MaxConcurrency
	if idle == 0 {
		idle = 4096
	}
	c, err := httpstream.New(url, httpstream.Options{MaxIdle: idle, KernelTimestamps: lc.KernelTimestamps, ReadBuffer: rawReadBuffer})
	if err != nil {
		return nil, err
	}
	h := []httpstream.Header{{Key: "Content-Type", Value: "application/json"}, {Key: "Accept-Encoding", Value: "identity"}}
	if lc.Stream {
		h = append(h, httpstream.Header{Key: "Accept", Value: "text/event-stream"})
	}
	if auth != "" {
		h = append(h, httpstream.Header{Key: "Authorization", Value: auth})
	}
	if lc.Tracestate != "" {
		h = append(h, httpstream.Header{Key: "tracestate", Value: lc.Tracestate})
	}
	for name, v := range lc.Client.Headers.Iter {
		h = setHeader(h, name, string(v))
	}
	return &rawTransport{client: c, header: h}, nil
}

// setHeader replaces the value of the field named name (case-insensitive)
// or appends the field.
func setHeader(h []httpstream.Header, name, value string) []httpstream.Header {
	for i := range h {
		if strings.EqualFold(h[i].Key, name) {
			h[i].Value = value
			return h
		}
	}
	return append(h, httpstream.Header{Key: name, Value: value})
}

// doRaw is do on the raw transport: the same phases, milestones and
// classification of failures, with reads that carry the kernel's receive
// time when live.kernel_timestamps is on.
func (c *liveClient) doRaw(rctx, runCtx context.Context, body []byte, res *liveResult, pt *phaseTimer) {
	t := &c.cfg.Timeouts
	req := res.staged
	res.staged = nil
	if req == nil {
		req = &httpstream.Request{Header: c.rawHeader(res), Body: body}
	}
	req.Trace = &httpstream.Trace{
		ConnectStart: func() { res.Net.set(netConnStart) },
		ConnectDone:  func(error) { res.Net.set(netConnDone) },
		GotConn: func(reused bool) {
			res.ConnReused = reused
			pt.arm(t.TTFT, phaseTTFT)
		},
		WroteRequest:         func(at time.Time) { res.WroteReq = at },
		GotFirstResponseByte: func() { res.FirstByte = time.Now() },
	}
	req.Held = res.held
	res.held = nil
	resp, err := c.raw.client.Post(rctx, req)
	if err != nil {
		res.End = time.Now()
		res.fail(classifyErr(rctx, runCtx, err), err)
		return
	}
	defer resp.Body.Close()
	c.readResponse(rctx, runCtx, response{status: resp.StatusCode, header: resp.Header, body: resp.Body}, res, pt)
}

// hold takes res's connection ahead of its send (raw transport only): an
// idle one, or a new one dialled now. A dial that fails is left to the
// send, which dials again and reports the error; the dial here is bounded
// by live.timeouts.connect too.
func (c *liveClient) hold(ctx context.Context, res *liveResult) {
	if c.raw == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeouts.Connect)
	defer cancel()
	h, err := c.raw.client.Hold(ctx, &httpstream.Trace{
		ConnectStart: func() { res.Net.set(netConnStart) },
		ConnectDone:  func(error) { res.Net.set(netConnDone) },
	})
	if err == nil {
		res.held = h
	}
}

// rawHeader is the raw transport's header fields with res's traceparent.
func (c *liveClient) rawHeader(res *liveResult) []httpstream.Header {
	h := make([]httpstream.Header, len(c.raw.header), len(c.raw.header)+1)
	copy(h, c.raw.header)
	return append(h, httpstream.Header{Key: "traceparent", Value: res.traceparent()})
}

// stage writes res's request, all of it but its last byte, on the
// connection hold took (raw transport only), so that at its time only that
// byte goes out and the request reaches the server complete then, however
// long its prompt. The write is bounded by live.timeouts.connect; when it
// fails the send dials and writes the whole request at its time.
func (c *liveClient) stage(ctx context.Context, res *liveResult, body []byte) {
	if c.raw == nil || res.held == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeouts.Connect)
	defer cancel()
	req := &httpstream.Request{Header: c.rawHeader(res), Body: body}
	if c.raw.client.Stage(ctx, res.held, req) == nil {
		res.staged = req
	}
}

// stagedConn is the connection res's request is staged on, for
// sendStaged; nil when it is not staged.
func (c *liveClient) stagedConn(res *liveResult) *httpstream.Held {
	if c.raw == nil || res.staged == nil {
		return nil
	}
	return res.held
}

// sendStaged writes the last byte of the request staged on h now, without
// waiting (a trace gate's release); the request's own send finds it sent,
// or sends it when this could not.
func (c *liveClient) sendStaged(h *httpstream.Held) {
	if h != nil {
		c.raw.client.SendStaged(h)
	}
}

// unhold gives back res's held connection when it is not sent.
func (c *liveClient) unhold(res *liveResult) {
	if c.raw != nil && res.held != nil {
		c.raw.client.Unhold(res.held)
		res.held, res.staged = nil, nil
	}
}

// closeIdle closes the idle connections of the transport in use.
func (c *liveClient) closeIdle() {
	if c.raw != nil {
		c.raw.client.CloseIdle()
	}
	c.client.CloseIdleConnections()
}
