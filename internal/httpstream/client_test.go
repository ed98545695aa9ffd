package httpstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sseEvent(i int) string { return fmt.Sprintf("data: {\"i\":%d}\n\n", i) }

func TestChunkedStreamReadsEachFlush(t *testing.T) {
	const events = 5
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := range events {
			time.Sleep(20 * time.Millisecond)
			_, _ = io.WriteString(w, sseEvent(i))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	cl, err := New(srv.URL+"/v1/chat/completions", Options{KernelTimestamps: true})
	require.NoError(t, err)
	defer cl.CloseIdle()

	resp := post(t, cl, context.Background(), nil)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	buf := make([]byte, 4096)
	var prev time.Time
	for i := range events {
		n, err := resp.Body.Read(buf)
		require.NoError(t, err)
		// One Read per flush: the next event is 20 ms away, so a Read
		// that waited to fill buf would return several.
		require.Equal(t, sseEvent(i), string(buf[:n]))
		_, user := resp.Body.ReadTime()
		if i > 0 {
			assert.GreaterOrEqual(t, user.Sub(prev), 10*time.Millisecond)
		}
		prev = user
	}
	n, err := resp.Body.Read(buf)
	for err == nil && n == 0 {
		n, err = resp.Body.Read(buf)
	}
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, resp.Body.Close())
	assert.Len(t, cl.idle, 1, "a body read to its end returns its connection")
}

func TestContentLengthAndStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/missing" {
			http.Error(w, "no such model", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)+3))
		_, _ = w.Write(append([]byte("ok:"), body...))
	}))
	defer srv.Close()
	cl, err := New(srv.URL+"/echo", Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp, err := cl.Post(context.Background(), &Request{Body: []byte("abc")})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "6", resp.Header.Get("Content-Length"))
	assert.Equal(t, "ok:abc", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())

	cl404, err := New(srv.URL+"/missing", Options{})
	require.NoError(t, err)
	defer cl404.CloseIdle()
	resp, err = cl404.Post(context.Background(), &Request{})
	require.NoError(t, err)
	assert.Equal(t, 404, resp.StatusCode)
	assert.Equal(t, "no such model\n", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
}

func TestReadUntilClose(t *testing.T) {
	for name, resp := range map[string]string{
		"http1.0":          "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: a\n\ndata: b\n\n",
		"connection close": "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ndata: a\n\ndata: b\n\n",
		"no length":        "HTTP/1.1 200 OK\r\n\r\ndata: a\n\ndata: b\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newRawServer(t, respondRaw(resp))
			cl, err := New(srv.URL(), Options{})
			require.NoError(t, err)
			r := post(t, cl, context.Background(), nil)
			assert.Equal(t, "data: a\n\ndata: b\n\n", string(readAll(t, r.Body)))
			require.NoError(t, r.Body.Close())
			assert.Empty(t, cl.idle, "a body delimited by close is not reused")
		})
	}
}

func TestKeepAliveReuse(t *testing.T) {
	var mu sync.Mutex
	var remotes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes = append(remotes, r.RemoteAddr)
		mu.Unlock()
		_, _ = io.WriteString(w, "data: x\n\n")
	}))
	defer srv.Close()
	cl, err := New(srv.URL, Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	var reused []bool
	tr := &Trace{GotConn: func(r bool) { reused = append(reused, r) }}
	for range 3 {
		resp := post(t, cl, context.Background(), tr)
		readAll(t, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	assert.Equal(t, []bool{false, true, true}, reused)
	require.Len(t, remotes, 3)
	assert.Equal(t, remotes[0], remotes[1], "same local port")
	assert.Equal(t, remotes[0], remotes[2])
}

func TestTraceOrder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hi")
	}))
	defer srv.Close()
	cl, err := New(srv.URL, Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	var got []string
	tr := &Trace{
		ConnectStart:         func() { got = append(got, "connect") },
		ConnectDone:          func(err error) { got = append(got, fmt.Sprint("connected ", err)) },
		GotConn:              func(r bool) { got = append(got, fmt.Sprint("conn ", r)) },
		WroteRequest:         func(time.Time) { got = append(got, "wrote") },
		GotFirstResponseByte: func() { got = append(got, "first byte") },
	}
	resp := post(t, cl, context.Background(), tr)
	readAll(t, resp.Body)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, []string{"connect", "connected <nil>", "conn false", "wrote", "first byte"}, got)
}

