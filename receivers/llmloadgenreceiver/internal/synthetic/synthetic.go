// Package synthetic is llm_loadgen's synthetic mode: simulated LLM
// requests rendered as the traces, GenAI metrics and log events of one
// instrumentation dialect, with no model and no endpoint.
package synthetic

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Runner generates traffic in synthetic mode. One goroutine owns the
// generator, so a seed reproduces a run.
type Runner struct {
	l      *loadgen.Run
	cfg    *config.Config
	tel    *loadgen.Telemetry
	del    *loadgen.Deliverer
	obs    *receiverhelper.ObsReport
	logger *zap.Logger
	seed   uint64

	cancel context.CancelFunc
	done   chan struct{}

	// now returns the wall clock; tests replace it.
	now func() time.Time

	// State owned by the run goroutine.
	gen    *generator
	rd     *renderer
	ma     *metricsAgg
	lb     *logsBuilder
	open   *loadgen.OpenLoop
	closed *loadgen.ClosedLoop
	origin int64 // unix nanoseconds of simulated time 0
	paused time.Duration
	// simClock is the latest simulated end so far.
	simClock int64

	issued      int64 // requests built
	nextArrival float64
	inBatch     int
	outcomes    map[loadgen.RequestOutcome]int64
	// counts holds the current batch's requests per scenario and outcome
	// (index 2*scenario+failed); flush moves them into outcomes.
	counts      []int64
	totals      runTotals
	lastReport  time.Time
	lastEmitted int64
	lastMetrics time.Time
}

// runTotals are the counts of a run so far.
type runTotals struct {
	requests int64 // requests whose telemetry was handed to the pipeline
	built    int64 // spans generated
	spans    int64 // spans accepted by the next consumer
	points   int64
	records  int64
}

// New prepares a synthetic run; Start begins it.
func New(l *loadgen.Run) (*Runner, error) {
	tel, err := loadgen.NewTelemetry(l.Settings.TelemetrySettings, config.ModeSynthetic)
	if err != nil {
		return nil, err
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: l.Settings.ID, Transport: "synthetic", LongLivedCtx: true, ReceiverCreateSettings: l.Settings,
	})
	if err != nil {
		return nil, err
	}
	seed := l.Config.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	del := &loadgen.Deliverer{Backpressure: l.Config.Backpressure, Tel: tel, Logger: l.Settings.Logger}
	return &Runner{l: l, cfg: l.Config, tel: tel, del: del, obs: obs, logger: l.Settings.Logger, seed: seed, now: time.Now}, nil
}

func (s *Runner) Start(_ context.Context, _ component.Host) error {
	s.init()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.run(ctx)
	}()
	return nil
}

func (s *Runner) Shutdown(ctx context.Context) error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// init prepares the generator, the renderer and the arrival process.
func (s *Runner) init() {
	cfg := s.cfg
	s.gen = newGenerator(cfg, s.seed)
	s.rd = newRenderer(cfg, s.gen, s.l.Settings.BuildInfo.Version)
	start := s.now()
	if cfg.Timing == config.TimingAFAP && cfg.StartTime != "" {
		start, _ = time.Parse(time.RFC3339Nano, cfg.StartTime)
	}
	s.origin = start.UnixNano()
	s.ma = newMetricsAgg(s.origin)
	s.lb = newLogsBuilder(s.rd)
	if cfg.Arrival.Type == config.ArrivalConcurrency {
		s.closed = loadgen.NewClosedLoop(cfg.Arrival, s.gen.rng)
	} else {
		s.open = loadgen.NewOpenLoop(cfg.Arrival, s.gen.rng)
	}
	s.outcomes = map[loadgen.RequestOutcome]int64{}
	s.counts = make([]int64, 2*len(s.gen.scenarios))
	s.lastReport, s.lastMetrics = s.now(), s.now()
	s.nextArrival = s.arrival()
}

