package live

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/httpstream"
	"github.com/otelcol-llm/otelcol-llm/internal/sse"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

// error.type values of live requests besides HTTP status codes.
const (
	errTypeConnect          = "connection_error"
	errTypeConnectTimeout   = "connect_timeout"
	errTypeTTFTTimeout      = "ttft_timeout"
	errTypeIdleTimeout      = "idle_timeout"
	errTypeDeadline         = "deadline_exceeded"
	errTypeCancelled        = genai.LoadgenErrorTypeCancelled
	errTypeReset            = "connection_reset"
	errTypeIncomplete       = "stream_incomplete"
	errTypeMalformed        = "malformed_event"
	errTypeStreamError      = "stream_error"
	errTypeNoFinishReason   = "missing_finish_reason"
	errTypeUsageMismatch    = "usage_inconsistent"
	errTypeEventOrder       = "event_order"
	errTypeQueueFull        = "queue_full"
	errTypeInvalidResponse  = "invalid_response"
	errTypeTooLargeResponse = "event_too_large"
)

// liveResult is everything measured about one request. Times are absolute;
// durations derived from them are measured from Scheduled.
type liveResult struct {
	Seq        int64
	Scheduled  time.Time // when the request was due to be sent
	TargetRate float64   // offered rate (req/s) of the schedule at Scheduled; 0 in a closed loop
	Cap        int64     // the in-flight bound when it was sent (virtual users, or max_concurrency); 0: none
	Dispatched time.Time // when it left the client-side queue
	// Net holds DNS, connect and TLS times; the transport may report them
	// from its dialing goroutine.
	Net        netTimes
	ConnReused bool
	WroteReq   time.Time
	FirstByte  time.Time
	Headers    time.Time // response headers received
	FirstChunk time.Time // first event with choices (role chunk counts)
	FirstToken time.Time // first event with content (reasoning included)
	// FirstAnswer is the first event with content other than reasoning;
	// ReasoningChunks counts the events with reasoning only.
	FirstAnswer     time.Time
	ReasoningChunks int
	// GapTokens are the tokens of the chunk that ended each gap of Gaps, and
	// ChunkTokens those of each chunk of ChunkTimes, from the usage on the
	// chunks (continuous usage); 0 where unknown, nil while none is known.
	// TokensKnown is set when any chunk's count was known.
	GapTokens   []int32
	ChunkTokens []int32
	TokensKnown bool
	LastToken   time.Time
	End         time.Time
	// Delay is the client's own delay on the events (their parse time minus
	// their kernel receive time), when the transport stamps reads.
	Delay       clientDelay
	ChunkTimes  []time.Time // content events (when chunk events are kept)
	Gaps        []float64   // seconds between consecutive content events
	Status      int
	ErrorType   string
	ErrorMsg    string
	Events      int // SSE events parsed
	Chunks      int // content events
	Comments    int
	DoneSeen    bool
	Finish      string
	ResponseID  string
	RespModel   string
	InputTokens int // from usage, else the prompt estimate
	// OutputTokens from usage when present (UsageSeen), else content chunks.
	OutputTokens int
	UsageSeen    bool
	// ReasoningTokens and CachedTokens are the usage's details (reasoning
	// tokens of the output, prompt tokens read from the server's prefix
	// cache); 0 where the server gives none.
	ReasoningTokens int
	CachedTokens    int
	PromptTokens    int // client-side prompt estimate
	// MaxTokens is the request's max_tokens when a dataset record set it
	// (0: live.max_tokens); DatasetRow the record's line or conversation.
	MaxTokens  int
	DatasetRow int64
	traced     *tracedRequest // the trace row replayed, or nil
	held       *httpstream.Held
	staged     *httpstream.Request // written on held but for its last byte
	// PrefixGroup and CacheableTokens: the shared-prefix group the request
	// drew and its shared tokens (0 without live.prompt.shared_prefix).
	PrefixGroup     int
	CacheableTokens int
	// A session's turn (live.session): the session, the turn's number and
	// the estimated tokens of the history it carried; userText and answer
	// are its new user message and the answer's text, for the next turn.
	session       *sessionTurn
	SessionID     string
	SessionTurn   int
	HistoryTokens int
	userText      string
	answer        []byte
	TraceID       [16]byte
	SpanID        [8]byte
	RequestID     string // the server's x-request-id
	RetryAfter    string
}

// Network phases recorded by httptrace.
const (
	netDNSStart = iota
	netDNSDone
	netConnStart
	netConnDone
	netTLSStart
	netTLSDone
	netPhases
)

