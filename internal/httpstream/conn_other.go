//go:build !linux

package httpstream

import (
	"errors"
	"net"
)

// initKernelStamps does nothing: kernel receive timestamps are read on
// Linux only.
func (c *conn) initKernelStamps(*net.TCPConn) {}

func (c *conn) recvmsg([]byte) (int, error) {
	return 0, errors.New("httpstream: recvmsg is not used on this platform")
}

type sysMsg struct{}

func enableStamping() {}

// writeNow is not available here: SendStaged reports false and the Post
// writes the byte.
func writeNow(uintptr, []byte) bool { return false }