// arrival returns the next request's start in seconds of simulated time, or
// +Inf once the run's bounds are reached.
func (s *Runner) arrival() float64 {
	if s.cfg.Requests > 0 && s.issued >= s.cfg.Requests {
		return math.Inf(1)
	}
	var t float64
	if s.closed != nil {
		t = s.closed.Next()
	} else {
		t = s.open.Next()
	}
	if s.cfg.Duration > 0 && t >= s.cfg.Duration.Seconds() {
		return math.Inf(1)
	}
	return t
}

// issue builds the request that arrives at s.nextArrival into r.
func (s *Runner) issue(r *request) {
	s.gen.build(r, s.origin+nanos(s.nextArrival))
	s.issued++
	s.simClock = max(s.simClock, r.end)
	if s.closed != nil {
		s.closed.Done(float64(r.end-s.origin) / 1e9)
	}
	s.nextArrival = s.arrival()
}

// collect adds a finished request to the current batch of every attached signal.
func (s *Runner) collect(r *request) {
	if s.l.Traces != nil {
		s.rd.render(r)
	}
	if s.l.Metrics != nil {
		s.ma.add(r)
	}
	if s.l.Logs != nil && s.cfg.Logs.InferenceDetails {
		s.lb.add(r)
	}
	i := 2 * r.scenario
	if r.failed {
		i++
	}
	s.counts[i]++
	s.inBatch++
}

func (s *Runner) run(ctx context.Context) {
	s.logger.Info("llm_loadgen synthetic generation started",
		zap.String("timing", s.cfg.Timing), zap.String("semconv", s.cfg.Semconv),
		zap.String("arrival", s.cfg.Arrival.Type), zap.Uint64("seed", s.seed))
	if s.cfg.Timing == config.TimingAFAP {
		s.runAFAP(ctx)
	} else {
		s.runRealtime(ctx)
	}
	s.emitMetrics(ctx, s.simNow())
	s.report(true)
}

// runAFAP generates back to back, with simulated timestamps.
func (s *Runner) runAFAP(ctx context.Context) {
	var r request
	progress := time.Duration(0)
	if s.cfg.ProgressInterval > 0 {
		progress = s.cfg.ProgressInterval
	}
	for !math.IsInf(s.nextArrival, 1) {
		if ctx.Err() != nil {
			s.dropPending(ctx, 0)
			return
		}
		s.issue(&r)
		s.collect(&r)
		if s.inBatch >= s.cfg.BatchSize {
			s.flush(ctx)
			now := s.now()
			if s.l.Metrics != nil && now.Sub(s.lastMetrics) >= s.cfg.Metrics.Interval {
				s.emitMetrics(ctx, r.end)
				s.lastMetrics = now
			}
			if progress > 0 && now.Sub(s.lastReport) >= progress {
				s.report(false)
			}
		}
	}
	s.flush(ctx)
}

// simNow is the current simulated time in unix nanoseconds: the wall clock
// less the time spent backing off (realtime), or the latest simulated end
// (as_fast_as_possible).
func (s *Runner) simNow() int64 {
	if s.cfg.Timing == config.TimingAFAP {
		return max(s.simClock, s.origin)
	}
	return s.now().Add(-s.paused).UnixNano()
}

// inflight orders simulated requests by end time.
type inflight []*request

func (h inflight) Len() int           { return len(h) }
func (h inflight) Less(i, j int) bool { return h[i].end < h[j].end }
func (h inflight) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *inflight) Push(x any)        { *h = append(*h, x.(*request)) }
func (h *inflight) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// runRealtime starts requests on the wall clock and emits each one's
// telemetry when its simulated request ends.
func (s *Runner) runRealtime(ctx context.Context) {
	rt := &realtime{lastSend: s.now()}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := s.simNow()
		s.issueDue(rt, now)
		s.collectEnded(ctx, rt, now)
		s.housekeep(ctx, rt)
		if math.IsInf(s.nextArrival, 1) && len(rt.pending) == 0 {
			s.flush(ctx)
			return
		}
		timer.Reset(s.nextWake(rt))
		select {
		case <-ctx.Done():
			s.dropPending(ctx, len(rt.pending))
			return
		case <-timer.C:
		}
	}
}

