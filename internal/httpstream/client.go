package httpstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/kstamp"
)

const (
	defaultMaxIdle    = 1024
	defaultReadBuffer = 4096
	// smallBody is the largest request body copied behind the request head
	// for a single write; larger ones go out with writev.
	smallBody = 4096
)

// Options configure a Client. The zero value is usable.
type Options struct {
	// MaxIdle is how many idle keep-alive connections are kept; 0 means
	// 1024, a negative value keeps none.
	MaxIdle int
	// KernelTimestamps turns SO_TIMESTAMPNS on for each connection (Linux)
	// so that Body.ReadTime reports the kernel receive time. Elsewhere, or
	// when the socket option fails, the kernel time is zero.
	KernelTimestamps bool
	// ReadBuffer is the initial read buffer of a connection; 0 means 4096.
	// It grows as needed for long header blocks and chunk-size lines.
	ReadBuffer int
}

// Header is one request header field, sent in order.
type Header struct{ Key, Value string }

// Trace hooks are called on the goroutine that called Post, in this order;
// each is optional.
type Trace struct {
	ConnectStart func()
	ConnectDone  func(err error)
	GotConn      func(reused bool)
	// WroteRequest is called once the request's last byte is handed to
	// the kernel, with the time it was: when the request's write returned,
	// or, for a staged request (Stage), just before the one-byte write
	// that completed it (by the Post or by SendStaged). That write hands
	// its byte over at once, but on loopback it can return late:
	// delivering the byte wakes the server, which the kernel may run first
	// on the client's core.
	WroteRequest         func(at time.Time)
	GotFirstResponseByte func()
}

// Request is one POST.
type Request struct {
	// Header fields in the order they are sent. Host and Content-Length
	// are set by the client; entries with those names are skipped.
	Header []Header
	Body   []byte
	Trace  *Trace
	// Held, when set, is the connection the request is written on first
	// (see Hold); Post owns it from then on.
	Held *Held
}

// A Held connection was taken ahead of its request by Hold, so that the
// request, when its time comes, is written without waiting for a dial.
type Held struct {
	cn     *conn
	reused bool
	hooks  *Trace // Hold's ConnectStart and ConnectDone, for Stage's redial
	// staged is the request Stage wrote on cn, all of it but its last
	// byte, which is tail; sc is that connection, for SendStaged (cn is
	// handed to the Post). send is tail's state (tailStaged, tailSending,
	// tailSent), sentAt when it was handed to the kernel (Unix ns): the
	// Post and SendStaged may race to send it, and one does.
	staged *Request
	sc     *conn
	tail   byte
	send   atomic.Int32
	sentAt atomic.Int64
}

// Hold takes an idle connection, or dials a new one, for a later Post with
// Request.Held set; t's ConnectStart and ConnectDone are called here,
// GotConn is called by that Post. A Held that is not posted goes back with
// Unhold.
func (c *Client) Hold(ctx context.Context, t *Trace) (*Held, error) {
	var hooks *Trace
	if t != nil {
		hooks = &Trace{ConnectStart: t.ConnectStart, ConnectDone: t.ConnectDone}
	}
	cn, reused, err := c.getConn(ctx, hooks, false)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	return &Held{cn: cn, reused: reused, hooks: hooks}, nil
}

// Unhold gives back a connection taken by Hold and not posted.
func (c *Client) Unhold(h *Held) {
	if h != nil && h.cn != nil {
		// A staged request cannot be taken back: the connection goes.
		c.release(h.cn, h.staged == nil)
		h.cn, h.staged = nil, nil
	}
}

// Client sends POST requests to one origin over HTTP/1.1 and keeps idle
// connections for reuse. It is safe for concurrent use; it starts no
// goroutines of its own.
type Client struct {
	addr    string // host:port to dial
	host    string // Host header
	target  string // request-target
	maxIdle int
	bufSize int
	stamps  bool
	dialer  net.Dialer

	mu   sync.Mutex
	idle []*conn // stack: the most recently used is on top
}

