// Package live is llm_loadgen's live mode: streaming load against an
// OpenAI-compatible endpoint, with TTFT, ITL, TPOT and E2E measured per SSE
// event from each request's scheduled send time.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Runner drives load against an OpenAI-compatible endpoint. Requests
// are scheduled by the arrival process (open loop: each has a scheduled send
// time, and every latency is measured from it, so a slow server or a full
// concurrency cap shows up as latency instead of silently lowering the
// rate) or by virtual users (closed loop).
type Runner struct {
	l      *loadgen.Run
	cfg    *config.Config
	lc     *config.LiveConfig
	tel    *loadgen.Telemetry
	del    *loadgen.Deliverer
	obs    *receiverhelper.ObsReport
	logger *zap.Logger
	seed   uint64
	runID  string

	client       *liveClient
	prompts      *promptBuilder
	dataset      *dataset.Index       // nil without live.dataset
	workloadLine string               // the prompt source (dataset, trace, shared prefixes), for the console
	trace        *dataset.TraceReader // nil without live.trace
	armLead      time.Duration        // how early a trace row is armed (traceArmLead)
	shared       *sharedPrefixes      // nil without live.prompt.shared_prefix
	groupRand    *rand.Rand           // draws each request's group (under inMu)
	inMu         sync.Mutex
	inputs       loadgen.Sampler
	idMu         sync.Mutex
	idRand       *rand.Rand

	sem      chan struct{}
	queued   atomic.Int64
	seq      atomic.Int64
	issued   atomic.Int64
	sessions atomic.Int64 // sessions started (live.session)
	results  chan *liveResult
	onResult func(*liveResult) // sweep bookkeeping; nil otherwise

	stopIssue context.CancelFunc // stops the scheduler
	reqCtx    context.Context    // cancelled to abort requests in flight
	cancelReq context.CancelFunc
	inflight  sync.WaitGroup
	schedDone chan struct{}
	outDone   chan struct{}

	version  string
	summary  liveSummary
	progress liveProgress
	console  io.Writer // where progress_output console prints; standard output

	// Sharding (internal/loadgen/shard.go): this process's part of the run's schedule.
	plan     loadgen.ShardPlan
	sched    *loadgen.ScheduleStats
	step     int       // sweep step being scheduled
	readyAt  time.Time // arrivals scheduled before it (less SkipSlack) are skipped
	requests int64     // this shard's share of the run's request bound

	// concurrencyCap is the in-flight bound now: the closed loop's virtual
	// users, else live.max_concurrency (0: none).
	concurrencyCap atomic.Int64

	// Sweep outcome, set before the run's results channel closes.
	sweepKnee      float64
	sweepStoppedBy string
	sweepUpper     float64 // bisect: the smallest failing rate (0: none)
}

// New prepares a live run against live.endpoint; Start begins it.
func New(l *loadgen.Run) (*Runner, error) {
	tel, err := loadgen.NewTelemetry(l.Settings.TelemetrySettings, config.ModeLive)
	if err != nil {
		return nil, err
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: l.Settings.ID, Transport: "http", LongLivedCtx: true, ReceiverCreateSettings: l.Settings,
	})
	if err != nil {
		return nil, err
	}
	seed := loadgen.GlobalSeed(l.Config)
	if seed == 0 {
		seed = rand.Uint64()
	}
	plan, err := loadgen.NewShardPlan(l.Config, seed)
	if err != nil {
		return nil, err
	}
	lc := &l.Config.Live
	r := &Runner{
		l: l, cfg: l.Config, lc: lc, tel: tel, obs: obs, logger: l.Settings.Logger, seed: seed,
		del:     &loadgen.Deliverer{Backpressure: l.Config.Backpressure, Tel: tel, Logger: l.Settings.Logger, Retries: loadgen.LiveRetries},
		runID:   strconv.FormatUint(seed, 36) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
		version: l.Settings.BuildInfo.Version,
		plan:    plan, sched: loadgen.NewScheduleStats(), requests: plan.Share(l.Config.Requests),
		console: os.Stdout, armLead: traceArmLead,
	}
	if plan.Identified() {
		r.runID = plan.RunID + "-" + strconv.Itoa(plan.Index)
	}
	rng := loadgen.NewRand(plan.LocalSeed())
	r.inputs = loadgen.NewSampler(lc.Prompt.InputTokens, rng.Source)
	r.idRand = rand.New(rand.NewPCG(plan.LocalSeed()^0x5bd1e995, uint64(time.Now().UnixNano())))
	if err := r.initPrompts(); err != nil {
		return nil, err
	}
	return r, nil
}

