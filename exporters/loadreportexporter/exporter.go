package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// errVerdict is returned by Shutdown when the final verdict reaches
// exit.on_verdict; the collector then exits with status 1.
var errVerdict = errors.New("load_report: verdict gate failed")

// reportExporter is shared by the traces and the metrics exporter of one
// configuration, so that both signals feed one report.
type reportExporter struct {
	cfg    *Config
	logger *zap.Logger
	tel    *telemetry
	rd     *renderer
	now    func() time.Time

	mu          sync.Mutex
	st          *state            // data without a run id
	runs        map[string]*state // one per llm_loadgen.run.id (runs.go)
	lastVerdict string

	host     component.Host
	stopCh   chan struct{}
	loopDone chan struct{}
	stopOnce sync.Once
	// onStop is called (once) when the exporter asks the collector to stop;
	// by default it sends the process SIGTERM (stopBySignal).
	onStop func(host component.Host, reason error)
	// console receives the summary that print_summary prints at the end.
	console io.Writer
}

func newReportExporter(cfg *Config, set component.TelemetrySettings) (*reportExporter, error) {
	tel, err := newTelemetry(set)
	if err != nil {
		return nil, err
	}
	rd, err := newRenderer(cfg.CancelledErrorTypes)
	if err != nil {
		return nil, err
	}
	e := &reportExporter{cfg: cfg, logger: set.Logger, tel: tel, rd: rd, now: time.Now}
	e.st = newState(cfg, func() time.Time { return e.now() }, newJoiner(cfg.Join))
	e.onStop = stopBySignal
	e.console = os.Stdout
	return e, nil
}

// stopBySignal asks the collector to stop as an operator's Ctrl-C would: it
// sends its own process SIGTERM, which the collector takes as a graceful
// shutdown and logs at info level. (A component's other way, a fatal error
// status, makes the collector log an error with a stack trace although the
// run ended as planned.) Only where the signal cannot be sent does it fall
// back to the fatal status.
func stopBySignal(host component.Host, reason error) {
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Signal(syscall.SIGTERM)
	}
	if err != nil {
		reportFatal(host, reason)
	}
}

// reportFatal asks the collector to stop by reporting a fatal error status:
// the service forwards it to the collector's asynchronous error channel and
// the collector shuts down (exit status 0 unless a component's Shutdown
// returns an error). The send is unbuffered and may never be read if the
// collector is already stopping, so it runs on its own goroutine.
func reportFatal(host component.Host, reason error) {
	go componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(reason))
}

// Start and Shutdown make the exporter the component that the factory's
// registry (internal/sharedcomponent) shares between the traces and the
// metrics exporter; it calls each once.
func (e *reportExporter) Start(ctx context.Context, host component.Host) error {
	return e.start(ctx, host)
}

func (e *reportExporter) Shutdown(ctx context.Context) error { return e.shutdown(ctx) }

// start creates the directory and starts the interval loop.
func (e *reportExporter) start(_ context.Context, host component.Host) error {
	if err := os.MkdirAll(e.cfg.Directory, 0o755); err != nil {
		return fmt.Errorf("directory: cannot create %q: %w", e.cfg.Directory, err)
	}
	// A probe write catches a read-only or foreign directory at startup.
	probe := filepath.Join(e.cfg.Directory, ".load_report_probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return fmt.Errorf("directory: %q is not writable: %w", e.cfg.Directory, err)
	}
	_ = os.Remove(probe)
	if e.cfg.Baseline.Path != "" {
		b, err := loadBaseline(e.cfg.Baseline.Path)
		if err != nil {
			return err
		}
		e.st.baseline = b
	}
	e.host = host
	e.stopCh = make(chan struct{})
	e.loopDone = make(chan struct{})
	// The start context must not outlive Start; the loop has its own.
	go e.loop(context.Background())
	return nil
}

