package httpstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

const (
	// maxChunkLine is the longest chunk-size line, CRLF included, as in
	// net/http.
	maxChunkLine = 4096
	// maxTrailerBytes bounds the trailer section after a chunked body, as
	// net/http's Transport does with its 4 KiB read buffer.
	maxTrailerBytes = 4096
	// maxChunkExcess bounds the framing bytes not paid for by chunk data,
	// net/http's guard against a sender of tiny chunks with long
	// extensions.
	maxChunkExcess = 16 << 10
)

// ErrBodyClosed is returned by a Read after Close.
var ErrBodyClosed = errors.New("httpstream: read on closed body")

// Body streams a response body: chunked, Content-Length or read until the
// server closes. Read returns as soon as any body bytes are available. A
// Body is used by one goroutine; cancel the request's context to abort a
// blocked Read.
type Body struct {
	c      *conn
	client *Client
	ctx    context.Context
	stop   func() bool // stops the context's AfterFunc

	mode      int
	remain    int64 // bodyLength: bytes left; bodyChunked: bytes left in this chunk
	checkEnd  bool  // bodyChunked: CRLF after chunk data is next
	trailer   bool  // bodyChunked: last chunk seen, trailer section is next
	excess    int64 // bodyChunked: framing bytes not paid for by data
	keepAlive bool

	done   bool  // read to its end
	closed bool  // Close was called
	err    error // sticky: io.EOF at the end, or what ended the body

	kern, user time.Time
}

// Read reads up to len(p) body bytes. It blocks only while no body byte is
// buffered, and never waits to fill p. The end of the body is io.EOF (after
// a call that returned the last bytes with a nil error); a body cut short
// — mid-chunk, before Content-Length bytes or inside the chunk framing —
// gives an error wrapping io.ErrUnexpectedEOF; a read error keeps its
// identity (e.g. syscall.ECONNRESET) and, when the request's context is
// done, also wraps context.Cause.
func (b *Body) Read(p []byte) (int, error) {
	if b.closed {
		return 0, ErrBodyClosed
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	switch b.mode {
	case bodyNone:
		err = io.EOF
	case bodyLength:
		if int64(len(p)) > b.remain {
			p = p[:b.remain]
		}
		n, err = b.c.readSome(p)
		b.remain -= int64(n)
		if err != nil {
			err = cutShort(err, "body shorter than its Content-Length")
		} else if b.remain == 0 {
			err = io.EOF
		}
	case bodyUntilClose:
		n, err = b.c.readSome(p)
	case bodyChunked:
		n, err = b.readChunked(p)
	}
	if n > 0 {
		b.kern, b.user = b.c.kern, b.c.user
	}
	if err != nil {
		if err == io.EOF {
			b.done = true
		} else if b.ctx != nil && b.ctx.Err() != nil {
			err = fmt.Errorf("httpstream: %w: %w", context.Cause(b.ctx), err)
		}
		b.err = err
		if n > 0 {
			return n, nil
		}
	}
	return n, err
}

// ReadTime returns when the bytes of the last Read that returned data
// arrived. kernel is the kernel receive timestamp of the last TCP segment
// copied by the read that brought them in (zero without kernel
// timestamps); user is when that read returned to user space. When a Read
// is served from bytes an earlier read buffered, both are that earlier
// read's stamps: the stamps always belong to the read that received the
// bytes.
func (b *Body) ReadTime() (kernel, user time.Time) { return b.kern, b.user }

// Close releases the connection: back to the idle pool when the body was
// read to its end, the response allows keep-alive and the request's
// context did not end; otherwise the connection is closed (an unread body
// is not drained). Close never fails and may be called more than once.
func (b *Body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	c := b.c
	if c == nil {
		return nil
	}
	stopped := b.stop == nil || b.stop()
	done := b.done || b.err == nil && b.mode == bodyNone
	reuse := done && b.keepAlive && stopped && !c.cancelled.Load() && c.r == c.w && c.err == nil
	b.client.release(c, reuse)
	return nil
}

// readChunked copies chunk data into p, crossing chunk boundaries only
// while the next chunk's framing is already buffered.
func (b *Body) readChunked(p []byte) (n int, err error) {
	c := b.c
	for {
		if b.checkEnd {
			if n > 0 && c.w-c.r < 2 {
				return n, nil
			}
			for c.w-c.r < 2 {
				if err := c.fill(len(c.buf)); err != nil {
					return n, cutShort(err, "chunked body ends after chunk data")
				}
			}
			if c.buf[c.r] != '\r' || c.buf[c.r+1] != '\n' {
				return n, protoErr("malformed chunked encoding: chunk data not followed by CRLF")
			}
			c.r += 2
			b.checkEnd = false
		}
		if b.trailer {
			if n > 0 && !trailerBuffered(c.buffered()) {
				return n, nil
			}
			if err := b.readTrailer(); err != nil {
				return n, err
			}
			return n, io.EOF
		}
		if b.remain == 0 {
			if n > 0 && bytes.IndexByte(c.buffered(), '\n') < 0 {
				return n, nil
			}
			if err := b.beginChunk(); err != nil {
				return n, err
			}
			continue
		}
		if n == len(p) || n > 0 && c.r == c.w {
			return n, nil
		}
		q := p[n:]
		if int64(len(q)) > b.remain {
			q = q[:b.remain]
		}
		m, err := c.readSome(q)
		n += m
		b.remain -= int64(m)
		if err != nil {
			return n, cutShort(err, "chunked body ends inside chunk data")
		}
		if b.remain == 0 {
			b.checkEnd = true
		}
	}
}

// beginChunk reads a chunk-size line with net/http's rules: CRLF only, no
// other CR, trailing white space and extensions ignored, at most 16 hex
// digits.
func (b *Body) beginChunk() error {
	line, _, crlf, err := b.c.readLine(maxChunkLine)
	if err != nil {
		if errors.Is(err, errBufferFull) {
			return protoErr("chunk size line longer than %d bytes", maxChunkLine)
		}
		return cutShort(err, "chunked body ends in a chunk size line")
	}
	if !crlf {
		return protoErr("chunk size line %q ends with bare LF", line)
	}
	if bytes.IndexByte(line, '\r') >= 0 {
		return protoErr("invalid CR in chunk size line %q", line)
	}
	b.excess += int64(len(line)) + 2
	size := bytes.TrimRight(line, " \t")
	size, _, _ = bytes.Cut(size, []byte(";"))
	n, err := parseHex(size)
	if err != nil {
		return protoErr("%v in chunk size line %q", err, line)
	}
	b.excess -= 16 + 2*int64(n)
	b.excess = max(b.excess, 0)
	if b.excess > maxChunkExcess {
		return protoErr("chunked encoding contains too much non-data")
	}
	b.remain = int64(n)
	if n == 0 {
		b.trailer = true
	}
	return nil
}

func parseHex(v []byte) (uint64, error) {
	if len(v) == 0 {
		return 0, errors.New("empty chunk size")
	}
	if len(v) > 16 {
		return 0, errors.New("chunk size too large")
	}
	var n uint64
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, errors.New("invalid byte in chunk size")
		}
		n = n<<4 | uint64(c)
	}
	if n > 1<<60 {
		return 0, errors.New("chunk size too large")
	}
	return n, nil
}