// initPrompts builds the prompt builder and, with live.prompt.shared_prefix,
// the shared system prompts, all on the configured tokenizer.
func (r *Runner) initPrompts() error {
	r.prompts = newPromptBuilder(r.lc, r.runID)
	if err := r.prompts.useTokenizer(); err != nil {
		return fmt.Errorf("live.prompt.tokenizer: %w", err)
	}
	if r.shared = newSharedPrefixes(r.lc, r.runID); r.shared != nil {
		for _, g := range r.shared.groups {
			if err := g.shareTokenizer(r.prompts); err != nil {
				return fmt.Errorf("live.prompt.tokenizer: %w", err)
			}
		}
		seed := r.plan.LocalSeed()
		r.groupRand = rand.New(rand.NewPCG(seed^0x2545f4914f6cdd1d, seed))
		r.workloadLine = fmt.Sprintf("llm_loadgen: shared prefixes: %d groups, each a %d-token system prompt (estimated at 4 bytes per token), drawn with the seed",
			len(r.shared.groups), r.shared.tokens)
	}
	return nil
}

// httpClient builds the client from the confighttp settings, tuned for
// load: idle connections per host at least the concurrency, no response
// compression, no whole-request timeout, and no instrumentation of its own
// (the receiver writes the client span and the traceparent itself).
func (r *Runner) httpClient(ctx context.Context, host component.Host) (*http.Client, error) {
	cc := r.lc.Client
	idle := r.lc.MaxConcurrency
	if idle == 0 {
		idle = 4096
	}
	ka := confighttp.NewDefaultKeepaliveClientConfig()
	ka.MaxIdleConns = 0 // no global limit
	ka.MaxIdleConnsPerHost = idle
	cc.Keepalive = configoptional.Some(ka)
	cc.Timeout = 0
	set := r.l.Settings.TelemetrySettings
	set.TracerProvider = nil // no otelhttp wrapper: it would replace our traceparent
	var ext map[component.ID]component.Component
	if host != nil {
		ext = host.GetExtensions()
	}
	c, err := cc.ToClient(ctx, ext, set)
	if err != nil {
		return nil, fmt.Errorf("live.client: %w", err)
	}
	// Timeouts are per phase (live.timeouts); redirects are errors for an API.
	c.Timeout = 0
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c, nil
}

func (r *Runner) Start(ctx context.Context, host component.Host) error {
	hc, err := r.httpClient(ctx, host)
	if err != nil {
		return err
	}
	if err := r.openDataset(); err != nil {
		return err
	}
	if err := r.openTrace(); err != nil { // live.trace and live.dataset exclude each other
		return err
	}
	if r.client, err = r.newClient(hc); err != nil {
		return err
	}
	schedCtx := r.initRun()
	now := time.Now()
	start := r.plan.Begin(now)
	r.readyAt = now
	var console io.Writer
	if r.cfg.ProgressOutput == config.ProgressConsole {
		console = r.console
	}
	r.progress.init(console, start, r.cfg.Arrival)
	r.launch(schedCtx, start, r.newOutput(now))
	return nil
}

// initRun makes the run's concurrency slots, result channel, contexts and
// done signals; it returns the context that scheduling runs under.
func (r *Runner) initRun() context.Context {
	if r.lc.MaxConcurrency > 0 {
		r.sem = make(chan struct{}, r.lc.MaxConcurrency)
	}
	r.results = make(chan *liveResult, 4096)
	r.reqCtx, r.cancelReq = context.WithCancel(context.Background())
	schedCtx, stop := context.WithCancel(context.Background())
	r.stopIssue = stop
	r.schedDone = make(chan struct{})
	r.outDone = make(chan struct{})
	return schedCtx
}

