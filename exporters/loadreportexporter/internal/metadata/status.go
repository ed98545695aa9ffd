// Package metadata holds the load_report exporter's identity: its component
// type, instrumentation scope and stability levels. It is written by hand and
// mirrors ../../metadata.yaml.
package metadata // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the component type used in configurations.
	Type = component.MustNewType("load_report")
	// ScopeName is the instrumentation scope of the exporter's own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"
)

const (
	// TracesStability is the stability of the traces exporter.
	TracesStability = component.StabilityLevelAlpha
	// MetricsStability is the stability of the metrics exporter.
	MetricsStability = component.StabilityLevelAlpha
)