// clientDelay sums the client's own delay over a request's events: how
// long after the kernel received an event's bytes the parser saw them.
type clientDelay struct {
	Kernel     bool // the events carried kernel receive times
	FirstToken time.Duration
	Sum, Max   time.Duration
	N          int
	// Shared counts content events whose kernel time is the next one's
	// (genai.AttrLoadgenSharedStamps).
	Shared int
}

func (d *clientDelay) add(v time.Duration) {
	d.Kernel = true
	d.Sum += v
	d.Max = max(d.Max, v)
	d.N++
}

func (d *clientDelay) mean() time.Duration {
	if d.N == 0 {
		return 0
	}
	return d.Sum / time.Duration(d.N)
}

// netTimes are unix-nanosecond timestamps of the network phases; 0 when the
// phase did not happen (a reused connection).
type netTimes [netPhases]atomic.Int64

func (n *netTimes) set(i int) { n[i].CompareAndSwap(0, time.Now().UnixNano()) }

// phase returns the duration between two recorded phases, 0 if either is missing.
func (n *netTimes) phase(from, to int) time.Duration {
	a, b := n[from].Load(), n[to].Load()
	if a == 0 || b == 0 {
		return 0
	}
	return time.Duration(b - a)
}

// succeeded reports whether the request completed without a failure.
func (r *liveResult) succeeded() bool { return r.ErrorType == "" }

func (r *liveResult) ttft() time.Duration { return sub(r.FirstToken, r.Scheduled) }
func (r *liveResult) e2e() time.Duration  { return sub(r.LastToken, r.Scheduled) }

// tpot is (E2E − TTFT)/(output tokens − 1); 0 when undefined. E2E and TTFT
// share the scheduled send time, so E2E − TTFT is LastToken − FirstToken.
func (r *liveResult) tpot() time.Duration {
	if r.FirstToken.IsZero() {
		return 0
	}
	d, _ := genai.TimePerOutputToken(r.LastToken.Sub(r.FirstToken), 0, int64(r.OutputTokens))
	return d
}

func sub(a, b time.Time) time.Duration {
	if a.IsZero() || b.IsZero() {
		return 0
	}
	return a.Sub(b)
}

func (r *liveResult) fail(typ string, err error) {
	if r.ErrorType != "" {
		return
	}
	r.ErrorType = typ
	if err != nil {
		r.ErrorMsg = err.Error()
	}
}

// traceparent formats the W3C header for the request's client span.
func (r *liveResult) traceparent() string {
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], r.TraceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], r.SpanID[:])
	copy(b[52:], "-01")
	return string(b[:])
}

// liveClient sends requests and measures them.
type liveClient struct {
	cfg    *config.LiveConfig
	client *http.Client
	raw    *rawTransport // the raw HTTP/1.1 client, when live.transport chose it
	// transportNote names the transport in use and why, for the run's log.
	transportNote string
	url           string
	auth          string
	keepTimes     bool
	gapHint       atomic.Int64 // content gaps of the last stream: the next one's capacity
}

// do sends one request built from body and fills res. ctx is the run's
// context: cancelling it cancels the request (error.type cancelled).
func (c *liveClient) do(ctx context.Context, body []byte, res *liveResult) {
	t := &c.cfg.Timeouts
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pt := newPhaseTimer(cancel, t.Idle, res.Scheduled.Add(t.Total))
	defer pt.stop()

	pt.arm(t.Connect, phaseConnect)
	if c.raw != nil {
		c.doRaw(rctx, ctx, body, res, pt)
		return
	}
	trace := clientTrace(res, pt, t)
	req, err := c.newRequest(httptrace.WithClientTrace(rctx, trace), body, res)
	if err != nil {
		res.fail(errTypeInvalidResponse, err)
		return
	}
	resp, err := c.client.Do(req)
	if err != nil {
		res.End = time.Now()
		res.fail(classifyErr(rctx, ctx, err), err)
		return
	}
	defer resp.Body.Close()
	c.readResponse(rctx, ctx, response{status: resp.StatusCode, header: resp.Header, body: resp.Body}, res, pt)
}

// response is what readResponse needs of a response, from either transport.
type response struct {
	status int
	header http.Header
	body   io.Reader
}