// newOutput is the renderer of the run's telemetry, its clock started at now.
func (r *Runner) newOutput(now time.Time) *liveRenderer {
	out := newLiveRenderer(r.lc, r.version, now)
	out.tokenizer = r.prompts.tokenizerName()
	out.plan = r.plan
	out.reset(r.version)
	return out
}

// launch starts the output loop on out and the scheduler from start; the
// scheduler closes the results once the last request in flight ends.
func (r *Runner) launch(schedCtx context.Context, start time.Time, out *liveRenderer) {
	go func() {
		defer close(r.outDone)
		r.output(out)
	}()
	go func() {
		defer close(r.schedDone)
		r.announce(start)
		r.schedule(schedCtx, start)
		r.inflight.Wait()
		close(r.results)
	}()
}

// newClient is the request client of live.client: the raw HTTP/1.1 client
// when live.transport allows it, else the net/http client hc.
func (r *Runner) newClient(hc *http.Client) (*liveClient, error) {
	path := "/chat/completions"
	if r.lc.Operation == config.LiveOpText {
		path = "/completions"
	}
	c := &liveClient{cfg: r.lc, client: hc, url: strings.TrimRight(r.lc.Client.Endpoint, "/") + path,
		keepTimes: r.lc.ChunkEvents == config.ChunkEventsAll}
	if key := string(r.lc.APIKey); key != "" {
		c.auth = "Bearer " + key
	}
	raw, why := r.lc.RawTransport()
	if !raw {
		c.transportNote = "net/http (" + why + ")"
		return c, nil
	}
	rt, err := newRawTransport(r.lc, c.url, c.auth)
	if err != nil {
		return nil, fmt.Errorf("live.client.endpoint: %w", err)
	}
	c.raw, c.transportNote = rt, "raw HTTP/1.1"
	if r.lc.KernelTimestamps {
		c.transportNote += ", kernel receive timestamps"
	}
	return c, nil
}

// announce logs the run's start and prints what it sends on the console.
func (r *Runner) announce(start time.Time) {
	r.logger.Info("llm_loadgen live run started",
		zap.String("endpoint", r.client.url), zap.String("model", r.lc.Model),
		zap.String("arrival", r.cfg.Arrival.Type), zap.Int("max_concurrency", r.lc.MaxConcurrency),
		zap.Uint64("seed", r.seed), zap.String("run_id", r.plan.RunID), zap.Int("shard_index", r.plan.Index),
		zap.Int("shard_count", r.plan.Count), zap.Time("start_at", start), zap.String("transport", r.client.transportNote))
	r.progress.print(fmt.Sprintf("llm_loadgen: live load against %s, model %s: %s", r.client.url, r.lc.Model,
		describeArrival(r.cfg.Arrival, r.cfg.Requests, r.cfg.Duration)))
	if r.workloadLine != "" {
		r.progress.print(r.workloadLine)
	}
	if name := r.prompts.tokenizerName(); name != "" && r.dataset == nil && r.trace == nil {
		r.progress.print("llm_loadgen: prompts built to exact token counts of their contents under " + name +
			" (the server's chat template adds its own tokens)")
	}
}

// Shutdown stops scheduling, lets requests in flight finish for up to
// live.drain_timeout (bounded by ctx), cancels the rest, and flushes their
// telemetry.
func (r *Runner) Shutdown(ctx context.Context) error {
	if r.stopIssue == nil {
		return nil
	}
	r.stopIssue()
	err := r.drain(ctx)
	r.client.closeIdle()
	if r.dataset != nil {
		err = errors.Join(err, r.dataset.Close())
	}
	if r.trace != nil {
		err = errors.Join(err, r.trace.Close())
	}
	return err
}

