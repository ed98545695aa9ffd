//go:build linux

package httpstream

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// oobSize holds one SCM_TIMESTAMPNS message with room to spare.
const oobSize = 64

// enableStamping holds one socket with SO_TIMESTAMPNS open for the life of
// the process. The kernel stamps received packets only while some socket
// asks for it, and it switches stamping on asynchronously when the first
// one does: without this socket, the first segments of a connection opened
// after all others closed can arrive unstamped.
var enableStamping = sync.OnceFunc(func() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) != nil {
		_ = unix.Close(fd)
	}
})

// initKernelStamps turns SO_TIMESTAMPNS on and routes reads through
// recvmsg. On failure the connection keeps reading through net.Conn.Read
// without kernel stamps.
func (c *conn) initKernelStamps(tc *net.TCPConn) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return
	}
	enableStamping()
	c.rc = rc
	c.oob = make([]byte, oobSize)
	c.recvFn = c.recvmsgFD
}

// recvmsgFD is the RawConn.Read callback: false asks the poller to wait
// for readability and call again. It calls recvmsg(2) directly with the
// connection's msghdr: unix.Recvmsg would allocate its sockaddr buffer on
// every call.
func (c *conn) recvmsgFD(fd uintptr) bool {
	c.iov.Base = &c.dst[0]
	c.iov.SetLen(len(c.dst))
	c.msg.Iov = &c.iov
	c.msg.SetIovlen(1)
	c.msg.Control = &c.oob[0]
	c.msg.SetControllen(len(c.oob))
	for {
		n, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		switch errno {
		case 0:
			c.rn, c.roobn, c.rerr = int(n), int(c.msg.Controllen), nil
		case unix.EINTR:
			continue
		default:
			c.rn, c.roobn, c.rerr = 0, 0, errno
		}
		c.iov.Base = nil // do not keep the caller's buffer alive
		return c.rerr != unix.EAGAIN
	}
}

// recvmsg reads into p (len(p) > 0) and records the kernel receive time of
// the last segment copied.
func (c *conn) recvmsg(p []byte) (int, error) {
	c.dst = p
	err := c.rc.Read(c.recvFn)
	c.dst = nil
	if err != nil {
		return 0, err // a *net.OpError: deadline (cancellation) or closed
	}
	if c.rerr != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(),
			Err: os.NewSyscallError("recvmsg", c.rerr)}
	}
	if c.rn == 0 {
		return 0, io.EOF
	}
	c.kern = kernelStamp(c.oob[:c.roobn])
	return c.rn, nil
}

// kernelStamp finds the SCM_TIMESTAMPNS message in oob; zero if none.
func kernelStamp(oob []byte) time.Time {
	for len(oob) >= unix.SizeofCmsghdr {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			break
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(data[8:16]))
			if sec == 0 && nsec == 0 {
				return time.Time{}
			}
			return time.Unix(sec, nsec)
		}
		oob = rest
	}
	return time.Time{}
}

// sysMsg is the msghdr and iovec of a connection's recvmsg calls.
type sysMsg struct {
	msg unix.Msghdr
	iov unix.Iovec
}

// writeNow writes b on the non-blocking socket fd in one raw system call
// and reports whether all of it went. The call does not give up the
// goroutine's P as a blocking one would: a write of a few bytes to a
// non-blocking socket returns at once, and a caller that sends many of
// them in a row (a trace gate's staged requests) does not wait for a P
// after each.
func writeNow(fd uintptr, b []byte) bool {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return errno == 0 && int(n) == len(b)
}
