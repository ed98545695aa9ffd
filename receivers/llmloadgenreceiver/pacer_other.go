//go:build !linux

package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"errors"
	"time"
)

type timerfd struct{}

func newTimerfd() (*timerfd, error) { return nil, errors.New("timerfd: Linux only") }

func (t *timerfd) sleep(time.Duration) error { return errors.New("timerfd: Linux only") }

func (t *timerfd) close() {}