// clientTrace records the network phases and the request's milestones; the
// connection ends the connect phase and starts the TTFT phase.
func clientTrace(res *liveResult, pt *phaseTimer, t *config.LiveTimeoutsConfig) *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart:             func(httptrace.DNSStartInfo) { res.Net.set(netDNSStart) },
		DNSDone:              func(httptrace.DNSDoneInfo) { res.Net.set(netDNSDone) },
		ConnectStart:         func(string, string) { res.Net.set(netConnStart) },
		ConnectDone:          func(string, string, error) { res.Net.set(netConnDone) },
		TLSHandshakeStart:    func() { res.Net.set(netTLSStart) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { res.Net.set(netTLSDone) },
		GotConn:              func(i httptrace.GotConnInfo) { res.ConnReused = i.Reused; pt.arm(t.TTFT, phaseTTFT) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { res.WroteReq = time.Now() },
		GotFirstResponseByte: func() { res.FirstByte = time.Now() },
	}
}

// newRequest builds the POST of body with its headers, the traceparent of
// the request's client span included.
func (c *liveClient) newRequest(ctx context.Context, body []byte, res *liveResult) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept-Encoding", "identity")
	if c.cfg.Stream {
		h.Set("Accept", "text/event-stream")
	}
	if c.auth != "" {
		h.Set("Authorization", c.auth)
	}
	h.Set("traceparent", res.traceparent())
	if c.cfg.Tracestate != "" {
		h.Set("tracestate", c.cfg.Tracestate)
	}
	return req, nil
}

// readResponse checks the status and the content type and reads the body
// as a stream or as one completion object.
func (c *liveClient) readResponse(rctx, runCtx context.Context, resp response, res *liveResult, pt *phaseTimer) {
	res.Headers = time.Now()
	res.Status = resp.status
	res.RequestID = resp.header.Get("X-Request-Id")
	if resp.status != http.StatusOK {
		res.RetryAfter = resp.header.Get("Retry-After")
		msg, _ := io.ReadAll(io.LimitReader(resp.body, 4096))
		res.End = time.Now()
		res.fail(fmt.Sprint(resp.status), fmt.Errorf("HTTP %d: %s", resp.status, apiErrorMessage(msg)))
		return
	}
	if !c.cfg.Stream {
		pt.arm(never, phaseBody)
		c.readUnary(rctx, runCtx, resp.body, res)
		return
	}
	if ct := resp.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		res.End = time.Now()
		res.fail(errTypeInvalidResponse, fmt.Errorf("streaming response has Content-Type %q, want text/event-stream", ct))
		return
	}
	c.readStream(rctx, runCtx, resp.body, res, pt)
}

// readUnary reads a non-streaming response.
func (c *liveClient) readUnary(rctx, runCtx context.Context, body io.Reader, res *liveResult) {
	var out struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage *sse.Usage `json:"usage"`
	}
	data, err := io.ReadAll(body)
	res.End = time.Now()
	if err != nil {
		res.fail(classifyErr(rctx, runCtx, err), err)
		return
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Choices) == 0 {
		res.fail(errTypeInvalidResponse, fmt.Errorf("response is not a completion object: %v", err))
		return
	}
	res.FirstToken, res.LastToken, res.DoneSeen = res.End, res.End, true
	res.ResponseID, res.RespModel, res.Finish = out.ID, out.Model, out.Choices[0].FinishReason
	if res.session != nil {
		res.answer = append(res.answer, out.Choices[0].Message.Content...)
	}
	if out.Usage != nil {
		res.UsageSeen = true
		u := out.Usage.Counts()
		res.InputTokens, res.OutputTokens = u.Prompt, u.Output()
		res.ReasoningTokens, res.CachedTokens = u.Reasoning, u.Cached
	}
}

// classifyErr names a transport failure: a phase timeout, the total
// deadline, a cancellation by the run, a reset connection or a failed dial.
func classifyErr(rctx, runCtx context.Context, err error) string {
	if cause := context.Cause(rctx); cause != nil {
		switch {
		case errors.Is(cause, errConnectTimeout):
			return errTypeConnectTimeout
		case errors.Is(cause, errTTFTTimeout):
			return errTypeTTFTTimeout
		case errors.Is(cause, errIdleTimeout):
			return errTypeIdleTimeout
		case errors.Is(cause, errDeadline):
			return errTypeDeadline
		}
	}
	if runCtx.Err() != nil {
		return errTypeCancelled
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return errTypeDeadline
	}
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return errTypeReset
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return errTypeConnect
	case errors.Is(err, syscall.ECONNREFUSED):
		return errTypeConnect
	}
	return errTypeReset
}

