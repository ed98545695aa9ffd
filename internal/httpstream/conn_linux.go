//go:build linux

package httpstream

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

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
