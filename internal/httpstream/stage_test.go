package httpstream

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byteTap is a server that copies every byte it receives on its one
// connection to got, in the order received, and answers the request once
// it is complete.
type byteTap struct {
	got chan []byte
	req chan []byte // the complete request's bytes
}

func newByteTap(t *testing.T) (*rawServer, *byteTap) {
	tap := &byteTap{got: make(chan []byte, 1024), req: make(chan []byte, 4)}
	srv := newRawServer(t, func(c net.Conn, _ *bufio.Reader) {
		var all bytes.Buffer
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				tap.got <- bytes.Clone(buf[:n])
				all.Write(buf[:n])
				if req, body, rerr := readRequest(bufio.NewReader(bytes.NewReader(all.Bytes()))); rerr == nil && int64(len(body)) == req.ContentLength {
					tap.req <- bytes.Clone(all.Bytes())
					all.Reset()
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}
			if err != nil {
				return
			}
		}
	})
	return srv, tap
}

// received drains what the tap has received so far, waiting up to d for
// the count of bytes to reach want.
func (tap *byteTap) received(want int, d time.Duration) int {
	n := 0
	deadline := time.After(d)
	for n < want {
		select {
		case b := <-tap.got:
			n += len(b)
		case <-deadline:
			return n
		}
	}
	return n
}

// A staged request is on the wire but for its last byte until its Post,
// which writes that byte only; what the server receives is byte for byte
// the request an unstaged Post writes.
func TestStageWritesAllButTheLastByte(t *testing.T) {
	for _, size := range []int{0, 1, 100, smallBody + 1, 300 << 10} {
		srv, tap := newByteTap(t)
		cl, err := New(srv.URL(), Options{})
		require.NoError(t, err)
		body := []byte(strings.Repeat("x", size))
		hdr := []Header{{"Content-Type", "application/json"}, {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}

		// The reference: the same request, not staged.
		resp, err := cl.Post(context.Background(), &Request{Header: hdr, Body: body})
		require.NoError(t, err)
		assert.Equal(t, "ok", string(readAll(t, resp.Body)))
		require.NoError(t, resp.Body.Close())
		want := <-tap.req
		tap.received(len(want), 5*time.Second)

		h, err := cl.Hold(context.Background(), nil)
		require.NoError(t, err)
		r := &Request{Header: hdr, Body: body}
		require.NoError(t, cl.Stage(context.Background(), h, r))
		assert.Equal(t, len(want)-1, tap.received(len(want)-1, 5*time.Second), "size %d: all but the last byte staged", size)
		assert.Equal(t, 0, tap.received(1, 20*time.Millisecond), "size %d: nothing more before the Post", size)
		select {
		case <-tap.req:
			t.Fatalf("size %d: the server had the whole request before the Post", size)
		default:
		}

		var wrote bool
		resp, err = cl.Post(context.Background(), &Request{Header: r.Header, Body: r.Body, Held: h,
			Trace: &Trace{WroteRequest: func(time.Time) { wrote = true }}})
		require.NoError(t, err)
		assert.True(t, wrote)
		assert.Equal(t, "ok", string(readAll(t, resp.Body)))
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, want, <-tap.req, "size %d: the staged request is the same bytes", size)
		cl.CloseIdle()
	}
}

// A Post of another request on a staged connection is refused, and the
// connection, which holds part of a request, is closed, not kept idle; so
// is a staged connection given back unposted.
func TestStageMismatchAndUnhold(t *testing.T) {
	_, cl := okServer(t)
	h, err := cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	body := []byte(`{"a":1}`)
	require.NoError(t, cl.Stage(context.Background(), h, &Request{Body: body}))
	require.Error(t, cl.Stage(context.Background(), h, &Request{Body: body}), "one request per held connection")
	_, err = cl.Post(context.Background(), &Request{Body: []byte(`{"a":1}`), Held: h})
	require.ErrorIs(t, err, errStagedMismatch)
	assert.Empty(t, cl.idle, "the staged connection is closed")

	h, err = cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	require.NoError(t, cl.Stage(context.Background(), h, &Request{Body: body}))
	cl.Unhold(h)
	assert.Empty(t, cl.idle, "an unposted staged connection is closed")

	require.Error(t, cl.Stage(context.Background(), &Held{}, &Request{Body: body}), "no connection held")
	h, err = cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	require.Error(t, cl.Stage(context.Background(), h, &Request{Header: []Header{{"bad key", "v"}}, Body: body}))
	cl.Unhold(h)
}

