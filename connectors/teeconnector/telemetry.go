package teeconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector"

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/connectors/teeconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
)

type telemetry struct {
	readerRefused metric.Int64Counter
	copied        metric.Int64Counter
	// byReader[i] is the pipeline attribute of readers[i].
	byReader []metric.AddOption
}

func newTelemetry(set component.TelemetrySettings, readers []reader) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{
		readerRefused: b.Counter("otelcol_tee_reader_refused_spans", "{span}",
			"Spans a reader pipeline refused, by pipeline; the owner pipeline still got them."),
		copied: b.Counter("otelcol_tee_copied_batches", "{batch}",
			"Batches copied for the owner pipeline because they arrived read-only or a reader pipeline marked them read-only."),
	}
	for _, r := range readers {
		t.byReader = append(t.byReader, metric.WithAttributeSet(attribute.NewSet(attribute.String("pipeline", r.id.String()))))
	}
	return t, b.Err()
}
