package live

import (
	"context"
	"sync"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"go.uber.org/zap"
)

// sweepStep is the tally of one step.
type sweepStep struct {
	rate      float64 // the open-loop rate offered; 0 for a closed-loop step
	users     int     // a closed-loop step's virtual users
	sent      int64
	completed int64 // finished without error
	good      int64 // completed and within every SLO bound
}

// runSweep steps the open-loop rate from start_rate by step_rate up to
// max_rate, each step lasting step_duration, and stops at the first step
// whose share of good requests falls below min_good_ratio (SLO broken) or
// whose completed rate (over the step and the drain of its last requests)
// falls below saturation_ratio of the rate it offered (saturation), or, with
// sweep.server, during which the server's own metrics showed saturation
// (kv_cache_full, preemptions, queue_growing). The knee is the last rate
// that passed.
func (r *Runner) runSweep(ctx context.Context) {
	sw := r.lc.Sweep
	tally := &sweepTally{sw: sw}
	r.onResult = tally.observe
	knee := 0.0
	verdict := "max_rate_reached"
	watch := newServerWatch(sw.Server, &r.tel.Live, r.logger)
	plan := newSweepPlan(sw, r.lc.MaxConcurrency)
	if plan.ranged {
		verdict = "range_done"
	}
	for k := 0; ctx.Err() == nil; k++ {
		spec, ok := plan.nextStep()
		if !ok {
			break
		}
		s, wall := r.runStep(ctx, k, spec, tally, watch)
		if ctx.Err() != nil {
			return
		}
		if s.sent == 0 {
			r.logStep(s, wall, 0)
			plan.skip()
			continue
		}
		v := r.stepVerdict(s, wall, watch)
		switch {
		case spec.users > 0: // a range's synchronous or throughput step: it measures, the rates judge
		case v == "":
			knee = max(knee, spec.rate)
		case !plan.ranged:
			verdict = v
		}
		plan.result(v == "", float64(s.completed)/wall)
	}
	r.finishSweep(plan, knee, verdict)
}

// finishSweep records and logs the sweep's knee and why it stopped, and for
// a bisection the interval the largest passing rate lies in.
func (r *Runner) finishSweep(plan *sweepPlan, knee float64, verdict string) {
	if plan.bisect {
		r.sweepUpper = plan.hi
		r.logger.Info("llm_loadgen live sweep: the largest rate that meets the SLO lies in an interval",
			zap.Float64("passed_rate", plan.lo), zap.Float64("failed_rate", plan.hi), zap.Float64("tolerance", r.lc.Sweep.Tolerance))
	}
	r.sweepKnee, r.sweepStoppedBy = knee, verdict
	r.tel.Live.Knee.Record(context.Background(), knee)
	r.logger.Info("llm_loadgen live sweep finished", zap.Float64("knee_rate", knee), zap.String("stopped_by", verdict))
}

// runStep runs step k of the sweep (an open-loop rate, or closed-loop
// users) and returns its counts once its requests have ended, with its wall
// time in seconds.
func (r *Runner) runStep(ctx context.Context, k int, spec sweepSpec, tally *sweepTally, watch *serverWatch) (sweepStep, float64) {
	step := &sweepStep{rate: spec.rate, users: spec.users}
	tally.begin(step)
	a := r.cfg.Arrival
	a.Rate, a.Stages = spec.rate, nil
	// Sharded runs step in lock-step: step k starts at start_at + k·step_duration
	// on every shard, whenever the previous step's requests ended.
	stepStart := time.Now()
	if !r.plan.StartAt.IsZero() {
		stepStart = r.plan.StartAt.Add(time.Duration(k) * r.lc.Sweep.StepDuration)
	}
	r.step = k
	if k > 0 {
		r.readyAt = time.Now()
	}
	stopWatch := r.watchServer(ctx, watch)
	if spec.users > 0 {
		r.runClosed(ctx, config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: spec.users}, stepStart, r.lc.Sweep.StepDuration)
		r.concurrencyCap.Store(int64(r.lc.MaxConcurrency))
	} else {
		r.runOpen(ctx, a, stepStart, r.lc.Sweep.StepDuration)
	}
	// The step's verdict needs its requests' outcomes.
	r.inflight.Wait()
	stopWatch()
	wall := time.Since(stepStart).Seconds()
	return tally.end(), wall
}

// sweepTally counts the outcomes of the current step's requests as their
// results arrive (on the output goroutine).
type sweepTally struct {
	sw  config.LiveSweepConfig
	mu  sync.Mutex
	cur *sweepStep // nil between steps
}

func (t *sweepTally) observe(res *liveResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return
	}
	t.cur.sent++
	if res.ErrorType != "" {
		return
	}
	t.cur.completed++
	sw := t.sw
	if (sw.TTFT <= 0 || res.ttft() <= sw.TTFT) && (sw.TPOT <= 0 || res.tpot() <= sw.TPOT) && (sw.E2E <= 0 || res.e2e() <= sw.E2E) {
		t.cur.good++
	}
}

// begin makes step the one results count into.
func (t *sweepTally) begin(step *sweepStep) {
	t.mu.Lock()
	t.cur = step
	t.mu.Unlock()
}

// end stops counting and returns the step's counts.
func (t *sweepTally) end() sweepStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := *t.cur
	t.cur = nil
	return s
}

