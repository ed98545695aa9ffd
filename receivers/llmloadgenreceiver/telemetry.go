package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Signals, as the signal attribute spells them.
const (
	signalTraces  = "traces"
	signalMetrics = "metrics"
	signalLogs    = "logs"
)

// Reasons data is dropped (otelcol_llm_loadgen_dropped).
const (
	dropPermanent        = "permanent_error"
	dropShutdown         = "shutdown"
	dropRetriesExhausted = "retries_exhausted" // live mode, after liveRetries refusals
)

// telemetry is the receiver's own telemetry on its TelemetrySettings meter:
// the delivery counters both modes share, synthetic mode's request and
// rate instruments, and, created in live mode only, live mode's.
type telemetry struct {
	requests    metric.Int64Counter
	emitted     metric.Int64Counter
	refused     metric.Int64Counter
	dropped     metric.Int64Counter
	backoff     metric.Float64Counter
	targetRate  metric.Float64Gauge
	achieved    metric.Float64Gauge
	lag         metric.Float64Histogram
	signalAttrs map[string]metric.MeasurementOption

	live liveInstruments // zero in synthetic mode
}

// liveInstruments are live mode's own instruments.
type liveInstruments struct {
	requests  metric.Int64Counter
	notSent   metric.Int64Counter
	sessions  metric.Int64Counter
	queueTime metric.Float64Histogram
	lag       metric.Float64Histogram
	inflight  metric.Int64UpDownCounter
	queued    metric.Int64UpDownCounter
	knee      metric.Float64Gauge
	// serverScrapes counts the sweep's reads of the server's /metrics.
	serverScrapes metric.Int64Counter

	resultAttrs *sync.Map // error.type → the attribute set of requests
}

var liveSecondsBuckets = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// newTelemetry creates the instruments of a receiver in mode.
func newTelemetry(set component.TelemetrySettings, mode string) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{signalAttrs: map[string]metric.MeasurementOption{}}
	t.requests = b.Counter("otelcol_llm_loadgen_requests", "{request}",
		"Simulated requests emitted, by scenario and outcome (ok, error).")
	t.emitted = b.Counter("otelcol_llm_loadgen_emitted", "{item}",
		"Items the next consumer accepted, by signal (spans, metric data points, log records).")
	t.refused = b.Counter("otelcol_llm_loadgen_refused", "{item}",
		"Items in sends the next consumer refused with a retryable error; the generator backs off and sends them again.")
	t.dropped = b.Counter("otelcol_llm_loadgen_dropped", "{item}",
		"Items never delivered, by signal and reason (permanent_error, shutdown, retries_exhausted).")
	t.backoff = b.FloatCounter("otelcol_llm_loadgen_backoff", "s",
		"Time the generator paused because the next consumer refused data.")
	t.targetRate = b.FloatGauge(genai.MetricLoadgenTargetRate, "{request}/s",
		"Target request rate of the arrival profile now (open loop), or target virtual users (concurrency).")
	t.achieved = b.FloatGauge("otelcol_llm_loadgen_achieved_rate", "{request}/s",
		"Requests emitted per second of wall time since the last progress report.")
	t.lag = b.Histogram("otelcol_llm_loadgen_schedule_lag", "s",
		"Realtime mode: how late a request's telemetry was emitted after its simulated end.", 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
	for _, s := range []string{signalTraces, signalMetrics, signalLogs} {
		t.signalAttrs[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", s)))
	}
	if mode == modeLive {
		t.live = newLiveInstruments(b)
	}
	return t, b.Err()
}

func newLiveInstruments(b *selftel.Builder) liveInstruments {
	return liveInstruments{
		requests: b.Counter("otelcol_llm_loadgen_live_requests", "{request}",
			"Live requests finished, by outcome (ok, error) and error.type."),
		notSent: b.Counter("otelcol_llm_loadgen_live_not_sent", "{request}",
			"Scheduled live requests that were never sent, by reason (queue_full)."),
		sessions: b.Counter("otelcol_llm_loadgen_live_sessions", "{session}",
			"Multi-turn sessions (live.session) that ended, by outcome (completed, failed_turn, stopped)."),
		queueTime: b.Histogram("otelcol_llm_loadgen_live_queue_time", "s",
			"Time a live request waited in the client-side queue for live.max_concurrency.", liveSecondsBuckets...),
		lag: b.Histogram("otelcol_llm_loadgen_live_schedule_lag", "s",
			"How late the scheduler started a live request after its scheduled send time.", liveSecondsBuckets...),
		inflight: b.UpDownCounter("otelcol_llm_loadgen_live_in_flight", "{request}",
			"Live requests sent and not finished."),
		queued: b.UpDownCounter("otelcol_llm_loadgen_live_queued", "{request}",
			"Live requests waiting for live.max_concurrency."),
		knee: b.FloatGauge("otelcol_llm_loadgen_live_sweep_knee", "{request}/s",
			"Highest request rate of the sweep that met the SLO without saturating."),
		serverScrapes: b.Counter("otelcol_llm_loadgen_live_server_scrapes", "{scrape}",
			"The sweep's reads of the server's /metrics (live.sweep.server), by outcome (ok, error, unknown_server)."),
		resultAttrs: new(sync.Map),
	}
}

func reasonAttrs(reason string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason)))
}

// recordResult counts a finished live request by outcome and error.type.
func (t *liveInstruments) recordResult(res *liveResult) {
	opt, ok := t.resultAttrs.Load(res.ErrorType)
	if !ok {
		outcome := "ok"
		if res.ErrorType != "" {
			outcome = "error"
		}
		opt, _ = t.resultAttrs.LoadOrStore(res.ErrorType, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("outcome", outcome), attribute.String("error.type", res.ErrorType))))
	}
	t.requests.Add(context.Background(), 1, opt.(metric.AddOption))
}

func (t *telemetry) dropAttrs(signal, reason string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", signal), attribute.String("reason", reason)))
}

func (t *telemetry) recordRequests(ctx context.Context, counts map[requestOutcome]int64) {
	for k, n := range counts {
		t.requests.Add(ctx, n, metric.WithAttributeSet(attribute.NewSet(attribute.String("scenario", k.scenario), attribute.String("outcome", k.outcome))))
	}
}

type requestOutcome struct{ scenario, outcome string }
