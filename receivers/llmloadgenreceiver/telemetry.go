package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
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
	m := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{signalAttrs: map[string]metric.MeasurementOption{}}
	var errs, err error
	t.requests, err = m.Int64Counter("otelcol_llm_loadgen_requests",
		metric.WithDescription("Simulated requests emitted, by scenario and outcome (ok, error)."), metric.WithUnit("{request}"))
	errs = errors.Join(errs, err)
	t.emitted, err = m.Int64Counter("otelcol_llm_loadgen_emitted",
		metric.WithDescription("Items the next consumer accepted, by signal (spans, metric data points, log records)."), metric.WithUnit("{item}"))
	errs = errors.Join(errs, err)
	t.refused, err = m.Int64Counter("otelcol_llm_loadgen_refused",
		metric.WithDescription("Items in sends the next consumer refused with a retryable error; the generator backs off and sends them again."), metric.WithUnit("{item}"))
	errs = errors.Join(errs, err)
	t.dropped, err = m.Int64Counter("otelcol_llm_loadgen_dropped",
		metric.WithDescription("Items never delivered, by signal and reason (permanent_error, shutdown, retries_exhausted)."), metric.WithUnit("{item}"))
	errs = errors.Join(errs, err)
	t.backoff, err = m.Float64Counter("otelcol_llm_loadgen_backoff",
		metric.WithDescription("Time the generator paused because the next consumer refused data."), metric.WithUnit("s"))
	errs = errors.Join(errs, err)
	t.targetRate, err = m.Float64Gauge(genai.MetricLoadgenTargetRate,
		metric.WithDescription("Target request rate of the arrival profile now (open loop), or target virtual users (concurrency)."), metric.WithUnit("{request}/s"))
	errs = errors.Join(errs, err)
	t.achieved, err = m.Float64Gauge("otelcol_llm_loadgen_achieved_rate",
		metric.WithDescription("Requests emitted per second of wall time since the last progress report."), metric.WithUnit("{request}/s"))
	errs = errors.Join(errs, err)
	t.lag, err = m.Float64Histogram("otelcol_llm_loadgen_schedule_lag",
		metric.WithDescription("Realtime mode: how late a request's telemetry was emitted after its simulated end."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	errs = errors.Join(errs, err)
	for _, s := range []string{signalTraces, signalMetrics, signalLogs} {
		t.signalAttrs[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", s)))
	}
	return t, errs
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
