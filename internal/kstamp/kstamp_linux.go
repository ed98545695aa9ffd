//go:build linux

package kstamp

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
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

// Reader reads one TCP connection with recvmsg and reports the kernel's
// receive time of each read. It is not safe for concurrent reads, as a
// net.Conn's reads are not.
type Reader struct {
	tc *net.TCPConn
	rc syscall.RawConn
	// fn is the RawConn.Read callback, made once per connection rather
	// than once per read; dst and the results pass through the Reader.
	fn    func(fd uintptr) bool
	dst   []byte
	oob   []byte
	n     int
	oobn  int
	errno error
	msg   unix.Msghdr
	iov   unix.Iovec
}

// New turns SO_TIMESTAMPNS on for tc and returns its Reader; nil when the
// option cannot be set (tc is then read as usual, without kernel stamps).
func New(tc *net.TCPConn) *Reader {
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	enableStamping()
	r := &Reader{tc: tc, rc: rc, oob: make([]byte, oobSize)}
	r.fn = r.recvmsg
	return r
}

// recvmsg is the RawConn.Read callback: false asks the poller to wait for
// readability and call again. It calls recvmsg(2) directly with the
// Reader's msghdr: unix.Recvmsg would allocate its sockaddr buffer on
// every call.
func (r *Reader) recvmsg(fd uintptr) bool {
	r.iov.Base = &r.dst[0]
	r.iov.SetLen(len(r.dst))
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	for {
		n, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
		switch errno {
		case 0:
			r.n, r.oobn, r.errno = int(n), int(r.msg.Controllen), nil
		case unix.EINTR:
			continue
		default:
			r.n, r.oobn, r.errno = 0, 0, errno
		}
		r.iov.Base = nil // do not keep the caller's buffer alive
		return r.errno != unix.EAGAIN
	}
}

// Read reads into p (len(p) > 0) and returns the kernel's receive time of
// the last segment it copied, zero when the kernel gave none. Errors are
// those of a net.Conn's Read: io.EOF at the end of the stream, a
// *net.OpError otherwise (a deadline, a closed connection, a reset).
func (r *Reader) Read(p []byte) (int, time.Time, error) {
	if len(p) == 0 {
		return 0, time.Time{}, nil
	}
	r.dst = p
	err := r.rc.Read(r.fn)
	r.dst = nil
	if err != nil {
		return 0, time.Time{}, err // a *net.OpError: deadline (cancellation) or closed
	}
	if r.errno != nil {
		return 0, time.Time{}, &net.OpError{Op: "read", Net: "tcp", Source: r.tc.LocalAddr(), Addr: r.tc.RemoteAddr(),
			Err: os.NewSyscallError("recvmsg", r.errno)}
	}
	if r.n == 0 {
		return 0, time.Time{}, io.EOF
	}
	return r.n, stamp(r.oob[:r.oobn]), nil
}

// stamp finds the SCM_TIMESTAMPNS message in oob; zero if none.
func stamp(oob []byte) time.Time {
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

// Enable switches the kernel's receive stamping on now and keeps it on for
// the life of the process. New does it too; a client that will open its
// connections later calls it ahead, so that the first segments of those
// connections are stamped.
func Enable() { enableStamping() }