// apiErrorMessage extracts error.message from an OpenAI error body.
func apiErrorMessage(body []byte) string {
	var e struct {
		Error sse.APIError `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return strings.TrimSpace(string(body))
}

// request runs one request scheduled at sched, when the schedule offered
// rate requests per second (0 in a closed loop), and hands its result to the
// output loop.
func (r *Runner) request(sched time.Time, rate float64) {
	r.send(sched, rate, nil, nil)
}

// send runs one request, a session's turn when st is set, and returns its
// result once handed to the output loop (which only reads it).
func (r *Runner) send(sched time.Time, rate float64, traced *tracedRequest, st *sessionTurn) *liveResult {
	res, ok := r.queue(sched, rate, traced, st)
	if ok {
		r.dispatch(res)
	}
	return res
}

// queue makes the request's result and takes its concurrency slot; false
// (the result finished) when the run ended while it waited for one.
func (r *Runner) queue(sched time.Time, rate float64, traced *tracedRequest, st *sessionTurn) (*liveResult, bool) {
	r.progress.sent.Add(1)
	res := &liveResult{Seq: r.seq.Add(1), Scheduled: sched, TargetRate: rate, Cap: r.concurrencyCap.Load(), traced: traced, session: st}
	if st != nil {
		res.SessionID, res.SessionTurn = st.id, st.turn
	}
	r.drawIDs(res)
	if !r.acquire(res) {
		r.finish(res)
		return res, false
	}
	return res, true
}

// dispatch sends a queued request, its slot taken, and finishes it.
func (r *Runner) dispatch(res *liveResult) {
	ctx := context.Background()
	sched := res.Scheduled
	res.Dispatched = time.Now()
	r.tel.Live.QueueTime.Record(ctx, res.Dispatched.Sub(sched).Seconds())
	body, tokens, err := r.body(res)
	res.PromptTokens, res.InputTokens = tokens, tokens
	if err != nil {
		r.client.unhold(res)
		r.release()
		res.End = time.Now()
		res.fail(errTypeInvalidResponse, err)
		r.finish(res)
		return
	}
	r.tel.Live.InFlight.Add(ctx, 1)
	r.client.do(r.reqCtx, body, res)
	r.tel.Live.InFlight.Add(ctx, -1)
	r.release()
	if !res.UsageSeen && res.InputTokens == 0 {
		res.InputTokens = tokens
	}
	r.finish(res)
}

// drawIDs gives res a random trace id and span id (never all-zero).
func (r *Runner) drawIDs(res *liveResult) {
	r.idMu.Lock()
	t0, t1, s0 := r.idRand.Uint64(), r.idRand.Uint64(), r.idRand.Uint64()|1
	r.idMu.Unlock()
	for i := 0; i < 8; i++ {
		res.TraceID[i], res.TraceID[8+i], res.SpanID[i] = byte(t0>>(8*i)), byte(t1>>(8*i)), byte(s0>>(8*i))
	}
}

// release gives back the live.max_concurrency slot acquire took.
func (r *Runner) release() {
	if r.sem != nil {
		<-r.sem
	}
}

// acquire takes a slot of live.max_concurrency for res, waiting in the
// client queue when all are taken. It returns false, with res failed, when
// the queue is full (queue_full, counted as not sent) or the run ends while
// it waits (cancelled).
func (r *Runner) acquire(res *liveResult) bool {
	if r.sem == nil {
		return true
	}
	select {
	case r.sem <- struct{}{}:
		return true
	default:
	}
	ctx := context.Background()
	if q := r.queued.Add(1); r.lc.MaxQueue > 0 && q > int64(r.lc.MaxQueue) {
		r.queued.Add(-1)
		res.fail(errTypeQueueFull, fmt.Errorf("client queue full (%d waiting at live.max_concurrency %d)", r.lc.MaxQueue, r.lc.MaxConcurrency))
		res.End = time.Now()
		r.tel.Live.NotSent.Add(ctx, 1, loadgen.ReasonAttrs(errTypeQueueFull))
		return false
	}
	return r.waitQueued(res)
}

// waitQueued waits in the client queue for a slot; it returns false, with
// res cancelled, when the run ends first.
func (r *Runner) waitQueued(res *liveResult) bool {
	ctx := context.Background()
	r.tel.Live.Queued.Add(ctx, 1)
	got := false
	select {
	case r.sem <- struct{}{}:
		got = true
	case <-r.reqCtx.Done():
	}
	r.tel.Live.Queued.Add(ctx, -1)
	r.queued.Add(-1)
	if r.reqCtx.Err() != nil {
		if got {
			<-r.sem // the run ended as the slot came free: give it back
		}
		res.End = time.Now()
		res.fail(errTypeCancelled, errors.New("cancelled while queued for live.max_concurrency"))
		return false
	}
	return true
}

func (r *Runner) finish(res *liveResult) {
	r.tel.Live.RecordResult(res.ErrorType)
	if r.onResult != nil {
		r.onResult(res)
	}
	r.results <- res
}
