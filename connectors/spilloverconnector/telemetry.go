package spilloverconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector"

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
)

// Routes a batch takes, as counted by otelcol_spillover_spans.
const (
	routePrimary = "primary" // the primary pipeline accepted it
	routeSpill   = "spill"   // the spill pipeline accepted it
)

// Why a batch went to the spill pipeline (otelcol_spillover_spilled_batches).
const (
	causeRefused = "primary_refused" // the primary returned a retryable error
	causeBackoff = "primary_backoff" // within retry_primary_after of a refusal
)

// Why spans were returned to the caller (otelcol_spillover_refused_spans).
const (
	reasonPermanent    = "permanent_error" // the primary refused them as invalid; spilling cannot help
	reasonSpillRefused = "spill_refused"   // the spill pipeline refused them too
)

type telemetry struct {
	spans    metric.Int64Counter
	spilled  metric.Int64Counter
	refused  metric.Int64Counter
	spilling metric.Int64Gauge

	onPrimary, onSpill     metric.AddOption
	byRefused, byBackoff   metric.AddOption
	byPermanent, bySpillNo metric.AddOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{
		spans:    b.Counter("otelcol_spillover_spans", "{span}", "Spans a pipeline accepted from the connector, by route (primary, spill)."),
		spilled:  b.Counter("otelcol_spillover_spilled_batches", "{batch}", "Batches sent to the spill pipeline, by cause (primary_refused, primary_backoff)."),
		refused:  b.Counter("otelcol_spillover_refused_spans", "{span}", "Spans returned to the caller as an error, by reason (permanent_error, spill_refused)."),
		spilling: b.Gauge("otelcol_spillover_spilling", "1", "1 while batches go straight to the spill pipeline after a primary refusal, else 0."),
	}
	attr := func(k, v string) metric.AddOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String(k, v)))
	}
	t.onPrimary, t.onSpill = attr("route", routePrimary), attr("route", routeSpill)
	t.byRefused, t.byBackoff = attr("cause", causeRefused), attr("cause", causeBackoff)
	t.byPermanent, t.bySpillNo = attr("reason", reasonPermanent), attr("reason", reasonSpillRefused)
	return t, b.Err()
}
