package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
)

// Outcomes of a span, as counted by otelcol_llm_metrics_spans.
const (
	spanRecorded = iota // aggregated into its own series
	spanOverflow        // aggregated into the overflow series
	spanNotGenAI        // no gen_ai.operation.name: not a GenAI span
	spanInvalid         // end before start: refused
	numSpanOutcomes
)

var spanOutcomeNames = [numSpanOutcomes]string{"recorded", "overflow", "not_genai", "invalid"}

// Reasons an attribute value is ignored, as counted by otelcol_llm_metrics_ignored_values.
const (
	reasonWrongType = "wrong_type"
	reasonNegative  = "negative"
	reasonTooMany   = "too_many_evaluation_names"
)

// batchCounts accumulates, during one ConsumeTraces call, what is reported to
// the component's own telemetry at its end (one Add per attribute set).
type batchCounts struct {
	spans       [numSpanOutcomes]int64
	overflowPts int64
	ignored     map[ignoredKey]int64
}

type ignoredKey struct{ attribute, reason string }

func (b *batchCounts) ignore(attr, reason string) {
	if b.ignored == nil {
		b.ignored = make(map[ignoredKey]int64)
	}
	b.ignored[ignoredKey{attr, reason}]++
}

type telemetry struct {
	spans         metric.Int64Counter
	overflowPts   metric.Int64Counter
	ignored       metric.Int64Counter
	series        metric.Int64Gauge
	expiredSeries metric.Int64Counter
	flushes       metric.Int64Counter
	lostPoints    metric.Int64Counter

	spanAttrs [numSpanOutcomes]metric.MeasurementOption
}

// instrument describes one counter of the component's own telemetry.
type instrument struct {
	dst              *metric.Int64Counter
	name, desc, unit string
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{}
	for _, c := range []instrument{
		{&t.spans, "otelcol_llm_metrics_spans", "Spans the connector looked at, by outcome (recorded, overflow, not_genai, invalid).", "{span}"},
		{&t.overflowPts, "otelcol_llm_metrics_overflow_points", "Measurements aggregated into an overflow series (otel.metric.overflow=true) because aggregation_cardinality_limit was reached.", "{point}"},
		{&t.ignored, "otelcol_llm_metrics_ignored_values", "Span attribute values the connector could not use, by attribute and reason.", "{value}"},
		{&t.expiredSeries, "otelcol_llm_metrics_expired_series", "Cumulative series removed after series_expiration without data.", "{series}"},
		{&t.flushes, "otelcol_llm_metrics_flushes", "Flushes to the next consumer, by outcome (success, error).", "{flush}"},
		{&t.lostPoints, "otelcol_llm_metrics_lost_points", "Data points the next consumer refused, by reason.", "{point}"},
	} {
		*c.dst = b.Counter(c.name, c.unit, c.desc)
	}
	t.series = b.Gauge("otelcol_llm_metrics_series", "{series}", "Series held in the connector's state after the last flush.")
	for i, name := range spanOutcomeNames {
		t.spanAttrs[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", name)))
	}
	return t, b.Err()
}

// report publishes what a batch accumulated.
func (t *telemetry) report(ctx context.Context, b *batchCounts) {
	for i, n := range b.spans {
		if n > 0 {
			t.spans.Add(ctx, n, t.spanAttrs[i])
		}
	}
	if b.overflowPts > 0 {
		t.overflowPts.Add(ctx, b.overflowPts)
	}
	for k, n := range b.ignored {
		t.ignored.Add(ctx, n, metric.WithAttributes(attribute.String("attribute", k.attribute), attribute.String("reason", k.reason)))
	}
}

// flushed records a flush; lost is the number of points a failed flush lost
// (delta state is gone once flushed; cumulative state is sent again).
func (t *telemetry) flushed(ctx context.Context, lost int, err error) {
	if err != nil {
		t.flushes.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "error")))
		if lost > 0 {
			t.lostPoints.Add(ctx, int64(lost), metric.WithAttributes(attribute.String("reason", "export_failed")))
		}
		return
	}
	t.flushes.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "success")))
}
