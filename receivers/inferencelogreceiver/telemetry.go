package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// Outcomes and reasons carried by the receiver's own counters.
const (
	outcomeParsed     = "parsed"      // the preset's grammar matched the line
	outcomeParseError = "parse_error" // kept with its raw body and the parse-error attribute
	outcomeSent       = "sent"
	outcomeDropped    = "dropped"
	reasonRefused     = "consumer_refused" // the next consumer returned an error
)

type telemetry struct {
	records, recordsDropped, points metric.Int64Counter

	parsed, parseError, pointsSent, pointsDropped, refused metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings, preset string) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{
		records:        b.Counter("otelcol_inference_log_records", "{record}", "Log records read from the tailed files, by outcome (parsed, parse_error)."),
		recordsDropped: b.Counter("otelcol_inference_log_records_dropped", "{record}", "Log records lost because the next consumer refused them, by reason."),
		points:         b.Counter("otelcol_inference_log_metric_points", "{point}", "Metric points derived from stats lines, by outcome (sent, dropped)."),
	}
	p := attribute.String("preset", preset)
	with := func(k, v string) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(p, attribute.String(k, v)))
	}
	t.parsed = with("outcome", outcomeParsed)
	t.parseError = with("outcome", outcomeParseError)
	t.pointsSent = with("outcome", outcomeSent)
	t.pointsDropped = with("outcome", outcomeDropped)
	t.refused = with("reason", reasonRefused)
	return t, b.Err()
}

func (t *telemetry) recordsRead(ctx context.Context, parsed, parseErrors int) {
	if parsed > 0 {
		t.records.Add(ctx, int64(parsed), t.parsed)
	}
	if parseErrors > 0 {
		t.records.Add(ctx, int64(parseErrors), t.parseError)
	}
}

func (t *telemetry) logsRefused(ctx context.Context, n int) {
	t.recordsDropped.Add(ctx, int64(n), t.refused)
}

func (t *telemetry) metricPoints(ctx context.Context, n int, err error) {
	if n == 0 {
		return
	}
	if err != nil {
		t.points.Add(ctx, int64(n), t.pointsDropped)
		return
	}
	t.points.Add(ctx, int64(n), t.pointsSent)
}
