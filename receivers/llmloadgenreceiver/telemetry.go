package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"

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

// telemetry is the receiver's own telemetry on its TelemetrySettings meter.
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
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
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
	return t, b.Err()
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