func TestRequestWireFormat(t *testing.T) {
	got := make(chan string, 1)
	srv := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		body := make([]byte, 2)
		_, _ = io.ReadFull(br, body)
		got <- head.String() + string(body)
		_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
	})
	cl, err := New(srv.URL()+"?a=1", Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp, err := cl.Post(context.Background(), &Request{Body: []byte("{}"), Header: []Header{
		{"Content-Type", "application/json"}, {"Host", "ignored"}, {"traceparent", "00-abc-def-01"},
		{"Content-Length", "99"}, {"Accept", "text/event-stream"},
	}})
	require.NoError(t, err)
	assert.Equal(t, 204, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	assert.Len(t, cl.idle, 1, "a 204 needs no read to be reused")
	host := strings.TrimPrefix(srv.URL(), "http://")
	host = host[:strings.IndexByte(host, '/')]
	assert.Equal(t, "POST /v1/completions?a=1 HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\n"+
		"traceparent: 00-abc-def-01\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}", <-got)

	_, err = cl.Post(context.Background(), &Request{Header: []Header{{"X", "a\r\nInjected: 1"}}})
	contains(t, err, `invalid value for header "X"`)
}

// okServer is a loopback server that answers every request "ok", and a
// client for it; both are closed when the test ends.
func okServer(t *testing.T) (*httptest.Server, *Client) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	cl, err := New(srv.URL, Options{})
	require.NoError(t, err)
	t.Cleanup(cl.CloseIdle)
	return srv, cl
}

func TestStaleIdleConnectionRetried(t *testing.T) {
	srv, cl := okServer(t)
	resp := post(t, cl, context.Background(), nil)
	readAll(t, resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Len(t, cl.idle, 1)

	srv.CloseClientConnections() // the server drops the idle connection
	time.Sleep(10 * time.Millisecond)
	var reused []bool
	resp = post(t, cl, context.Background(), &Trace{GotConn: func(r bool) { reused = append(reused, r) }})
	assert.Equal(t, "ok", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, []bool{true, false}, reused, "stale idle connection, then one retry on a new one")
}

func TestNoRetryAfterResponseBytes(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			if k == 1 {
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				continue
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 O") // then close mid status line
			return
		}
	})
	cl, err := New(srv.URL(), Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp := post(t, cl, context.Background(), nil)
	readAll(t, resp.Body)
	require.NoError(t, resp.Body.Close())
	_, err = cl.Post(context.Background(), &Request{})
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, n, "a request the server answered is not sent again")
}

func TestLargeChunkStreams(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 4<<20/16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, big) // one 4 MiB chunk
		w.(http.Flusher).Flush()
	}))
	defer srv.Close()
	cl, err := New(srv.URL, Options{KernelTimestamps: true})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp := post(t, cl, context.Background(), nil)
	require.Equal(t, "chunked", resp.Header.Get("Transfer-Encoding"))
	buf := make([]byte, 32<<10)
	var got strings.Builder
	reads := 0
	for range 1 << 20 {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if n > 0 {
			reads++
		}
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.Equal(t, len(big), got.Len())
	require.True(t, got.String() == big)
	assert.Greater(t, reads, len(big)/len(buf)-1, "streamed in reads of at most len(p)")
	assert.Equal(t, defaultReadBuffer, len(resp.Body.c.buf), "the read buffer did not grow")
	require.NoError(t, resp.Body.Close())
}

