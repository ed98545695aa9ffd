package httpstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
)

// pieceConn is a net.Conn whose reads return the response in pieces.
type pieceConn struct {
	net.Conn
	data  []byte
	piece int
}

func (p *pieceConn) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(b), len(p.data), p.piece)
	copy(b, p.data[:n])
	p.data = p.data[n:]
	return n, nil
}

func (p *pieceConn) Close() error { return nil }

// parse reads resp with this package's parser: the response head, then the
// whole body.
func parse(resp []byte, piece, bufSize int) (*Response, []byte, error) {
	c := newConn(&pieceConn{data: resp, piece: piece}, bufSize, false)
	r, err := readResponse(c)
	if err != nil {
		return nil, nil, err
	}
	r.Body.client = &Client{maxIdle: -1}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	return r, body, err
}

// reference reads resp the way net/http's Transport does: ReadResponse,
// skipping up to five 1xx responses other than 101, then io.ReadAll.
func reference(resp []byte) (*http.Response, []byte, error) {
	br := bufio.NewReader(bytes.NewReader(resp))
	for n := 0; ; n++ {
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, nil, err
		}
		if r.StatusCode >= 100 && r.StatusCode <= 199 && r.StatusCode != 101 {
			if n == max1xx {
				return nil, nil, errors.New("too many 1xx")
			}
			continue
		}
		body, err := io.ReadAll(r.Body)
		return r, body, err
	}
}

// ignoredKeys are header fields net/http's ReadResponse removes or adds
// while applying them; this package keeps the header as received.
var ignoredKeys = map[string]bool{
	"Transfer-Encoding": true, "Content-Length": true, "Connection": true, "Trailer": true, "Cache-Control": true,
}

// FuzzResponse feeds arbitrary bytes as a server's response to this
// package's parser and to net/http's: no panics, and both accept the same
// responses with the same status, header values and body. The first byte
// picks how the bytes are split into reads and the read buffer size.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno",
		"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nTransfer-Encoding: chunked\r\nTrailer: Y\r\n\r\n3;x=y\r\nabc\r\n0\r\nY: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc",
		"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
	} {
		for _, mode := range []byte{0x00, 0x13, 0x0f, 0x38} {
			f.Add(append([]byte{mode}, s...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		piece := int(in[0]&7) + 1
		if in[0]&8 != 0 {
			piece = len(in)
		}
		bufSize := []int{16, 64, 512, 4096}[in[0]>>4&3]
		data := in[1:]

		mine, mineBody, mineErr := parse(data, piece, bufSize)
		ref, refBody, refErr := reference(data)
		if mineErr == nil && refErr != nil {
			t.Fatalf("net/http rejects what httpstream accepts: %v", refErr)
		}
		if refErr == nil && mineErr != nil {
			if deliberate(data, mineErr) {
				return
			}
			t.Fatalf("httpstream rejects what net/http accepts: %v", mineErr)
		}
		if mineErr != nil {
			return
		}
		if mine.StatusCode != ref.StatusCode {
			t.Fatalf("status %d, net/http %d", mine.StatusCode, ref.StatusCode)
		}
		for k, vv := range ref.Header {
			if ignoredKeys[k] {
				continue
			}
			if !equal(vv, mine.Header[k]) {
				t.Fatalf("header %q = %q, net/http %q", k, mine.Header[k], vv)
			}
		}
		for k := range mine.Header {
			if !ignoredKeys[k] && ref.Header[k] == nil {
				t.Fatalf("header %q only in httpstream", k)
			}
		}
		if !bytes.Equal(mineBody, refBody) {
			t.Fatalf("body %q, net/http %q", mineBody, refBody)
		}
	})
}

// deliberate reports the one deliberate difference: a trailer section
// must end in CRLF CRLF where it ends. net/http also accepts trailer lines
// ending in a bare LF as long as some CRLF CRLF follows within 4 KiB,
// even beyond the trailer; on a live connection that would mean waiting
// for bytes after the response.
func deliberate(_ []byte, err error) bool {
	return errors.Is(err, ErrProtocol) && bytes.Contains([]byte(err.Error()), []byte("trailer section not terminated by CRLF CRLF"))
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