// New returns a client for the origin of rawURL, which is also the URL
// every request is sent to. Only http:// is supported.
func New(rawURL string, o Options) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("httpstream: %w", err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("httpstream: unsupported URL scheme %q in %q: only http is supported", u.Scheme, rawURL)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("httpstream: URL %q has no host", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("httpstream: URL %q has user information, which is not supported", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	c := &Client{
		addr:    net.JoinHostPort(u.Hostname(), port),
		host:    u.Host,
		target:  u.RequestURI(),
		maxIdle: o.MaxIdle,
		bufSize: o.ReadBuffer,
		stamps:  o.KernelTimestamps,
	}
	if c.maxIdle == 0 {
		c.maxIdle = defaultMaxIdle
	}
	if c.bufSize <= 0 {
		c.bufSize = defaultReadBuffer
	}
	if c.stamps {
		kstamp.Enable()
	}
	return c, nil
}

// Post sends one POST with the request's headers in order, Host from the
// URL and Content-Length, and returns once the status line and header of
// the final response are read (1xx responses other than 101 are skipped).
// The caller must Close the Body.
//
// When the request was written on a reused idle connection and writing it,
// or reading the response, fails with EOF, ECONNRESET or EPIPE before any
// response byte arrived, the request is sent once more on a new
// connection: the server closed the idle connection and never saw the
// request. This is the same retry net/http's Transport makes.
//
// Errors keep their identities for errors.Is and errors.As: a failed dial
// is a *net.OpError with Op "dial" (e.g. syscall.ECONNREFUSED); read and
// write errors wrap their syscall.Errno; malformed responses wrap
// ErrProtocol; a response cut short wraps io.ErrUnexpectedEOF; when ctx is
// done the error also wraps context.Cause(ctx).
func (c *Client) Post(ctx context.Context, r *Request) (*Response, error) {
	if err := checkHeader(r.Header); err != nil {
		c.Unhold(r.Held)
		return nil, err
	}
	if ctx.Err() != nil {
		c.Unhold(r.Held)
		return nil, fmt.Errorf("httpstream: %w", context.Cause(ctx))
	}
	held := r.Held
	if err := held.checkStaged(r); err != nil {
		c.Unhold(held)
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var staged *Held
		if held != nil && held.cn != nil && held.staged != nil {
			staged = held
		}
		cn, reused, err := c.takeConn(ctx, r.Trace, held, attempt > 0)
		held = nil
		if err != nil {
			return nil, ctxErr(ctx, err)
		}
		resp, err := c.roundTrip(ctx, cn, r, staged)
		if err == nil {
			return resp, nil
		}
		if attempt == 0 && reused && cn.nread == 0 && ctx.Err() == nil && staleConnErr(err) {
			continue
		}
		return nil, ctxErr(ctx, err)
	}
}

// roundTrip writes the request and reads the response head on cn. On error
// cn is closed. staged, when set, holds the request Stage wrote on cn but
// for its last byte.
func (c *Client) roundTrip(ctx context.Context, cn *conn, r *Request, staged *Held) (*Response, error) {
	cn.nread = 0
	cn.onFirstByte = nil
	if r.Trace != nil {
		cn.onFirstByte = r.Trace.GotFirstResponseByte
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			cn.cancelled.Store(true)
			_ = cn.nc.SetDeadline(aLongTimeAgo)
		})
	}
	fail := func(err error) (*Response, error) {
		if stop != nil {
			stop()
		}
		cn.close()
		return nil, err
	}
	var at time.Time
	var err error
	if staged != nil {
		at, err = staged.sendTail(cn)
	} else if err = c.writeRequest(cn, r, 0); err == nil {
		at = time.Now()
	}
	if err != nil {
		return fail(err)
	}
	if r.Trace != nil && r.Trace.WroteRequest != nil {
		r.Trace.WroteRequest(at)
	}
	resp, err := readResponse(cn)
	if err != nil {
		return fail(err)
	}
	resp.Body.client = c
	resp.Body.ctx = ctx
	resp.Body.stop = stop
	return resp, nil
}