func TestMalformedResponses(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	for _, tc := range []struct{ name, resp, want string }{
		{"no space", "HTTP/1.1200OK\r\n\r\n", `malformed status line "HTTP/1.1200OK"`},
		{"short code", "HTTP/1.1 20 OK\r\n\r\n", `malformed status code "20" in status line "HTTP/1.1 20 OK"`},
		{"letters", "HTTP/1.1 abc OK\r\n\r\n", `malformed status code "abc"`},
		{"version", "HTTX/1.1 200 OK\r\n\r\n", `malformed HTTP version "HTTX/1.1"`},
		{"no colon", "HTTP/1.1 200 OK\r\nContent-Type text/plain\r\n\r\n", `malformed header line, missing colon: "Content-Type text/plain"`},
		{"bad key", "HTTP/1.1 200 OK\r\nX(y): 1\r\n\r\n", `malformed header line "X(y): 1"`},
		{"control byte", "HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n", `malformed header line "X: a\x01b"`},
		{"leading space", "HTTP/1.1 200 OK\r\n X: 1\r\n\r\n", `first line starts with white space: " X: 1"`},
		{"te", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", `unsupported transfer encoding "gzip"`},
		{"cl", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", `bad Content-Length "1x"`},
		{"two cl", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", `multiple Content-Length headers`},
		{"huge header", "HTTP/1.1 200 OK\r\nX: " + long + "\r\n\r\n", `response header block exceeds 1048576 bytes`},
		{"six 1xx", strings.Repeat("HTTP/1.1 103 Early Hints\r\n\r\n", 6) + "HTTP/1.1 200 OK\r\n\r\n", "more than 5 1xx responses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respondRaw(tc.resp))
			cl, err := New(srv.URL(), Options{})
			require.NoError(t, err)
			_, err = cl.Post(context.Background(), &Request{})
			require.ErrorIs(t, err, ErrProtocol)
			contains(t, err, tc.want)
		})
	}
}

func TestMalformedChunks(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct{ name, body, want string }{
		{"bad size", "zz\r\nab\r\n0\r\n\r\n", `invalid byte in chunk size in chunk size line "zz"`},
		{"bare lf", "2\nab\r\n0\r\n\r\n", `chunk size line "2" ends with bare LF`},
		{"no crlf after data", "2\r\nabX\r\n0\r\n\r\n", "chunk data not followed by CRLF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respondRaw(head+tc.body))
			cl, err := New(srv.URL(), Options{})
			require.NoError(t, err)
			resp := post(t, cl, context.Background(), nil)
			_, err = io.ReadAll(resp.Body)
			require.ErrorIs(t, err, ErrProtocol)
			contains(t, err, tc.want)
			require.NoError(t, resp.Body.Close())
		})
	}
}

func TestInformationalAndFoldedHeaders(t *testing.T) {
	srv := newRawServer(t, respondRaw("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\n\tc\r\n"+
		"content-length: 2\r\n\r\nhi"))
	cl, err := New(srv.URL(), Options{ReadBuffer: 8})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp := post(t, cl, context.Background(), nil)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "a b c", resp.Header.Get("X-Folded"))
	assert.Equal(t, "hi", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
}

func TestTrailersIgnored(t *testing.T) {
	srv := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Usage\r\n\r\n"+
				"3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nX-Usage: 12\r\n\r\n")
		}
	})
	cl, err := New(srv.URL(), Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	for range 2 {
		resp := post(t, cl, context.Background(), nil)
		assert.Equal(t, "abcde", string(readAll(t, resp.Body)))
		require.NoError(t, resp.Body.Close())
		assert.Len(t, cl.idle, 1)
	}
}

func TestBodyCutMidChunk(t *testing.T) {
	srv := newRawServer(t, respondRaw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"))
	cl, err := New(srv.URL(), Options{})
	require.NoError(t, err)
	resp := post(t, cl, context.Background(), nil)
	b, err := io.ReadAll(resp.Body)
	assert.Equal(t, "abc", string(b))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.NoError(t, resp.Body.Close())

	// A Content-Length body cut short, and a clean end at the boundary.
	srv2 := newRawServer(t, respondRaw("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"))
	cl2, err := New(srv2.URL(), Options{})
	require.NoError(t, err)
	resp = post(t, cl2, context.Background(), nil)
	_, err = io.ReadAll(resp.Body)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.NoError(t, resp.Body.Close())
}

func TestServerReset(t *testing.T) {
	srv := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: a\n\n\r\n")
		time.Sleep(20 * time.Millisecond)
		_ = c.(*net.TCPConn).SetLinger(0) // close sends RST
	})
	for _, stamps := range []bool{false, true} {
		cl, err := New(srv.URL(), Options{KernelTimestamps: stamps})
		require.NoError(t, err)
		resp := post(t, cl, context.Background(), nil)
		_, err = io.ReadAll(resp.Body)
		require.ErrorIs(t, err, syscall.ECONNRESET)
		var op *net.OpError
		require.ErrorAs(t, err, &op)
		require.NoError(t, resp.Body.Close())
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cl, err := New("http://"+addr+"/", Options{})
	require.NoError(t, err)
	var dialErr error
	_, err = cl.Post(context.Background(), &Request{Trace: &Trace{ConnectDone: func(err error) { dialErr = err }}})
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "dial", op.Op)
	assert.Error(t, dialErr)
}

