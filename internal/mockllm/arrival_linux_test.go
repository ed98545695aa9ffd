//go:build linux

package mockllm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server's connections keep the kernel's receive time of their latest
// read: bytes read late carry the time they came.
func TestStampConnKeepsArrival(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sl := stampListener{ln}
	defer sl.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := sl.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	sc, ok := (<-accepted).(*stampConn)
	require.True(t, ok, "a TCP connection is stamped")
	defer sc.Close()

	wrote := time.Now()
	_, err = io.WriteString(c, "x")
	require.NoError(t, err)
	time.Sleep(60 * time.Millisecond)
	buf := make([]byte, 8)
	n, err := sc.Read(buf)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	at := time.Unix(0, sc.last.Load())
	assert.GreaterOrEqual(t, time.Since(at), 50*time.Millisecond, "the stamp is the arrival, not the read")
	assert.Less(t, at.Sub(wrote).Abs(), 20*time.Millisecond)
}

// A request's Arrived is when its last byte came, sent 100 ms after the
// rest; the wire TTFT counts from it, and the record's JSON carries it.
func TestArrivedIsTheLastByte(t *testing.T) {
	s := startServer(t, nil)
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	require.NoError(t, err)
	defer c.Close()
	body := `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		len(body), body[:len(body)-1])
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	last := time.Now()
	_, err = io.WriteString(c, body[len(body)-1:])
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.True(t, readStream(resp.Body).done)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, ok := s.Record(ctx, resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	require.False(t, rec.Arrived.IsZero(), "HTTP/1.1 on Linux: the kernel stamps the request")
	assert.Less(t, rec.Arrived.Sub(last).Abs(), 20*time.Millisecond, "arrived with its last byte")
	assert.False(t, rec.Arrived.After(rec.Received), "arrived %v, read %v", rec.Arrived, rec.Received)
	assert.Equal(t, rec.FirstContentAt.Sub(rec.Arrived), rec.WireTTFT())
	assert.GreaterOrEqual(t, rec.WireTTFT(), rec.TTFT())

	got, err := http.Get(s.URL() + "/mock/requests/" + rec.ID)
	require.NoError(t, err)
	defer got.Body.Close()
	var out struct {
		WireTTFT float64 `json:"wire_ttft_s"`
	}
	require.NoError(t, json.NewDecoder(got.Body).Decode(&out))
	assert.InDelta(t, rec.WireTTFT().Seconds(), out.WireTTFT, 1e-9)
}

// Over cleartext HTTP/2 a connection's reads carry every stream's frames,
// so no request gets an arrival; the wire TTFT is then the server's TTFT.
func TestArrivedUnknownOverHTTP2(t *testing.T) {
	s := startServer(t, nil)
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	cl := &http.Client{Transport: &http.Transport{Protocols: &protos}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Post(s.URL()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor)
	require.True(t, readStream(resp.Body).done)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, ok := s.Record(ctx, resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	assert.True(t, rec.Arrived.IsZero())
	assert.Equal(t, rec.TTFT(), rec.WireTTFT())
}
