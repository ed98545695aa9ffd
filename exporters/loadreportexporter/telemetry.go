package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
)

// pending collects, under the state lock, what is reported to the
// component's own telemetry after each call.
type pending struct {
	errorTypesFolded int64
	gpusFolded       int64
	ignored          map[[2]string]int64 // {attribute, reason}
	csvWritten       int64               // requests.csv rows appended
	csvDropped       int64               // requests.csv rows lost to a failed write
	joined           int64               // client/server span pairs joined
	unjoined         map[[2]string]int64 // {side, reason} of spans that found no partner
}

func (p *pending) ignoredValue(attr, reason string) {
	if p.ignored == nil {
		p.ignored = map[[2]string]int64{}
	}
	p.ignored[[2]string{attr, reason}]++
}

type telemetry struct {
	spans    metric.Int64Counter
	points   metric.Int64Counter
	ignored  metric.Int64Counter
	folded   metric.Int64Counter
	writes   metric.Int64Counter
	verdicts metric.Int64Counter
	csvRows  metric.Int64Counter
	join     metric.Int64Counter
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{
		spans: b.Counter("otelcol_load_report_spans", "{span}",
			"Spans the exporter looked at, by outcome (request, group_overflow, span_guard_summary, not_genai, not_model_call, server_span, bad_timestamps)."),
		points: b.Counter("otelcol_load_report_metric_points", "{point}",
			"Metric data points the exporter looked at, by outcome (used, not_used, series_limit, wrong_type, no_temporality)."),
		ignored: b.Counter("otelcol_load_report_ignored_values", "{value}",
			"Span attribute values that could not be used, by attribute and reason."),
		folded: b.Counter("otelcol_load_report_folded", "{item}",
			"Error types and GPUs folded into an _OTHER entry by the limits, by kind."),
		writes: b.Counter("otelcol_load_report_writes", "{file}",
			"Report files written, by format and outcome (success, error)."),
		verdicts: b.Counter("otelcol_load_report_verdicts", "{report}",
			"Reports produced, by overall verdict (PASS, WARN, FAIL, NO_DATA) and whether final."),
		csvRows: b.Counter("otelcol_load_report_csv_rows", "{row}",
			"Rows of requests.csv, by outcome (written, or dropped with reason write_error)."),
		join: b.Counter("otelcol_load_report_join", "{span}",
			"Client and server spans of the per-request join, by outcome (joined, one per pair; unjoined, by side client or server and reason timeout, evicted or run_end)."),
	}
	return t, b.Err()
}

func (t *telemetry) record(ctx context.Context, c metric.Int64Counter, key string, byOutcome map[string]int64) {
	for outcome, n := range byOutcome {
		if n > 0 {
			c.Add(ctx, n, metric.WithAttributes(attribute.String(key, outcome)))
		}
	}
}

func (t *telemetry) flushPending(ctx context.Context, p *pending) {
	if p.errorTypesFolded > 0 {
		t.folded.Add(ctx, p.errorTypesFolded, metric.WithAttributes(attribute.String("kind", "error_type")))
	}
	if p.gpusFolded > 0 {
		t.folded.Add(ctx, p.gpusFolded, metric.WithAttributes(attribute.String("kind", "gpu")))
	}
	if p.csvWritten > 0 {
		t.csvRows.Add(ctx, p.csvWritten, metric.WithAttributes(attribute.String("outcome", "written")))
	}
	if p.csvDropped > 0 {
		t.csvRows.Add(ctx, p.csvDropped, metric.WithAttributes(attribute.String("outcome", "dropped"), attribute.String("reason", "write_error")))
	}
	if p.joined > 0 {
		t.join.Add(ctx, p.joined, metric.WithAttributes(attribute.String("outcome", "joined")))
	}
	for k, n := range p.unjoined {
		t.join.Add(ctx, n, metric.WithAttributes(attribute.String("outcome", "unjoined"), attribute.String("side", k[0]), attribute.String("reason", k[1])))
	}
	for k, n := range p.ignored {
		t.ignored.Add(ctx, n, metric.WithAttributes(attribute.String("attribute", k[0]), attribute.String("reason", k[1])))
	}
	*p = pending{}
}
