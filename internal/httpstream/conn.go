package httpstream

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/kstamp"
)

// aLongTimeAgo is a deadline in the past: setting it makes every blocked and
// future I/O on a connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// errBufferFull is returned by fill when the buffer reached its limit
// without the caller finding what it looks for.
var errBufferFull = errors.New("httpstream: buffer full")

// conn is one TCP connection with its read buffer. All its methods run on
// the goroutine of the request that holds it; only cancelled is touched by
// a context's AfterFunc.
type conn struct {
	nc net.Conn
	// ks is set when kernel receive timestamps are on: reads then go
	// through recvmsg inside the runtime poller.
	ks *kstamp.Reader

	buf  []byte // buf[r:w] is read and not yet consumed
	r, w int
	err  error // sticky read error, returned once buf[r:w] is consumed

	kern, user time.Time // arrival stamps of the latest read

	// Per request.
	nread       int64  // response bytes read since the request was written
	onFirstByte func() // Trace.GotFirstResponseByte
	cancelled   atomic.Bool
}

func newConn(nc net.Conn, bufSize int, kernelStamps bool) *conn {
	c := &conn{nc: nc, buf: make([]byte, bufSize)}
	if kernelStamps {
		if tc, ok := nc.(*net.TCPConn); ok {
			c.ks = kstamp.New(tc)
		}
	}
	return c
}

// read does one read into p and stamps it.
func (c *conn) read(p []byte) (int, error) {
	var n int
	var err error
	if c.ks != nil {
		n, c.kern, err = c.ks.Read(p)
	} else {
		n, err = c.nc.Read(p)
		c.kern = time.Time{}
	}
	c.user = time.Now()
	if n > 0 {
		if c.nread == 0 && c.onFirstByte != nil {
			c.onFirstByte()
		}
		c.nread += int64(n)
	}
	return n, err
}

// buffered returns the read and unconsumed bytes.
func (c *conn) buffered() []byte { return c.buf[c.r:c.w] }

// fill reads once more, appending to the buffer. It first moves unconsumed
// bytes to the front when there is no room after them, then grows the
// buffer up to limit bytes; errBufferFull means buf[r:w] already holds
// limit bytes. A read error is kept and returned by this and every later
// fill.
func (c *conn) fill(limit int) error {
	if c.err != nil {
		return c.err
	}
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	if c.w == len(c.buf) {
		switch {
		case c.r > 0:
			c.w = copy(c.buf, c.buf[c.r:c.w])
			c.r = 0
		case len(c.buf) < limit:
			nb := make([]byte, min(2*len(c.buf), limit))
			c.w = copy(nb, c.buf[:c.w])
			c.buf = nb
		default:
			return errBufferFull
		}
	}
	n, err := c.read(c.buf[c.w:])
	c.w += n
	if err != nil {
		c.err = err
	}
	if n > 0 {
		return nil
	}
	return err
}

// readLine consumes one line ending in '\n' and returns it without the
// '\n' and without one '\r' before it, the way bufio.Reader.ReadLine
// does; n is the number of bytes consumed and crlf whether the line ended
// in "\r\n". The line, '\n' included, may be at most limit bytes long;
// errBufferFull reports a longer one. A stream that ends before the '\n'
// gives io.ErrUnexpectedEOF. The line aliases the buffer: it is valid
// until the next fill.
func (c *conn) readLine(limit int) (line []byte, n int, crlf bool, err error) {
	scanned := 0
	for {
		b := c.buf[c.r:c.w]
		if i := bytes.IndexByte(b[scanned:], '\n'); i >= 0 {
			i += scanned
			if i+1 > limit {
				return nil, 0, false, errBufferFull
			}
			c.r += i + 1
			line = b[:i]
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
				crlf = true
			}
			return line, i + 1, crlf, nil
		}
		if len(b) >= limit {
			return nil, 0, false, errBufferFull
		}
		scanned = len(b)
		if err := c.fill(limit); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, 0, false, io.ErrUnexpectedEOF
			}
			return nil, 0, false, err
		}
	}
}

// peekByte returns the next byte without consuming it, reading if needed.
func (c *conn) peekByte() (byte, error) {
	for c.r == c.w {
		if err := c.fill(len(c.buf)); err != nil {
			return 0, err
		}
	}
	return c.buf[c.r], nil
}

// close closes the network connection.
func (c *conn) close() { _ = c.nc.Close() }
