package mockllm

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/kstamp"
)

// stampListener hands out connections that read with the kernel's receive
// time (Linux), so that a request's arrival is known as the network saw it,
// before this process's runtime got round to reading it.
type stampListener struct{ net.Listener }

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	ks := kstamp.New(tc)
	if ks == nil {
		return c, nil
	}
	return &stampConn{TCPConn: tc, ks: ks}, nil
}

// stampConn is an accepted connection that keeps the kernel's receive time
// of its latest read. Its other methods are the TCP connection's.
type stampConn struct {
	*net.TCPConn
	ks   *kstamp.Reader
	last atomic.Int64 // unix nanoseconds; 0 before a stamped read
}

func (c *stampConn) Read(p []byte) (int, error) {
	n, at, err := c.ks.Read(p)
	if n > 0 {
		var ns int64 // unknown: an unstamped read must not leave an older stamp behind
		if !at.IsZero() {
			ns = at.UnixNano()
		}
		c.last.Store(ns)
	}
	return n, err
}

type connKey struct{}

// withConn is the server's ConnContext: it makes the connection known to
// the handlers of its requests.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*stampConn); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

// arrivedAt is when the kernel received the last byte of r, read to its
// end just before: the stamp of its connection's latest read. Zero where
// the kernel gives no stamps and for HTTP/2, whose reads carry other
// streams' frames.
func arrivedAt(r *http.Request) time.Time {
	if r.ProtoMajor != 1 {
		return time.Time{}
	}
	sc, ok := r.Context().Value(connKey{}).(*stampConn)
	if !ok {
		return time.Time{}
	}
	if ns := sc.last.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}
