//go:build linux

package kstamp

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pair returns both ends of a loopback TCP connection.
func pair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s := <-accepted
	require.NotNil(t, s)
	t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// A read stamps the bytes with their arrival: just before the read's return
// when the reader waits for them, and when they came when the reader is
// late, however late.
func TestReadStampsArrival(t *testing.T) {
	Enable()
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r, "SO_TIMESTAMPNS can be set on a TCP socket")
	buf := make([]byte, 16)

	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = s.Write([]byte("a"))
	}()
	n, at, err := r.Read(buf)
	user := time.Now()
	require.NoError(t, err)
	assert.Equal(t, "a", string(buf[:n]))
	require.False(t, at.IsZero())
	assert.False(t, at.After(user), "stamp %v after the read returned %v", at, user)
	assert.Less(t, user.Sub(at), 100*time.Millisecond)

	wrote := time.Now()
	_, err = s.Write([]byte("bc"))
	require.NoError(t, err)
	time.Sleep(60 * time.Millisecond)
	n, at, err = r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "bc", string(buf[:n]))
	assert.GreaterOrEqual(t, time.Since(at), 50*time.Millisecond, "the stamp is the arrival, not the read")
	assert.Less(t, at.Sub(wrote).Abs(), 20*time.Millisecond)

	n, at, err = r.Read(nil)
	assert.Zero(t, n)
	assert.True(t, at.IsZero())
	assert.NoError(t, err)
}

// The end of the stream is io.EOF; a deadline and a closed connection give
// a net.Conn's errors.
func TestReadErrors(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r)
	buf := make([]byte, 8)

	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, _, err := r.Read(buf)
	assert.True(t, errors.Is(err, os.ErrDeadlineExceeded), "%v", err)
	require.NoError(t, c.SetReadDeadline(time.Time{}))

	require.NoError(t, s.Close())
	_, _, err = r.Read(buf)
	assert.ErrorIs(t, err, io.EOF)

	require.NoError(t, c.Close())
	_, _, err = r.Read(buf)
	assert.ErrorIs(t, err, net.ErrClosed)
}

// A reset connection gives recvmsg's error as a *net.OpError naming the
// read.
func TestReadReset(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r)
	require.NoError(t, s.SetLinger(0))
	require.NoError(t, s.Close())
	_, _, err := r.Read(make([]byte, 8))
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "read", op.Op)
}

// Bytes that wait in the socket for a later segment are read with that
// segment's time: the kernel keeps the latest time of what one read
// returns, so an early event read late is stamped with the later arrival.
func TestLateReadKeepsTheLatestTime(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r)
	_, err := s.Write([]byte("a"))
	require.NoError(t, err)
	time.Sleep(40 * time.Millisecond)
	second := time.Now()
	_, err = s.Write([]byte("b"))
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	buf := make([]byte, 8)
	n, at, err := r.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "ab", string(buf[:n]), "one read returns both segments")
	assert.Less(t, at.Sub(second).Abs(), 5*time.Millisecond, "the stamp is the second segment's")
}
