package httpstream

import (
	"context"
	"errors"
	"net"
	"runtime"
	"time"
)

// errStagedMismatch is returned by a Post whose request is not the one
// staged on its held connection.
var errStagedMismatch = errors.New("httpstream: the request posted on a staged connection is not the one staged")

// Stage writes r on the held connection ahead of its Post: the request
// line, the header and all of the body but its last byte (all of the
// header but its last byte when the body is empty). The Post of the same
// request (the same Header and Body) with Held set then writes that one
// byte. A server cannot take a request up before its last byte arrives, so
// the request arrives complete at the time of the Post, however long it is:
// a prompt of 100,000 tokens is some 400 KB, which takes a busy client and
// server milliseconds to move even on loopback, and longer on a network.
//
// The write is bounded by ctx. When it fails on a reused connection that
// the server closed while idle, Stage dials a new connection once and
// writes there. When it fails otherwise, the connection is closed, the
// error returned, and the Post goes on as if nothing were staged: it
// dials and writes the whole request then. A staged connection that is
// not posted is closed by Unhold, since the server has part of a request
// on it.
func (c *Client) Stage(ctx context.Context, h *Held, r *Request) error {
	if h == nil || h.cn == nil {
		return errors.New("httpstream: Stage needs a held connection")
	}
	if h.staged != nil {
		return errors.New("httpstream: a request is already staged on this connection")
	}
	if err := checkHeader(r.Header); err != nil {
		return err
	}
	err := c.stageOn(ctx, h.cn, r)
	if err != nil && h.reused && ctx.Err() == nil && staleConnErr(err) {
		h.cn.close()
		h.cn, _, err = c.getConn(ctx, h.hooks, true)
		if err != nil {
			return ctxErr(ctx, err)
		}
		h.reused = false
		err = c.stageOn(ctx, h.cn, r)
	}
	if err != nil {
		h.cn.close()
		h.cn = nil
		return ctxErr(ctx, err)
	}
	h.staged, h.sc = r, h.cn
	h.send.Store(tailStaged)
	if n := len(r.Body); n > 0 {
		h.tail = r.Body[n-1]
	} else {
		h.tail = '\n' // the blank line that ends the header
	}
	return nil
}

// stageOn writes all of r but its last byte on cn, giving up when ctx
// ends.
func (c *Client) stageOn(ctx context.Context, cn *conn, r *Request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = cn.nc.SetWriteDeadline(aLongTimeAgo) })
	err := c.writeRequest(cn, r, 1)
	if !stop() {
		return context.Cause(ctx) // the deadline was set: the connection is spent
	}
	return err
}

// checkStaged reports a Post of another request on a connection where a
// request is staged; h may be nil.
func (h *Held) checkStaged(r *Request) error {
	if h == nil || h.staged == nil {
		return nil
	}
	s := h.staged
	if len(s.Body) != len(r.Body) || len(s.Header) != len(r.Header) ||
		(len(r.Body) > 0 && &s.Body[0] != &r.Body[0]) {
		return errStagedMismatch
	}
	for i := range r.Header {
		if s.Header[i] != r.Header[i] {
			return errStagedMismatch
		}
	}
	return nil
}

// States of a staged request's last byte (Held.send).
const (
	tailStaged  = iota // not sent
	tailSending        // a goroutine is writing it
	tailSent           // handed to the kernel at Held.sentAt
)

// SendStaged writes the last byte of the request staged on h at once,
// without waiting, and reports when it was handed to the kernel. It is for
// a caller that releases many staged requests at one moment from one
// goroutine, while the Post of each runs on its own: whichever of the two
// comes first sends the byte, the other finds it sent (a Post waits for a
// SendStaged under way), so that a burst goes out at once even when the
// sending goroutine loses its core halfway. ok is false when the byte was
// not sent here: already sent or being sent, the socket's send buffer
// full, an error, or a platform other than Linux; the Post then sends it
// and reports what went wrong.
func (c *Client) SendStaged(h *Held) (at time.Time, ok bool) {
	if h == nil || h.sc == nil || !h.send.CompareAndSwap(tailStaged, tailSending) {
		return time.Time{}, false
	}
	sent := false
	if tc, isTCP := h.sc.nc.(*net.TCPConn); isTCP {
		if rc, err := tc.SyscallConn(); err == nil {
			tail := [1]byte{h.tail}
			err = rc.Write(func(fd uintptr) bool {
				at = time.Now()
				sent = writeNow(fd, tail[:])
				return true // one try: never wait for the buffer
			})
			sent = sent && err == nil
		}
	}
	if !sent {
		h.send.Store(tailStaged) // the Post writes it
		return time.Time{}, false
	}
	h.sentAt.Store(at.UnixNano())
	h.send.Store(tailSent)
	return at, true
}

// sendTail completes the staged request on cn, its last byte, unless
// SendStaged sent it (or is sending it: then it waits for that), and
// reports when the byte was handed to the kernel.
func (h *Held) sendTail(cn *conn) (time.Time, error) {
	for {
		switch h.send.Load() {
		case tailSent:
			return time.Unix(0, h.sentAt.Load()), nil
		case tailStaged:
			if h.send.CompareAndSwap(tailStaged, tailSending) {
				at := time.Now()
				_, err := cn.nc.Write([]byte{h.tail})
				h.sentAt.Store(at.UnixNano())
				h.send.Store(tailSent)
				return at, err
			}
		default:
			runtime.Gosched() // SendStaged's one write is under way
		}
	}
}
