package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// sweepStep is the tally of one rate step.
type sweepStep struct {
	rate      float64
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
func (r *liveRunner) runSweep(ctx context.Context) {
	sw := r.lc.Sweep
	var mu sync.Mutex
	var cur *sweepStep
	r.onResult = func(res *liveResult) {
		mu.Lock()
		defer mu.Unlock()
		if cur == nil {
			return
		}
		cur.sent++
		if res.ErrorType != "" {
			return
		}
		cur.completed++
		if (sw.TTFT <= 0 || res.ttft() <= sw.TTFT) && (sw.TPOT <= 0 || res.tpot() <= sw.TPOT) && (sw.E2E <= 0 || res.e2e() <= sw.E2E) {
			cur.good++
		}
	}
	knee := 0.0
	verdict := "max_rate_reached"
	watch := newServerWatch(sw.Server, &r.tel.live, r.logger)
	for k, rate := 0, sw.StartRate; rate <= sw.MaxRate+1e-9 && ctx.Err() == nil; k, rate = k+1, rate+sw.StepRate {
		step := &sweepStep{rate: rate}
		mu.Lock()
		cur = step
		mu.Unlock()
		a := r.cfg.Arrival
		a.Rate, a.Stages = rate, nil
		// Sharded runs step in lock-step: step k starts at start_at + k·step_duration
		// on every shard, whenever the previous step's requests ended.
		stepStart := time.Now()
		if !r.plan.startAt.IsZero() {
			stepStart = r.plan.startAt.Add(time.Duration(k) * sw.StepDuration)
		}
		r.step = k
		if k > 0 {
			r.readyAt = time.Now()
		}
		stopWatch := r.watchServer(ctx, watch)
		r.runOpen(ctx, a, stepStart, sw.StepDuration)
		// The step's verdict needs its requests' outcomes.
		r.inflight.Wait()
		stopWatch()
		wall := time.Since(stepStart).Seconds()
		mu.Lock()
		s := *step
		cur = nil
		mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if s.sent == 0 {
			r.logStep(s, wall, 0)
			continue
		}
		if v := r.stepVerdict(s, wall, watch); v != "" {
			verdict = v
			break
		}
		knee = rate
	}
	r.sweepKnee, r.sweepStoppedBy = knee, verdict
	r.tel.live.knee.Record(context.Background(), knee)
	r.logger.Info("llm_loadgen live sweep finished", zap.Float64("knee_rate", knee), zap.String("stopped_by", verdict))
}

// stepVerdict judges a finished step over wall seconds (the step and the
// drain of its last requests): "slo_broken", "saturated", a server signal
// of sweep.server, or "" when it passed.
func (r *liveRunner) stepVerdict(s sweepStep, wall float64, watch *serverWatch) string {
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

func (r *liveRunner) logStep(s sweepStep, wall, goodRatio float64) {
	r.logger.Info("llm_loadgen live sweep step",
		zap.Float64("rate", s.rate), zap.Int64("sent", s.sent), zap.Int64("completed", s.completed),
		zap.Int64("good", s.good), zap.Float64("good_ratio", goodRatio),
		zap.Float64("offered_per_s", float64(s.sent)/r.lc.Sweep.StepDuration.Seconds()), zap.Float64("completed_per_s", float64(s.completed)/wall))
}

// watchServer scrapes the server during one step, until the returned
// function is called; a no-op without sweep.server.
func (r *liveRunner) watchServer(ctx context.Context, w *serverWatch) func() {
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
