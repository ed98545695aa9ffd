// Package kstamp reads a TCP connection together with the time the kernel
// received the bytes each read returns (SO_TIMESTAMPNS, read with recvmsg
// through the connection's raw descriptor inside the runtime's poller).
//
// A time taken in user space after a read carries every delay between the
// bytes' arrival and the goroutine running: a busy core, the scheduler, a
// garbage collection. The kernel's stamp is taken as the segment arrives,
// so a process that falls behind still learns when its bytes came.
//
// Kernel stamps exist on Linux only; elsewhere New returns nil and callers
// read the connection as usual.
package kstamp