// readTrailer reads and drops the trailer section: an empty line, or
// header lines ending in CRLF CRLF within maxTrailerBytes.
func (b *Body) readTrailer() error {
	c := b.c
	for c.w-c.r < 2 {
		if err := c.fill(len(c.buf)); err != nil {
			return cutShort(err, "chunked body ends before its trailer")
		}
	}
	if c.buf[c.r] == '\r' && c.buf[c.r+1] == '\n' {
		c.r += 2
		return nil
	}
	bud := budget{left: maxTrailerBytes, what: "trailer section", max: maxTrailerBytes}
	_, crlfEnd, err := readHeader(c, &bud)
	if err != nil {
		return cutShort(err, "chunked body ends in its trailer")
	}
	if !crlfEnd {
		return protoErr("trailer section not terminated by CRLF CRLF")
	}
	return nil
}

// trailerBuffered reports whether buf holds a whole trailer section.
func trailerBuffered(buf []byte) bool {
	return bytes.HasPrefix(buf, []byte("\r\n")) || bytes.Contains(buf, []byte("\r\n\r\n"))
}

// cutShort turns a clean end of stream into io.ErrUnexpectedEOF; other
// errors are returned as they are.
func cutShort(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("httpstream: %s: %w", what, io.ErrUnexpectedEOF)
	}
	return err
}

// readSome copies buffered bytes into p, or, with none buffered, reads
// once: straight into p when p is at least as large as the buffer,
// through the buffer otherwise. It returns an error only with n == 0.
func (c *conn) readSome(p []byte) (int, error) {
	for c.r == c.w {
		if c.err != nil {
			return 0, c.err
		}
		if len(p) >= len(c.buf) {
			n, err := c.read(p)
			if err != nil {
				c.err = err
			}
			if n > 0 {
				return n, nil
			}
			if err != nil {
				return 0, err
			}
			continue
		}
		if err := c.fill(len(c.buf)); err != nil && c.r == c.w {
			return 0, err
		}
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}
