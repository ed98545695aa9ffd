//go:build linux

package live

import (
	"time"

	"golang.org/x/sys/unix"
)

// timerfd sleeps on a Linux timerfd: the kernel's high-resolution timer,
// woken within microseconds, where the Go runtime's timers wake within
// about a millisecond (its poller waits in whole milliseconds). The read
// blocks its OS thread, so one scheduler goroutine uses one.
type timerfd struct{ fd int }

func newTimerfd() (*timerfd, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &timerfd{fd: fd}, nil
}

// sleep waits d (at least a microsecond).
func (t *timerfd) sleep(d time.Duration) error {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(max(d.Nanoseconds(), 1000))}
	if err := unix.TimerfdSettime(t.fd, 0, &its, nil); err != nil {
		return err
	}
	var buf [8]byte
	for {
		_, err := unix.Read(t.fd, buf[:])
		if err != unix.EINTR {
			return err
		}
	}
}

func (t *timerfd) close() { _ = unix.Close(t.fd) }