// A staged connection the server closes before the Post is retried as an
// idle one is: the Post writes the whole request again on a new
// connection. A staging write that cannot finish (the server reads
// nothing) ends with its context and the Post dials anew.
func TestStageFailures(t *testing.T) {
	srv, cl := okServer(t)
	resp := post(t, cl, context.Background(), nil)
	readAll(t, resp.Body)
	require.NoError(t, resp.Body.Close())
	h, err := cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	require.True(t, h.reused)
	body := []byte(`{"stream":true}`)
	require.NoError(t, cl.Stage(context.Background(), h, &Request{Body: body}))
	srv.CloseClientConnections()
	time.Sleep(10 * time.Millisecond)
	var reused []bool
	resp, err = cl.Post(context.Background(), &Request{Body: body, Held: h, Trace: &Trace{GotConn: func(r bool) { reused = append(reused, r) }}})
	require.NoError(t, err)
	assert.Equal(t, "ok", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, []bool{true, false}, reused, "the staged connection, then the whole request on a new one")

	// A server that never reads: the staging write fills the socket
	// buffers and blocks until its context ends.
	release := make(chan struct{})
	stuck := newRawServer(t, func(c net.Conn, _ *bufio.Reader) { <-release })
	cl2, err := New(stuck.URL(), Options{})
	require.NoError(t, err)
	h, err = cl2.Hold(context.Background(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	big := bytes.Repeat([]byte("y"), 64<<20)
	waitFor(t, 10*time.Second, func() {
		err = cl2.Stage(ctx, h, &Request{Body: big})
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, h.cn, "the connection is closed")
	cl2.Unhold(h)
	close(release)
	stuck.Close()
}

// The same request staged and not staged reaches net/http's server with
// the same method, header and body.
func TestStageAgainstNetHTTP(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("X-Run") + " " + string(b)
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	cl, err := New(srv.URL+"/v1/chat/completions", Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	r := &Request{Header: []Header{{"X-Run", "7"}}, Body: []byte(`{"model":"m"}`)}
	h, err := cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	require.NoError(t, cl.Stage(context.Background(), h, r))
	resp, err := cl.Post(context.Background(), &Request{Header: r.Header, Body: r.Body, Held: h})
	require.NoError(t, err)
	readAll(t, resp.Body)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, `POST /v1/chat/completions 7 {"model":"m"}`, <-got)
}

// SendStaged sends a staged request's last byte at once, from the caller's
// goroutine: the server has the whole request before its Post, which then
// writes nothing more and reads the response. A Held with nothing staged,
// or already sent, is refused.
func TestSendStaged(t *testing.T) {
	srv, tap := newByteTap(t)
	cl, err := New(srv.URL(), Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	h, err := cl.Hold(context.Background(), nil)
	require.NoError(t, err)
	_, ok := cl.SendStaged(h)
	assert.False(t, ok, "nothing staged")
	r := &Request{Header: []Header{{"X-Run", "1"}}, Body: []byte(`{"model":"m","stream":true}`)}
	require.NoError(t, cl.Stage(context.Background(), h, r))
	before := time.Now()
	at, ok := cl.SendStaged(h)
	require.True(t, ok)
	assert.False(t, at.Before(before))
	whole := <-tap.req // complete before any Post
	_, ok = cl.SendStaged(h)
	assert.False(t, ok, "sent once")
	var wrote int
	resp, err := cl.Post(context.Background(), &Request{Header: r.Header, Body: r.Body, Held: h, Trace: &Trace{WroteRequest: func(time.Time) { wrote++ }}})
	require.NoError(t, err)
	assert.Equal(t, "ok", string(readAll(t, resp.Body)))
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 1, wrote)
	assert.True(t, bytes.HasSuffix(whole, r.Body))
	select {
	case extra := <-tap.req:
		t.Fatalf("a second request reached the server: %q", extra)
	case <-time.After(20 * time.Millisecond):
	}
}

// SendStaged and the Posts of the same requests, racing: each request
// reaches the server once and whole, each Post reads its own response, and
// every send is stamped.
func TestSendStagedRacesPost(t *testing.T) {
	var got sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if _, dup := got.LoadOrStore(string(b), true); dup {
			t.Errorf("request %s reached the server twice", b)
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	cl, err := New(srv.URL, Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	const n = 32
	held := make([]*Held, n)
	reqs := make([]*Request, n)
	for i := range n {
		held[i], err = cl.Hold(context.Background(), nil)
		require.NoError(t, err)
		reqs[i] = &Request{Body: []byte(fmt.Sprintf(`{"row":%d}`, i))}
		require.NoError(t, cl.Stage(context.Background(), held[i], reqs[i]))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var at time.Time
			resp, err := cl.Post(context.Background(), &Request{Body: reqs[i].Body, Held: held[i], Trace: &Trace{WroteRequest: func(t time.Time) { at = t }}})
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			assert.NoError(t, err)
			assert.Equal(t, string(reqs[i].Body), string(b))
			assert.False(t, at.IsZero())
		}()
	}
	for _, h := range held {
		cl.SendStaged(h)
	}
	wg.Wait()
	count := 0
	got.Range(func(any, any) bool { count++; return true })
	assert.Equal(t, n, count)
}