func TestCancelBlockedRead(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		select { // hold the response open
		case <-release:
		case <-time.After(10 * time.Second):
		}
	})
	for _, stamps := range []bool{false, true} {
		cl, err := New(srv.URL(), Options{KernelTimestamps: stamps})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		resp := post(t, cl, ctx, nil)
		time.AfterFunc(30*time.Millisecond, cancel)
		start := time.Now()
		var readErr error
		waitFor(t, 2*time.Second, func() { _, readErr = resp.Body.Read(make([]byte, 64)) })
		assert.Less(t, time.Since(start), time.Second)
		require.ErrorIs(t, readErr, context.Canceled)
		var op *net.OpError
		require.ErrorAs(t, readErr, &op, "the net error is kept")
		require.NoError(t, resp.Body.Close())
		assert.Empty(t, cl.idle, "a cancelled connection is not reused")

		// A deadline that passes during Post ends it too.
		dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		resp = post(t, cl, dctx, nil)
		_, err = resp.Body.Read(make([]byte, 64))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, resp.Body.Close())
		dcancel()
	}
}

func TestCancelledBeforePost(t *testing.T) {
	cl, err := New("http://127.0.0.1:1/", Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = cl.Post(ctx, &Request{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestMaxIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	cl, err := New(srv.URL, Options{MaxIdle: 1})
	require.NoError(t, err)
	defer cl.CloseIdle()
	a := post(t, cl, context.Background(), nil)
	b := post(t, cl, context.Background(), nil)
	readAll(t, a.Body)
	readAll(t, b.Body)
	require.NoError(t, a.Body.Close())
	require.NoError(t, b.Body.Close())
	assert.Len(t, cl.idle, 1)

	// An unread body closes its connection.
	c := post(t, cl, context.Background(), nil)
	require.NoError(t, c.Body.Close())
	assert.Empty(t, cl.idle)
	_, err = c.Body.Read(make([]byte, 1))
	require.ErrorIs(t, err, ErrBodyClosed)
}

func TestNew(t *testing.T) {
	_, err := New("https://api.example.com/v1/completions", Options{})
	contains(t, err, `unsupported URL scheme "https"`)
	_, err = New("http:///path", Options{})
	contains(t, err, "has no host")
	cl, err := New("http://example.com/v1", Options{})
	require.NoError(t, err)
	assert.Equal(t, "example.com:80", cl.addr)
	assert.Equal(t, "example.com", cl.host)
	assert.Equal(t, "/v1", cl.target)
	assert.Equal(t, defaultMaxIdle, cl.maxIdle)
}

var _ = errors.Is

// A connection held ahead is dialled by Hold and written on by Post, which
// then reports it; one not posted goes back to the idle stack; a held idle
// connection the server closed is retried on a new one, as an idle one is.
func TestHeldConnection(t *testing.T) {
	srv, cl := okServer(t)
	var events []string
	tr := &Trace{
		ConnectStart: func() { events = append(events, "connect") },
		GotConn:      func(r bool) { events = append(events, fmt.Sprint("got reused=", r)) },
		WroteRequest: func(time.Time) { events = append(events, "wrote") },
	}
	h, err := cl.Hold(context.Background(), tr)
	require.NoError(t, err)
	assert.Equal(t, []string{"connect"}, events, "the dial happens at Hold")
	resp, err := cl.Post(context.Background(), &Request{Body: []byte("{}"), Trace: tr, Held: h})
	require.NoError(t, err)
	assert.Equal(t, "ok", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, []string{"connect", "got reused=false", "wrote"}, events)
	require.Len(t, cl.idle, 1)

	h, err = cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, cl.idle, "the idle connection is held")
	cl.Unhold(h)
	assert.Len(t, cl.idle, 1, "and given back")

	h, err = cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	srv.CloseClientConnections() // the server drops the held connection
	time.Sleep(10 * time.Millisecond)
	events = nil
	resp, err = cl.Post(context.Background(), &Request{Body: []byte("{}"), Trace: tr, Held: h})
	require.NoError(t, err)
	assert.Equal(t, "ok", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
	// The write on the dropped connection may succeed or fail; either way
	// the request goes out again on a new one.
	events = slices.DeleteFunc(events, func(e string) bool { return e == "wrote" })
	assert.Equal(t, []string{"got reused=true", "connect", "got reused=false"}, events)

	h, err = cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = cl.Post(ctx, &Request{Held: h})
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, cl.idle, 1, "a held connection a refused Post did not use goes back")
}