// realtime is the state of a realtime run: the requests in flight ordered
// by their end, finished ones kept for reuse, and the last send.
type realtime struct {
	pending  inflight
	free     []*request
	lastSend time.Time
}

// issueDue builds every request whose arrival is due at simulated time now.
func (s *Runner) issueDue(rt *realtime, now int64) {
	for !math.IsInf(s.nextArrival, 1) && s.origin+nanos(s.nextArrival) <= now {
		var r *request
		if n := len(rt.free); n > 0 {
			r, rt.free = rt.free[n-1], rt.free[:n-1]
		} else {
			r = &request{}
		}
		s.issue(r)
		heap.Push(&rt.pending, r)
	}
}

// collectEnded renders every request that has ended by now, sending a
// batch when it is full.
func (s *Runner) collectEnded(ctx context.Context, rt *realtime, now int64) {
	for len(rt.pending) > 0 && rt.pending[0].end <= now {
		r := heap.Pop(&rt.pending).(*request)
		s.tel.Lag.Record(ctx, float64(now-r.end)/1e9)
		s.collect(r)
		rt.free = append(rt.free, r)
		if s.inBatch >= s.cfg.BatchSize {
			s.flush(ctx)
			rt.lastSend = s.now()
		}
	}
}

// housekeep sends a batch older than flush_interval, the metrics every
// metrics.interval and the progress every progress_interval.
func (s *Runner) housekeep(ctx context.Context, rt *realtime) {
	wall := s.now()
	if s.inBatch > 0 && wall.Sub(rt.lastSend) >= s.cfg.FlushInterval {
		s.flush(ctx)
		rt.lastSend = wall
	}
	if s.l.Metrics != nil && wall.Sub(s.lastMetrics) >= s.cfg.Metrics.Interval {
		s.emitMetrics(ctx, s.simNow())
		s.lastMetrics = wall
	}
	if s.cfg.ProgressInterval > 0 && wall.Sub(s.lastReport) >= s.cfg.ProgressInterval {
		s.report(false)
	}
}

// nextWake is how long to sleep: until the next arrival, the next end or
// the next flush.
func (s *Runner) nextWake(rt *realtime) time.Duration {
	wake := s.cfg.FlushInterval
	if !math.IsInf(s.nextArrival, 1) {
		wake = min(wake, time.Duration(s.origin+nanos(s.nextArrival)-s.simNow()))
	}
	if len(rt.pending) > 0 {
		wake = min(wake, time.Duration(rt.pending[0].end-s.simNow()))
	}
	return max(wake, 0)
}

// dropPending accounts for the batch that shutdown interrupted.
// The requests of that batch were never emitted, so they are not counted as
// requests.
func (s *Runner) dropPending(_ context.Context, inflightRequests int) {
	ctx := context.Background() // the run's context is already canceled
	if s.rd.spans > 0 {
		s.totals.built += int64(s.rd.spans)
		s.tel.Dropped.Add(ctx, int64(s.rd.spans), s.tel.DropAttrs(loadgen.SignalTraces, loadgen.DropShutdown))
		s.rd.reset()
	}
	if _, n := s.lb.take(); n > 0 {
		s.tel.Dropped.Add(ctx, int64(n), s.tel.DropAttrs(loadgen.SignalLogs, loadgen.DropShutdown))
	}
	s.inBatch = 0
	clear(s.counts)
	if inflightRequests > 0 {
		s.logger.Info("llm_loadgen stopped with simulated requests in flight; their telemetry is not emitted",
			zap.Int("in_flight_requests", inflightRequests))
	}
}

// flush sends the current batch to the next consumers.
func (s *Runner) flush(ctx context.Context) {
	if s.inBatch == 0 {
		return
	}
	s.recordOutcomes(ctx)
	s.totals.requests += int64(s.inBatch)
	s.inBatch = 0
	if s.l.Traces != nil {
		s.flushTraces(ctx)
	}
	if s.l.Logs != nil {
		s.flushLogs(ctx)
	}
}

