package live

import (
	"bytes"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() { floorClient = runFloorClient }

// floorRequest is a streaming chat request of about the size llm_loadgen
// sends against the mock.
const floorRequest = `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"the model streams tokens over server-sent events while the client measures each gap and reports latency then the model streams"}]}`

// floorConn is one connection of the floor client.
type floorConn struct {
	fd     int
	carry  []byte // the last bytes of the previous read: an end marker may straddle two reads
	events int
	stamp  int64 // kernel receive time of the latest read
}

// responseEnd is the last chunk of a chunked body after the final event.
var responseEnd = []byte("\r\n0\r\n\r\n")

// runFloorClient is the least a client can do and still time every event
// of users closed-loop streams as it arrives: one locked thread, level-
// triggered epoll over all connections, one recvmsg with SO_TIMESTAMPNS per
// readiness, a clock read and a count of event ends per read, the next
// request written when a response's last chunk is in. No HTTP parsing
// beyond that, no JSON, no spans, no metrics. It runs for d and returns
// once every stream it started has ended.
func runFloorClient(b *testing.B, base string, users int, d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	req := []byte(fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(floorRequest), floorRequest))
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(ep)
	conns := map[int]*floorConn{}
	for range users {
		fd := floorDial(b, port)
		conns[fd] = &floorConn{fd: fd}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			b.Fatal(err)
		}
		if _, err := unix.Write(fd, req); err != nil {
			b.Fatal(err)
		}
	}
	end := time.Now().Add(d)
	buf := make([]byte, 16<<10)
	oob := make([]byte, 64)
	events := make([]unix.EpollEvent, 256)
	for len(conns) > 0 && time.Since(end) < 30*time.Second {
		n, err := unix.EpollWait(ep, events, 1000)
		if err != nil && err != unix.EINTR {
			b.Fatal(err)
		}
		for _, ev := range events[:max(n, 0)] {
			c := conns[int(ev.Fd)]
			m, oobn := floorRecv(c.fd, buf, oob)
			if m <= 0 {
				b.Fatalf("connection closed by the mock (%d)", m)
			}
			_ = time.Now() // the user-space time of the read, as a client takes it
			if oobn >= 32 {
				c.stamp = *(*int64)(unsafe.Pointer(&oob[16])) // SCM_TIMESTAMPNS seconds: enough to touch it
			}
			data := buf[:m]
			c.events += bytes.Count(data, []byte("\n\n"))
			joined := append(c.carry, data...)
			if !bytes.Contains(joined, responseEnd) {
				c.carry = append(c.carry[:0], joined[max(0, len(joined)-len(responseEnd)+1):]...)
				continue
			}
			c.carry = c.carry[:0]
			if time.Now().Before(end) {
				if _, err := unix.Write(c.fd, req); err != nil {
					b.Fatal(err)
				}
				continue
			}
			_ = unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, c.fd, nil)
			_ = unix.Close(c.fd)
			delete(conns, c.fd)
		}
	}
	if len(conns) > 0 {
		b.Fatalf("%d streams did not end", len(conns))
	}
}

// floorDial opens a blocking connect to 127.0.0.1:port, then makes the
// socket non-blocking with SO_TIMESTAMPNS and TCP_NODELAY on.
func floorDial(b *testing.B, port int) int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		b.Fatal(err)
	}
	for _, o := range [][2]int{{unix.IPPROTO_TCP, unix.TCP_NODELAY}, {unix.SOL_SOCKET, unix.SO_TIMESTAMPNS}} {
		if err := unix.SetsockoptInt(fd, o[0], o[1], 1); err != nil {
			b.Fatal(err)
		}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		b.Fatal(err)
	}
	return fd
}

// floorRecv is one recvmsg(2) into buf with room for a timestamp in oob.
func floorRecv(fd int, buf, oob []byte) (n, oobn int) {
	var iov unix.Iovec
	iov.Base = &buf[0]
	iov.SetLen(len(buf))
	var msg unix.Msghdr
	msg.Iov = &iov
	msg.SetIovlen(1)
	msg.Control = &oob[0]
	msg.SetControllen(len(oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), 0)
	if errno != 0 {
		return -int(errno), 0
	}
	return int(r), int(msg.Controllen)
}