// shutdown stops the loop and writes the final report; it must follow a
// successful start.
func (e *reportExporter) shutdown(ctx context.Context) error {
	close(e.stopCh)
	<-e.loopDone
	r, err := e.write(ctx, true)
	if err != nil {
		return err
	}
	e.logger.Info("Load report written", zap.String("directory", e.cfg.Directory), zap.String("summary", r.describe()))
	if e.cfg.PrintSummary {
		fmt.Fprint(e.console, consoleSummary(r, e.reportDir(r), e.cfg.Formats))
	}
	if atLeast(r.Verdict, e.cfg.Exit.OnVerdict) {
		return fmt.Errorf("%w: overall verdict %s reaches exit.on_verdict %q (%s); report in %s",
			errVerdict, r.Verdict, e.cfg.Exit.OnVerdict, r.describe(), e.cfg.Directory)
	}
	return nil
}

func (e *reportExporter) loop(ctx context.Context) {
	defer close(e.loopDone)
	check := time.Second
	if e.cfg.Interval > 0 && e.cfg.Interval < check {
		check = e.cfg.Interval
	}
	tick := time.NewTicker(check)
	defer tick.Stop()
	lastWrite := e.now()
	for {
		select {
		case <-e.stopCh:
			return
		case <-tick.C:
		}
		if e.cfg.Interval > 0 && e.now().Sub(lastWrite) >= e.cfg.Interval {
			lastWrite = e.now()
			r, err := e.write(ctx, false)
			if err == nil && e.cfg.Exit.StopEarly && atLeast(r.Verdict, e.cfg.Exit.OnVerdict) && r.Total.Requests >= e.cfg.Exit.MinRequests {
				e.requestStop(fmt.Errorf("load_report: verdict %s reached exit.on_verdict %q: stopping early (%s)", r.Verdict, e.cfg.Exit.OnVerdict, r.describe()))
			}
		}
		if reason := e.runOver(); reason != "" {
			e.requestStop(fmt.Errorf("load_report: run finished (%s); stopping the collector", reason))
		}
	}
}

// runOver reports why the run is over by exit.stop_after or
// exit.stop_when_idle, or "".
func (e *reportExporter) runOver() string {
	e.mu.Lock()
	first, last := e.arrivals()
	e.mu.Unlock()
	if first.IsZero() {
		return ""
	}
	now := e.now()
	if d := e.cfg.Exit.StopAfter; d > 0 && now.Sub(first) >= d {
		return fmt.Sprintf("exit.stop_after %v since the first request", d)
	}
	if d := e.cfg.Exit.StopWhenIdle; d > 0 && now.Sub(last) >= d {
		return fmt.Sprintf("no request for exit.stop_when_idle %v", d)
	}
	return ""
}

func (e *reportExporter) requestStop(reason error) {
	e.stopOnce.Do(func() {
		e.logger.Info("Asking the collector to stop", zap.Error(reason))
		e.onStop(e.host, reason)
	})
}

// writeReport writes every configured format of r into dir.
func (e *reportExporter) writeReport(ctx context.Context, dir string, r *Report, final bool) error {
	e.tel.verdicts.Add(ctx, 1, metric.WithAttributes(attribute.String("verdict", r.Verdict), attribute.Bool("final", final)))
	var errs []error
	for _, f := range e.cfg.Formats {
		if f == FormatCSV {
			continue // appended as spans arrive (requests_csv.go)
		}
		data, err := e.rd.render(f, r)
		if err == nil {
			err = writeAtomic(dir, fileNames[f], data)
		}
		outcome := "success"
		if err != nil {
			outcome = "error"
			errs = append(errs, fmt.Errorf("writing %s: %w", fileNames[f], err))
		}
		e.tel.writes.Add(ctx, 1, metric.WithAttributes(attribute.String("format", f), attribute.String("outcome", outcome)))
	}
	return errors.Join(errs...)
}

func (e *reportExporter) consumeTraces(ctx context.Context, td ptrace.Traces) error {
	e.consume(ctx, e.tel.spans, func() map[string]int64 { return e.consumeTracesByRun(td) })
	return nil
}

func (e *reportExporter) consumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	e.consume(ctx, e.tel.points, func() map[string]int64 { return e.consumeMetricsByRun(md) })
	return nil
}

// consume runs add under the state lock and records its outcomes on counter.
func (e *reportExporter) consume(ctx context.Context, counter metric.Int64Counter, add func() map[string]int64) {
	e.mu.Lock()
	out := add()
	p := e.takePending()
	e.mu.Unlock()
	e.tel.record(ctx, counter, "outcome", out)
	e.tel.flushPending(ctx, &p)
}
