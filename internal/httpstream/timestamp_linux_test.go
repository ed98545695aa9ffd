//go:build linux

package httpstream

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldStream answers with a chunked header, then writes one SSE event per
// value sent on send and reports on sent after each write.
func heldStream(t *testing.T) (url string, send chan struct{}, sent chan struct{}) {
	send, sent = make(chan struct{}), make(chan struct{})
	srv := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		for {
			select {
			case _, ok := <-send:
				if !ok {
					_, _ = io.WriteString(c, "0\r\n\r\n")
					return
				}
				_, _ = io.WriteString(c, "9\r\ndata: a\n\n\r\n")
				sent <- struct{}{}
			case <-time.After(5 * time.Second):
				return
			}
		}
	})
	return srv.URL(), send, sent
}

func TestKernelTimestamps(t *testing.T) {
	url, send, sent := heldStream(t)
	cl, err := New(url, Options{KernelTimestamps: true})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp := post(t, cl, context.Background(), nil)
	require.NotNil(t, resp.Body.c.ks, "SO_TIMESTAMPNS is on")
	buf := make([]byte, 64)

	// Idle reader: the kernel stamp is just before the user stamp.
	send <- struct{}{}
	<-sent
	n, err := resp.Body.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "data: a\n\n", string(buf[:n]))
	kern, user := resp.Body.ReadTime()
	require.False(t, kern.IsZero())
	assert.False(t, kern.After(user), "kernel %v after user %v", kern, user)
	assert.Less(t, user.Sub(kern), 100*time.Millisecond)

	// Descheduled reader: the event arrives, the reader sleeps 50 ms before
	// reading. The kernel stamp stays at the arrival, the user stamp moves.
	send <- struct{}{}
	<-sent
	time.Sleep(50 * time.Millisecond)
	woke := time.Now()
	n, err = resp.Body.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "data: a\n\n", string(buf[:n]))
	kern, user = resp.Body.ReadTime()
	assert.False(t, user.Before(woke), "user stamp is after the sleep")
	assert.GreaterOrEqual(t, user.Sub(kern), 40*time.Millisecond, "kernel stamp is the arrival")

	close(send)
	for {
		_, err := resp.Body.Read(buf)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.NoError(t, resp.Body.Close())
}

func TestReadTimeOfBufferedBytes(t *testing.T) {
	srv := newRawServer(t, respondRaw("HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\ndata: a\n\ndata: b\n\n"))
	cl, err := New(srv.URL(), Options{KernelTimestamps: true})
	require.NoError(t, err)
	resp := post(t, cl, context.Background(), nil)
	buf := make([]byte, 9)
	_, err = resp.Body.Read(buf)
	require.NoError(t, err)
	k1, u1 := resp.Body.ReadTime()
	time.Sleep(5 * time.Millisecond)
	n, err := resp.Body.Read(buf) // served from the buffer
	require.NoError(t, err)
	require.Equal(t, "data: b\n\n", string(buf[:n]))
	k2, u2 := resp.Body.ReadTime()
	assert.Equal(t, k1, k2, "stamps of the read that buffered the bytes")
	assert.Equal(t, u1, u2)
	require.NoError(t, resp.Body.Close())
}

func TestNoKernelTimestamps(t *testing.T) {
	url, send, sent := heldStream(t)
	cl, err := New(url, Options{})
	require.NoError(t, err)
	defer cl.CloseIdle()
	resp := post(t, cl, context.Background(), nil)
	send <- struct{}{}
	<-sent
	_, err = resp.Body.Read(make([]byte, 64))
	require.NoError(t, err)
	kern, user := resp.Body.ReadTime()
	assert.True(t, kern.IsZero())
	assert.False(t, user.IsZero())
	close(send)
	require.NoError(t, resp.Body.Close())
}
