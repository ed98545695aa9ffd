//go:build !linux

package kstamp

import (
	"net"
	"time"
)

// Reader is not available on this platform: New returns nil.
type Reader struct{}

// New returns nil: kernel receive timestamps are read on Linux only.
func New(*net.TCPConn) *Reader { return nil }

// Read is never called: New returns no Reader here.
func (r *Reader) Read([]byte) (int, time.Time, error) {
	panic("kstamp: no kernel receive timestamps on this platform")
}

// Enable does nothing here.
func Enable() {}
