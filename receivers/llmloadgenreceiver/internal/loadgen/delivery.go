package loadgen

import (
	"context"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"
)

// LiveRetries is how many times live mode sends a refused batch again
// before it drops it (reason retries_exhausted): live requests go on
// finishing in real time, so a batch held back holds every later result in
// memory. Synthetic mode retries without limit, since its simulated clock
// stands still while it waits.
const LiveRetries = 10

// Deliverer is the one delivery loop of both modes: it hands a batch to the
// next consumer and decides what a refusal costs.
type Deliverer struct {
	Backpressure config.BackpressureConfig
	Tel          *Telemetry
	Logger       *zap.Logger
	Retries      int // retries of a refused batch before it is dropped; 0: no limit
}

// Deliver hands one batch of items of signal to the next consumer through
// consume. A retryable refusal is counted in otelcol_llm_loadgen_refused and
// retried after an exponential backoff: backpressure.initial_backoff,
// doubling up to backpressure.max_backoff, each wait counted in
// otelcol_llm_loadgen_backoff. The batch is dropped, and counted in
// otelcol_llm_loadgen_dropped by reason, on a permanent error
// (permanent_error), once stop is done (shutdown), or after d.retries
// refusals (retries_exhausted). It returns whether the batch was delivered
// and how long it waited in all.
func (d *Deliverer) Deliver(ctx, stop context.Context, signal string, items int, consume func(context.Context) error) (bool, time.Duration) {
	bg := context.Background() // the run may be ending: count anyway
	attrs := d.Tel.signalAttrs[signal]
	backoff := d.Backpressure.InitialBackoff
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		err := consume(ctx)
		if err == nil {
			d.Tel.emitted.Add(bg, int64(items), attrs)
			return true, waited
		}
		if reason := d.dropReason(stop, attempt, err); reason != "" {
			return d.drop(signal, items, reason, err), waited
		}
		d.Tel.refused.Add(bg, int64(items), attrs)
		d.Logger.Debug("llm_loadgen: the next consumer refused data; backing off",
			zap.String("signal", signal), zap.Duration("backoff", backoff), zap.Error(err))
		if !waitBackoff(stop, backoff) {
			return d.drop(signal, items, DropShutdown, err), waited
		}
		waited += backoff
		d.Tel.backoff.Add(bg, backoff.Seconds())
		backoff = min(2*backoff, d.Backpressure.MaxBackoff)
	}
}

// dropReason says why a batch that attempt refused with err is dropped
// rather than retried, or "" to retry it.
func (d *Deliverer) dropReason(stop context.Context, attempt int, err error) string {
	switch {
	case consumererror.IsPermanent(err):
		return DropPermanent
	case stop.Err() != nil:
		return DropShutdown
	case d.Retries > 0 && attempt > d.Retries:
		return DropRetriesExhausted
	}
	return ""
}

// waitBackoff waits for d; it returns false when stop is done first.
func waitBackoff(stop context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	select {
	case <-stop.Done():
		t.Stop()
		return false
	case <-t.C:
		return true
	}
}

// drop counts a batch that is not delivered and says why; it returns false.
func (d *Deliverer) drop(signal string, items int, reason string, err error) bool {
	d.Tel.Dropped.Add(context.Background(), int64(items), d.Tel.DropAttrs(signal, reason))
	d.Logger.Warn("llm_loadgen: the next consumer refused data; it is dropped",
		zap.String("signal", signal), zap.Int("items", items), zap.String("reason", reason), zap.Error(err))
	return false
}
