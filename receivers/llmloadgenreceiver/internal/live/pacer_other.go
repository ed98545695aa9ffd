//go:build !linux

package live

import (
	"errors"
	"time"
)

type timerfd struct{}

func newTimerfd() (*timerfd, error) { return nil, errors.New("timerfd: Linux only") }

func (t *timerfd) sleep(time.Duration) error { return errors.New("timerfd: Linux only") }

func (t *timerfd) close() {}