// stepVerdict judges a finished step over wall seconds (the step and the
// drain of its last requests): "slo_broken", "saturated", a server signal
// of sweep.server, or "" when it passed.
func (r *Runner) stepVerdict(s sweepStep, wall float64, watch *serverWatch) string {
	sw := r.lc.Sweep
	goodRatio := float64(s.good) / float64(s.sent)
	r.logStep(s, wall, goodRatio)
	// The endpoint keeps up when requests complete (over the step and the
	// drain of its last requests) about as fast as they were offered.
	offered := float64(s.sent) / sw.StepDuration.Seconds()
	switch {
	case goodRatio < sw.MinGoodRatio:
		return "slo_broken"
	case float64(s.completed)/wall < sw.SaturationRatio*offered:
		return "saturated"
	}
	if watch != nil {
		if v, why := watch.verdict(); v != "" {
			r.logger.Info("llm_loadgen live sweep: the server saturated", zap.Float64("rate", s.rate), zap.String("signal", v), zap.String("detail", why))
			return v
		}
	}
	return ""
}

func (r *Runner) logStep(s sweepStep, wall, goodRatio float64) {
	r.logger.Info("llm_loadgen live sweep step",
		zap.Float64("rate", s.rate), zap.Int("users", s.users), zap.Int64("sent", s.sent), zap.Int64("completed", s.completed),
		zap.Int64("good", s.good), zap.Float64("good_ratio", goodRatio),
		zap.Float64("offered_per_s", float64(s.sent)/r.lc.Sweep.StepDuration.Seconds()), zap.Float64("completed_per_s", float64(s.completed)/wall))
}

// watchServer scrapes the server during one step, until the returned
// function is called; a no-op without sweep.server.
func (r *Runner) watchServer(ctx context.Context, w *serverWatch) func() {
	if w == nil {
		return func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.watch(wctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// sweepSpec is one step of a sweep: an open-loop rate, or, when users > 0,
// a closed loop of that many virtual users.
type sweepSpec struct {
	rate  float64
	users int
}

// sweepPlan is the order of a sweep's steps: rates from start_rate by
// step_rate until a step fails or max_rate passes; with search: bisect,
// start_rate, then max_rate, then the middle of the largest passing and the
// smallest failing rate until they are tolerance apart; with search: range,
// one virtual user (the synchronous rate), then throughput_users (the
// throughput rate), then rates evenly between the two measured rates, every
// one of them run whatever its verdict.
type sweepPlan struct {
	bisect                bool
	start, step, max, tol float64
	next                  float64
	lo, hi                float64 // bisect: the largest passing and the smallest failing rate (0: none yet)
	done                  bool

	ranged        bool
	users, nRates int       // range: the throughput step's users, the rates between
	phase         int       // range: 0 synchronous, 1 throughput, 2+ the rates
	measured      []float64 // range: the completed rates of the two closed-loop steps
	rates         []float64 // range: the rates to offer, once measured
}

func newSweepPlan(sw config.LiveSweepConfig, maxConcurrency int) *sweepPlan {
	p := &sweepPlan{bisect: sw.Search == config.SweepBisect, start: sw.StartRate, step: sw.StepRate, max: sw.MaxRate,
		tol: sw.Tolerance, next: sw.StartRate, ranged: sw.Search == config.SweepRange, nRates: sw.Rates, users: sw.ThroughputUsers}
	if p.users == 0 {
		p.users = maxConcurrency
	}
	return p
}

// nextStep is the next step to run; false when the sweep is over.
func (p *sweepPlan) nextStep() (sweepSpec, bool) {
	if !p.ranged {
		r, ok := p.rate()
		return sweepSpec{rate: r}, ok
	}
	switch {
	case p.phase == 0:
		return sweepSpec{users: 1}, true
	case p.phase == 1:
		return sweepSpec{users: p.users}, true
	case p.phase-2 < len(p.rates):
		return sweepSpec{rate: p.rates[p.phase-2]}, true
	}
	return sweepSpec{}, false
}

// rangeRates are n rates evenly spaced strictly between lo and hi (none
// when hi <= lo: the endpoint did not go faster with more users).
func rangeRates(lo, hi float64, n int) []float64 {
	if hi <= lo || n < 1 {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i+1)/float64(n+1)
	}
	return out
}

// rate is the next rate to offer; false when the sweep is over.
func (p *sweepPlan) rate() (float64, bool) {
	if p.done || p.next > p.max+1e-9 {
		return 0, false
	}
	return p.next, true
}

// skip moves past a step that sent nothing (its rate offered no arrival in
// the step): stepping goes on, a bisection takes it as passed.
func (p *sweepPlan) skip() {
	if p.bisect || p.ranged {
		p.result(true, 0)
		return
	}
	p.next += p.step
}

// result records whether the step just run passed, and the rate at which
// its requests completed.
func (p *sweepPlan) result(passed bool, completed float64) {
	switch {
	case p.ranged:
		p.rangeResult(completed)
	case p.bisect:
		p.bisectResult(passed)
	default:
		p.done = !passed
		p.next += p.step
	}
}

// rangeResult records the completed rate of a range's measuring steps and,
// once both are in, the rates the range's steps offer.
func (p *sweepPlan) rangeResult(completed float64) {
	if p.phase < 2 {
		p.measured = append(p.measured, completed)
	}
	if p.phase == 1 {
		p.rates = rangeRates(p.measured[0], p.measured[1], p.nRates)
	}
	p.phase++
}

// bisectResult narrows the bisection's interval by the step just run and
// picks the next rate, or ends the sweep.
func (p *sweepPlan) bisectResult(passed bool) {
	r := p.next
	if passed {
		p.lo = r
	} else {
		p.hi = r
	}
	switch {
	case r == p.start && !passed:
		p.done = true // even the lowest rate fails
	case r == p.start:
		p.next = p.max
	case p.hi == 0:
		p.done = true // max_rate passed
	case p.hi-p.lo <= p.tol:
		p.done = true
	default:
		p.next = (p.lo + p.hi) / 2
	}
}
