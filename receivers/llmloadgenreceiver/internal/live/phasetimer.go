package live

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// phaseTimer turns the phase timeouts and the request's total deadline into
// one context cancellation with a cause naming what expired. One timer
// serves every phase of a request: arming it again moves its deadline,
// never past the total one. In the idle phase an event only records its
// time (touch, one atomic store); when the timer fires it checks the time of
// the last event and, if the stream was not silent for the whole idle
// timeout, re-arms itself for the rest instead of cancelling.
type phaseTimer struct {
	cancel   context.CancelCauseFunc
	idle     time.Duration // the idle timeout
	base     time.Time     // origin of due, deadline and last
	deadline time.Duration // the request's total deadline, since base
	last     atomic.Int64  // time of the last event, since base

	mu      sync.Mutex
	timer   *time.Timer
	phase   int
	due     time.Duration // deadline of the phase, since base
	stopped bool
}

// Phases of a request, each with its own timeout.
const (
	phaseConnect = iota
	phaseTTFT
	phaseIdle  // between events; touch extends it
	phaseDrain // reading the body's end after [DONE]
	phaseBody  // a non-streaming body: only the total deadline
)

// never is a phase timeout that only the total deadline cuts short.
const never = time.Duration(math.MaxInt64)

var (
	errConnectTimeout = errors.New(errTypeConnectTimeout)
	errTTFTTimeout    = errors.New(errTypeTTFTTimeout)
	errIdleTimeout    = errors.New(errTypeIdleTimeout)
	errDeadline       = errors.New(errTypeDeadline)
	phaseErrs         = [...]error{phaseConnect: errConnectTimeout, phaseTTFT: errTTFTTimeout, phaseIdle: errIdleTimeout, phaseDrain: errIdleTimeout, phaseBody: errDeadline}
)

// newPhaseTimer returns a timer that cancels with a phase's cause when the
// phase's timeout expires, and with errDeadline at deadline.
func newPhaseTimer(cancel context.CancelCauseFunc, idle time.Duration, deadline time.Time) *phaseTimer {
	now := time.Now()
	return &phaseTimer{cancel: cancel, idle: idle, base: now, deadline: deadline.Sub(now)}
}

// arm starts phase with timeout d from now.
func (p *phaseTimer) arm(d time.Duration, phase int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Since(p.base)
	p.phase, p.stopped = phase, false
	p.due = now + min(d, p.deadline-now)
	wait := p.due - now
	if p.timer == nil {
		p.timer = time.AfterFunc(wait, p.fire)
		return
	}
	p.timer.Reset(wait)
}

// touch records an event at t; in the idle phase it extends the deadline to
// t + the idle timeout.
func (p *phaseTimer) touch(t time.Time) { p.last.Store(int64(t.Sub(p.base))) }

func (p *phaseTimer) fire() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	due := p.due
	if p.phase == phaseIdle {
		due = max(due, time.Duration(p.last.Load())+p.idle)
	}
	cause := phaseErrs[p.phase]
	if due >= p.deadline {
		due, cause = p.deadline, errDeadline
	}
	if now := time.Since(p.base); now < due {
		// Re-armed since this firing was scheduled, or events came.
		p.timer.Reset(due - now)
		p.mu.Unlock()
		return
	}
	p.stopped = true
	p.mu.Unlock()
	p.cancel(cause)
}

func (p *phaseTimer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}