// drain waits up to live.drain_timeout for the requests in flight, cancels
// the rest and waits for the scheduler and the output loop to end.
func (r *Runner) drain(ctx context.Context) error {
	drain := time.NewTimer(r.lc.DrainTimeout)
	defer drain.Stop()
	select {
	case <-r.schedDone:
	case <-drain.C:
	case <-ctx.Done():
	}
	r.cancelReq()
	var err error
	select {
	case <-r.schedDone:
	case <-ctx.Done():
		err = ctx.Err()
	}
	select {
	case <-r.outDone:
	case <-ctx.Done():
		err = ctx.Err()
	}
	return err
}

// output renders results and sends them to the next consumers in batches.
func (r *Runner) output(rd *liveRenderer) {
	ctx := context.Background()
	flush := time.NewTicker(r.cfg.FlushInterval)
	defer flush.Stop()
	metricsTick := time.NewTicker(r.cfg.Metrics.Interval)
	defer metricsTick.Stop()
	var progress <-chan time.Time
	if r.progress.out != nil {
		t := time.NewTicker(r.cfg.ProgressInterval)
		defer t.Stop()
		progress = t.C
	}
	for {
		select {
		case res, ok := <-r.results:
			if !ok {
				r.finishOutput(ctx, rd)
				return
			}
			r.takeResult(ctx, rd, res)
		case <-flush.C:
			r.flushTraces(ctx, rd)
		case <-metricsTick.C:
			r.flushMetrics(ctx, rd)
			r.summary.log(r.logger, false)
		case now := <-progress:
			r.progress.print(r.progress.line(now))
		}
	}
}

// takeResult counts result res into the summary and progress, renders it and
// flushes the traces once a batch is full.
func (r *Runner) takeResult(ctx context.Context, rd *liveRenderer, res *liveResult) {
	r.summary.add(res)
	r.progress.add(res)
	if r.l.Traces != nil {
		rd.render(res)
	}
	if r.l.Metrics != nil {
		rd.agg.add(res)
	}
	if rd.n >= r.cfg.BatchSize {
		r.flushTraces(ctx, rd)
	}
}

// finishOutput flushes what is left once the results end and reports the
// run's summary.
func (r *Runner) finishOutput(ctx context.Context, rd *liveRenderer) {
	r.flushTraces(ctx, rd)
	r.flushMetrics(ctx, rd)
	r.summary.log(r.logger, true)
	r.progress.print(r.summary.describe())
}

func (r *Runner) flushTraces(ctx context.Context, rd *liveRenderer) {
	if rd.n == 0 || r.l.Traces == nil {
		return
	}
	td, n := rd.take(r.version)
	r.deliver(ctx, loadgen.SignalTraces, n, func(ctx context.Context) error {
		octx := r.obs.StartTracesOp(ctx)
		err := r.l.Traces.ConsumeTraces(octx, td)
		r.obs.EndTracesOp(octx, metadata.Type.String(), n, err)
		return err
	})
}

func (r *Runner) flushMetrics(ctx context.Context, rd *liveRenderer) {
	if r.l.Metrics == nil {
		return
	}
	now := time.Now()
	md, n := rd.agg.emit(now, r.version)
	if r.plan.Identified() {
		n += r.sched.AppendTo(md, rd.agg.start.AsTime(), now)
	}
	if n == 0 {
		return
	}
	r.deliver(ctx, loadgen.SignalMetrics, n, func(ctx context.Context) error {
		octx := r.obs.StartMetricsOp(ctx)
		err := r.l.Metrics.ConsumeMetrics(octx, md)
		r.obs.EndMetricsOp(octx, metadata.Type.String(), n, err)
		return err
	})
}

// deliver hands data to the next consumer (internal/loadgen/delivery.go): measurements are
// already taken, so waiting costs no accuracy; teardown ends the waiting.
func (r *Runner) deliver(ctx context.Context, signal string, items int, consume func(context.Context) error) {
	r.del.Deliver(ctx, r.reqCtx, signal, items, consume)
}