// recordOutcomes counts the batch's requests by scenario and outcome into
// the receiver's telemetry and clears the batch counters.
func (s *Runner) recordOutcomes(ctx context.Context) {
	for i, n := range s.counts {
		if n > 0 {
			o := loadgen.RequestOutcome{Scenario: s.gen.scenarios[i/2].typ, Outcome: "ok"}
			if i%2 == 1 {
				o.Outcome = "error"
			}
			s.outcomes[o] += n
		}
	}
	clear(s.counts)
	s.tel.RecordRequests(ctx, s.outcomes)
	clear(s.outcomes)
}

// flushTraces sends the batch's spans to the traces consumer.
func (s *Runner) flushTraces(ctx context.Context) {
	td, n := s.rd.take()
	s.totals.built += int64(n)
	if n > 0 && s.send(ctx, loadgen.SignalTraces, n, func(ctx context.Context) error {
		octx := s.obs.StartTracesOp(ctx)
		err := s.l.Traces.ConsumeTraces(octx, td)
		s.obs.EndTracesOp(octx, metadata.Type.String(), n, err)
		return err
	}) {
		s.totals.spans += int64(n)
	}
}

// flushLogs sends the batch's log records to the logs consumer.
func (s *Runner) flushLogs(ctx context.Context) {
	ld, n := s.lb.take()
	if n > 0 && s.send(ctx, loadgen.SignalLogs, n, func(ctx context.Context) error {
		octx := s.obs.StartLogsOp(ctx)
		err := s.l.Logs.ConsumeLogs(octx, ld)
		s.obs.EndLogsOp(octx, metadata.Type.String(), n, err)
		return err
	}) {
		s.totals.records += int64(n)
	}
}

func (s *Runner) emitMetrics(ctx context.Context, at int64) {
	if s.l.Metrics == nil {
		return
	}
	md, n := s.ma.emit(s.rd, at)
	if n > 0 && s.send(ctx, loadgen.SignalMetrics, n, func(ctx context.Context) error {
		octx := s.obs.StartMetricsOp(ctx)
		err := s.l.Metrics.ConsumeMetrics(octx, md)
		s.obs.EndMetricsOp(octx, metadata.Type.String(), n, err)
		return err
	}) {
		s.totals.points += int64(n)
	}
}

// send hands data to the next consumer (internal/loadgen/delivery.go); in realtime mode the
// simulated clock stands still while it backs off, so the generator slows
// down instead of dropping.
func (s *Runner) send(ctx context.Context, signal string, items int, consume func(context.Context) error) bool {
	ok, waited := s.del.Deliver(ctx, ctx, signal, items, consume)
	s.paused += waited
	return ok
}

// report logs a progress line (or the final summary) and updates the rate gauges.
func (s *Runner) report(final bool) {
	now := s.now()
	elapsed := now.Sub(s.lastReport).Seconds()
	achieved := 0.0
	if elapsed > 0 {
		achieved = float64(s.totals.requests-s.lastEmitted) / elapsed
	}
	target := s.targetRate()
	ctx := context.Background()
	s.tel.Achieved.Record(ctx, achieved)
	s.tel.TargetRate.Record(ctx, target)
	msg := "llm_loadgen progress"
	if final {
		msg = "llm_loadgen finished"
	}
	s.logger.Info(msg,
		zap.Int64("requests", s.totals.requests), zap.Int64("spans", s.totals.spans),
		zap.Int64("metric_points", s.totals.points), zap.Int64("log_records", s.totals.records),
		zap.Float64("achieved_rate", achieved), zap.Float64("target", target),
		zap.Duration("backoff_total", s.paused))
	s.lastReport, s.lastEmitted = now, s.totals.requests
}

// targetRate is the arrival rate the profile asks for at the current
// simulated time; zero once the run's bounds are reached.
func (s *Runner) targetRate() float64 {
	simT := float64(s.simNow()-s.origin) / 1e9
	switch {
	case math.IsInf(s.nextArrival, 1):
		return 0
	case s.closed != nil:
		return s.closed.At(simT)
	default:
		return s.open.At(simT)
	}
}