// staleConnErr reports the errors of a connection the server closed while
// it was idle.
func staleConnErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ctxErr adds the context's cause to err once ctx is done.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("httpstream: %w: %w", context.Cause(ctx), err)
	}
	return fmt.Errorf("httpstream: %w", err)
}

func checkHeader(h []Header) error {
	for _, f := range h {
		if f.Key == "" {
			return errors.New("httpstream: empty header name")
		}
		for i := 0; i < len(f.Key); i++ {
			if !tokenByte(f.Key[i]) {
				return fmt.Errorf("httpstream: invalid header name %q", f.Key)
			}
		}
		for i := 0; i < len(f.Value); i++ {
			if !validValueByte(f.Value[i]) {
				return fmt.Errorf("httpstream: invalid value for header %q", f.Key)
			}
		}
	}
	return nil
}

var headPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeRequest writes r on cn, all of it but its last hold bytes.
func (c *Client) writeRequest(cn *conn, r *Request, hold int) error {
	bp := headPool.Get().(*[]byte)
	b := append((*bp)[:0], "POST "...)
	b = append(b, c.target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	b = append(b, "\r\n"...)
	for _, f := range r.Header {
		if strings.EqualFold(f.Key, "Host") || strings.EqualFold(f.Key, "Content-Length") {
			continue
		}
		b = append(b, f.Key...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(r.Body)), 10)
	b = append(b, "\r\n\r\n"...)
	body := r.Body
	if hold > len(body) {
		b = b[:len(b)-(hold-len(body))]
	}
	body = body[:max(len(body)-hold, 0)]
	var err error
	if len(body) <= smallBody {
		b = append(b, body...)
		_, err = cn.nc.Write(b)
	} else {
		bufs := net.Buffers{b, body}
		_, err = bufs.WriteTo(cn.nc)
	}
	if cap(b) <= 64<<10 {
		*bp = b
		headPool.Put(bp)
	}
	return err
}

// takeConn is the held connection when there is one, else getConn's.
func (c *Client) takeConn(ctx context.Context, t *Trace, h *Held, fresh bool) (*conn, bool, error) {
	if h == nil || h.cn == nil {
		return c.getConn(ctx, t, fresh)
	}
	cn := h.cn
	h.cn, h.staged = nil, nil
	if t != nil && t.GotConn != nil {
		t.GotConn(h.reused)
	}
	return cn, h.reused, nil
}

// getConn pops an idle connection or dials a new one.
func (c *Client) getConn(ctx context.Context, t *Trace, fresh bool) (*conn, bool, error) {
	if !fresh {
		c.mu.Lock()
		if n := len(c.idle); n > 0 {
			cn := c.idle[n-1]
			c.idle[n-1] = nil
			c.idle = c.idle[:n-1]
			c.mu.Unlock()
			if t != nil && t.GotConn != nil {
				t.GotConn(true)
			}
			return cn, true, nil
		}
		c.mu.Unlock()
	}
	if t != nil && t.ConnectStart != nil {
		t.ConnectStart()
	}
	nc, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if t != nil && t.ConnectDone != nil {
		t.ConnectDone(err)
	}
	if err != nil {
		return nil, false, err
	}
	if t != nil && t.GotConn != nil {
		t.GotConn(false)
	}
	return newConn(nc, c.bufSize, c.stamps), false, nil
}

// release puts cn back on the idle stack when reuse is true and there is
// room, and closes it otherwise.
func (c *Client) release(cn *conn, reuse bool) {
	cn.onFirstByte = nil
	if reuse {
		if len(cn.buf) > c.bufSize {
			cn.buf = make([]byte, c.bufSize)
		}
		cn.r, cn.w = 0, 0
		c.mu.Lock()
		if len(c.idle) < c.maxIdle {
			c.idle = append(c.idle, cn)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	cn.close()
}

// CloseIdle closes the idle connections.
func (c *Client) CloseIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, cn := range idle {
		cn.close()
	}
}
