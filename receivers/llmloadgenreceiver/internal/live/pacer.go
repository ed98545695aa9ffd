package live

import (
	"context"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"go.uber.org/zap"
)

// pacer waits for each arrival's time: asleep until Spin before it, on a
// timerfd (Linux; the kernel's timer, woken within microseconds) or the Go
// runtime's timer (woken within about a millisecond: its poller waits in
// whole milliseconds), then on the clock. BenchmarkPacer measures both.
type pacer struct {
	timer *time.Timer
	tf    *timerfd // nil: the runtime's timer
	spin  time.Duration
}

func (r *Runner) newPacer() *pacer {
	p := &pacer{timer: time.NewTimer(time.Hour), spin: r.lc.Pacer.Spin}
	if r.lc.Pacer.Clock == config.PacerTimerfd {
		tf, err := newTimerfd()
		if err != nil {
			r.logger.Warn("llm_loadgen: no timerfd; the open-loop schedule waits on the runtime's timer (about a millisecond late)", zap.Error(err))
		}
		p.tf = tf
	}
	return p
}

func (p *pacer) close() {
	p.timer.Stop()
	if p.tf != nil {
		p.tf.close()
	}
}

// wait returns at sched; false when ctx ended first.
func (p *pacer) wait(ctx context.Context, sched time.Time) bool {
	return p.waitSpin(ctx, sched, p.spin)
}

// waitSpin is wait with the last spin of it spent spinning.
func (p *pacer) waitSpin(ctx context.Context, sched time.Time, spin time.Duration) bool {
	for d := time.Until(sched) - spin; d > 0; d = time.Until(sched) - spin {
		if p.tf == nil {
			p.timer.Reset(d)
			select {
			case <-ctx.Done():
				return false
			case <-p.timer.C:
			}
			break
		}
		if ctx.Err() != nil {
			return false
		}
		if err := p.tf.sleep(min(d, timerfdSlice)); err != nil {
			p.tf.close()
			p.tf = nil // the runtime's timer from here on
		}
	}
	for n := 0; time.Now().Before(sched); n++ {
		if n&1023 == 1023 && ctx.Err() != nil {
			return false
		}
	}
	return ctx.Err() == nil
}
