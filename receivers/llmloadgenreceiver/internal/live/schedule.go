package live

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

// schedule issues the run's requests, from start (a shard waits for
// start_at), by the configured schedule: a trace, a sweep, virtual users or
// open-loop arrivals. It returns when the schedule is over or ctx ends.
func (r *Runner) schedule(ctx context.Context, start time.Time) {
	r.concurrencyCap.Store(int64(r.lc.MaxConcurrency))
	switch {
	case r.trace != nil: // waits for start_at itself, its first rows built
		r.runTrace(ctx, start)
	case !r.plan.WaitStart(ctx):
	case r.lc.Sweep.StepDuration > 0:
		r.runSweep(ctx)
	case r.cfg.Arrival.Type == config.ArrivalConcurrency:
		r.runClosed(ctx, r.cfg.Arrival, start, r.cfg.Duration)
	default:
		r.runOpen(ctx, r.cfg.Arrival, start, r.cfg.Duration)
	}
}

// ticket reserves the next request of the run; false once the run's
// request bound is reached.
func (r *Runner) ticket() bool {
	n := r.issued.Add(1)
	return r.cfg.Requests == 0 || n <= r.requests
}

// runOpen issues requests at the arrival process's times until the duration
// (0: unbounded) or the request bound is reached, or ctx ends.
func (r *Runner) runOpen(ctx context.Context, a config.ArrivalConfig, start time.Time, duration time.Duration) {
	src := loadgen.NewRand(r.nextSeed())
	o := r.plan.Arrivals(a, r.step, src)
	prof := loadgen.NewProfile(a) // the run's offered rate over time, for the target-rate attribute
	pc := r.newPacer()
	defer pc.close()
	// Arrivals due before the runner could send them (a shard started after
	// start_at, or a sweep step that began while the last one drained) are
	// skipped; arrivals the scheduler merely wakes up late for are sent late.
	begin := r.readyAt.Add(-loadgen.SkipSlack)
	for {
		t := o.Next()
		if math.IsInf(t, 1) || (duration > 0 && t >= duration.Seconds()) {
			return
		}
		if !r.ticket() {
			return
		}
		sched := start.Add(time.Duration(t * float64(time.Second)))
		send, ok := r.waitFor(ctx, pc, sched, begin)
		if !ok {
			return
		}
		if send {
			r.issue(ctx, sched, prof.At(t))
		}
	}
}

// nextSeed draws a seed from the run's id source.
func (r *Runner) nextSeed() uint64 {
	r.idMu.Lock()
	defer r.idMu.Unlock()
	return r.idRand.Uint64()
}

// issue sends an open-loop arrival scheduled at sched, offered at rate, on
// a goroutine of its own: a request, or a session with live.session.
func (r *Runner) issue(ctx context.Context, sched time.Time, rate float64) {
	r.inflight.Add(1)
	go func() {
		defer r.inflight.Done()
		if r.lc.Session.Turns > 0 {
			r.runSession(ctx, sched, rate)
			return
		}
		r.request(sched, rate)
	}()
}

// waitFor sleeps until sched. It returns send false for an arrival due
// before the schedule began (a late start: skipped and counted, never sent
// in a burst to catch up), and ok false when ctx ended; an arrival the
// scheduler merely woke up late for is sent late, its lag recorded.
func (r *Runner) waitFor(ctx context.Context, pc *pacer, sched, begin time.Time) (send, ok bool) {
	if sched.Before(begin) {
		r.skipLate(sched)
		return false, true
	}
	if !pc.wait(ctx, sched) {
		return false, false
	}
	lag := time.Since(sched).Seconds()
	r.tel.Live.Lag.Record(context.Background(), lag)
	r.sched.Record(lag)
	return true, true
}

// skipLate counts an arrival due before the run was ready (a late shard's
// past): not sent, its lateness recorded.
func (r *Runner) skipLate(sched time.Time) {
	late := time.Since(sched).Seconds()
	r.sched.Skip(late)
	r.tel.Live.Lag.Record(context.Background(), late)
	r.tel.Live.NotSent.Add(context.Background(), 1, loadgen.ReasonAttrs(loadgen.ReasonLateStart))
}

// timerfdSlice bounds one timerfd sleep, so that a cancelled run is seen
// within it.
const timerfdSlice = 20 * time.Millisecond

// runClosed runs virtual users for d (0: until the requests run out): each
// sends a request, waits for it to end, thinks, and sends the next. The
// number of users follows the profile of a (concurrency and stages),
// checked every 100 ms.
func (r *Runner) runClosed(ctx context.Context, a config.ArrivalConfig, start time.Time, d time.Duration) {
	prof := loadgen.NewProfile(a)
	var target atomic.Int64
	var users sync.WaitGroup
	active := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	userCtx, stopUsers := context.WithCancel(ctx)
	defer func() {
		stopUsers()
		users.Wait()
	}()
	exhausted := make(chan struct{})
	var once sync.Once
	exhaust := func() { once.Do(func() { close(exhausted) }) }
	for {
		elapsed := time.Since(start)
		if d > 0 && elapsed >= d {
			return
		}
		want := r.plan.Share(int64(math.Floor(prof.At(elapsed.Seconds()) + 1e-9)))
		target.Store(want)
		r.concurrencyCap.Store(want)
		for ; int64(active) < want; active++ {
			r.startUser(userCtx, &users, active, &target, exhaust)
		}
		if int64(active) > want {
			active = int(want) // users above the target retire on their own
		}
		select {
		case <-ctx.Done():
			return
		case <-exhausted:
			return
		case <-tick.C:
		}
	}
}

// startUser starts virtual user id on a goroutine that users tracks, with
// a think-time seed of its own; exhausted ends the run's users.
func (r *Runner) startUser(ctx context.Context, users *sync.WaitGroup, id int, target *atomic.Int64, exhausted func()) {
	users.Add(1)
	thinkSeed := r.nextSeed()
	go func() {
		defer users.Done()
		r.user(ctx, id, target, thinkSeed, exhausted)
	}()
}

func (r *Runner) user(ctx context.Context, id int, target *atomic.Int64, seed uint64, exhausted func()) {
	rng := rand.New(rand.NewPCG(seed, uint64(id)))
	think := r.cfg.Arrival.ThinkTime
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil && int64(id) < target.Load() {
		if !r.ticket() {
			exhausted()
			return
		}
		r.inflight.Add(1)
		if r.lc.Session.Turns > 0 {
			r.runSession(ctx, time.Now(), 0)
		} else {
			r.request(time.Now(), 0)
		}
		r.inflight.Done()
		if think > 0 {
			timer.Reset(time.Duration(rng.ExpFloat64() * float64(think)))
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
	}
}
