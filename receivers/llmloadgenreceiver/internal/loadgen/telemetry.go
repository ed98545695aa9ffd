package loadgen

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// Signals, as the signal attribute spells them.
const (
	SignalTraces  = "traces"
	SignalMetrics = "metrics"
	SignalLogs    = "logs"
)

// Reasons data is dropped (otelcol_llm_loadgen_dropped).
const (
	DropPermanent        = "permanent_error"
	DropShutdown         = "shutdown"
	DropRetriesExhausted = "retries_exhausted" // live mode, after LiveRetries refusals
)

// Telemetry is the receiver's own telemetry on its TelemetrySettings meter:
// the delivery counters both modes share, synthetic mode's request and
// rate instruments, and, created in live mode only, live mode's.
type Telemetry struct {
	requests    metric.Int64Counter
	emitted     metric.Int64Counter
	refused     metric.Int64Counter
	Dropped     metric.Int64Counter
	backoff     metric.Float64Counter
	TargetRate  metric.Float64Gauge
	Achieved    metric.Float64Gauge
	Lag         metric.Float64Histogram
	signalAttrs map[string]metric.MeasurementOption

	Live LiveInstruments // zero in synthetic mode
}

// LiveInstruments are live mode's own instruments.
type LiveInstruments struct {
	requests  metric.Int64Counter
	NotSent   metric.Int64Counter
	Sessions  metric.Int64Counter
	QueueTime metric.Float64Histogram
	Lag       metric.Float64Histogram
	InFlight  metric.Int64UpDownCounter
	Queued    metric.Int64UpDownCounter
	Knee      metric.Float64Gauge
	// ServerScrapes counts the sweep's reads of the server's /metrics.
	ServerScrapes metric.Int64Counter

	resultAttrs *sync.Map // error.type → the attribute set of requests
}

var liveSecondsBuckets = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// NewTelemetry creates the instruments of a receiver in mode.
func NewTelemetry(set component.TelemetrySettings, mode string) (*Telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &Telemetry{signalAttrs: map[string]metric.MeasurementOption{}}
	t.requests = b.Counter("otelcol_llm_loadgen_requests", "{request}",
		"Simulated requests emitted, by scenario and outcome (ok, error).")
	t.emitted = b.Counter("otelcol_llm_loadgen_emitted", "{item}",
		"Items the next consumer accepted, by signal (spans, metric data points, log records).")
	t.refused = b.Counter("otelcol_llm_loadgen_refused", "{item}",
		"Items in sends the next consumer refused with a retryable error; the generator backs off and sends them again.")
	t.Dropped = b.Counter("otelcol_llm_loadgen_dropped", "{item}",
		"Items never delivered, by signal and reason (permanent_error, shutdown, retries_exhausted).")
	t.backoff = b.FloatCounter("otelcol_llm_loadgen_backoff", "s",
		"Time the generator paused because the next consumer refused data.")
	t.TargetRate = b.FloatGauge(genai.MetricLoadgenTargetRate, "{request}/s",
		"Target request rate of the arrival profile now (open loop), or target virtual users (concurrency).")
	t.Achieved = b.FloatGauge("otelcol_llm_loadgen_achieved_rate", "{request}/s",
		"Requests emitted per second of wall time since the last progress report.")
	t.Lag = b.Histogram("otelcol_llm_loadgen_schedule_lag", "s",
		"Realtime mode: how late a request's telemetry was emitted after its simulated end.", 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
	for _, s := range []string{SignalTraces, SignalMetrics, SignalLogs} {
		t.signalAttrs[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", s)))
	}
	if mode == config.ModeLive {
		t.Live = newLiveInstruments(b)
	}
	return t, b.Err()
}

func newLiveInstruments(b *selftel.Builder) LiveInstruments {
	return LiveInstruments{
		requests: b.Counter("otelcol_llm_loadgen_live_requests", "{request}",
			"Live requests finished, by outcome (ok, error) and error.type."),
		NotSent: b.Counter("otelcol_llm_loadgen_live_not_sent", "{request}",
			"Scheduled live requests that were never sent, by reason (queue_full)."),
		Sessions: b.Counter("otelcol_llm_loadgen_live_sessions", "{session}",
			"Multi-turn sessions (live.session) that ended, by outcome (completed, failed_turn, stopped)."),
		QueueTime: b.Histogram("otelcol_llm_loadgen_live_queue_time", "s",
			"Time a live request waited in the client-side queue for live.max_concurrency.", liveSecondsBuckets...),
		Lag: b.Histogram("otelcol_llm_loadgen_live_schedule_lag", "s",
			"How late the scheduler started a live request after its scheduled send time.", liveSecondsBuckets...),
		InFlight: b.UpDownCounter("otelcol_llm_loadgen_live_in_flight", "{request}",
			"Live requests sent and not finished."),
		Queued: b.UpDownCounter("otelcol_llm_loadgen_live_queued", "{request}",
			"Live requests waiting for live.max_concurrency."),
		Knee: b.FloatGauge("otelcol_llm_loadgen_live_sweep_knee", "{request}/s",
			"Highest request rate of the sweep that met the SLO without saturating."),
		ServerScrapes: b.Counter("otelcol_llm_loadgen_live_server_scrapes", "{scrape}",
			"The sweep's reads of the server's /metrics (live.sweep.server), by outcome (ok, error, unknown_server)."),
		resultAttrs: new(sync.Map),
	}
}

func ReasonAttrs(reason string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason)))
}

// RecordResult counts a finished live request by outcome and error.type.
func (t *LiveInstruments) RecordResult(errorType string) {
	opt, ok := t.resultAttrs.Load(errorType)
	if !ok {
		outcome := "ok"
		if errorType != "" {
			outcome = "error"
		}
		opt, _ = t.resultAttrs.LoadOrStore(errorType, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("outcome", outcome), attribute.String("error.type", errorType))))
	}
	t.requests.Add(context.Background(), 1, opt.(metric.AddOption))
}

func (t *Telemetry) DropAttrs(signal, reason string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", signal), attribute.String("reason", reason)))
}

func (t *Telemetry) RecordRequests(ctx context.Context, counts map[RequestOutcome]int64) {
	for k, n := range counts {
		t.requests.Add(ctx, n, metric.WithAttributeSet(attribute.NewSet(attribute.String("scenario", k.Scenario), attribute.String("outcome", k.Outcome))))
	}
}

type RequestOutcome struct{ Scenario, Outcome string }
