package httpstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(benchServerEnv); mode != "" {
		runBenchServer(mode) // the benchmarks' server process
		return
	}
	goleak.VerifyTestMain(m)
}

// rawServer accepts connections on 127.0.0.1 and runs handle for each on
// its own goroutine; Close waits for them.
type rawServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
	handle func(c net.Conn, br *bufio.Reader)
}

func newRawServer(t *testing.T, handle func(c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{ln: ln, handle: handle}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.handle(c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(s.Close)
	return s
}

func (s *rawServer) URL() string { return "http://" + s.ln.Addr().String() + "/v1/completions" }

func (s *rawServer) Close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// readRequest reads one request head and body from br.
func readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	return req, body, err
}

// respondRaw answers every request on a connection with the bytes resp and
// then closes the connection.
func respondRaw(resp string) func(net.Conn, *bufio.Reader) {
	return func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, resp)
	}
}

func post(t *testing.T, cl *Client, ctx context.Context, tr *Trace) *Response {
	t.Helper()
	resp, err := cl.Post(ctx, &Request{Body: []byte(`{"stream":true}`), Trace: tr,
		Header: []Header{{"Content-Type", "application/json"}}})
	require.NoError(t, err)
	return resp
}

func readAll(t *testing.T, b *Body) []byte {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for range 1 << 20 {
		n, err := b.Read(buf)
		out.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return out.Bytes()
		}
		require.NoError(t, err)
	}
	t.Fatal("body did not end")
	return nil
}

func contains(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), want), "error %q does not contain %q", err, want)
}

// waitFor bounds a blocking call in tests.
func waitFor(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("call did not return within %v", d)
	}
}
