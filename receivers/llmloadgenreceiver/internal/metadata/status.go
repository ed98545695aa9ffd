// Package metadata holds the llm_loadgen receiver's identity: its component
// type, instrumentation scope and stability levels. It is written by hand and
// mirrors ../../metadata.yaml.
package metadata // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the component type used in configurations.
	Type = component.MustNewType("llm_loadgen")
	// ScopeName is the instrumentation scope of the telemetry the receiver
	// generates and of its own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"
)

const (
	// TracesStability is the stability of the traces signal.
	TracesStability = component.StabilityLevelAlpha
	// MetricsStability is the stability of the metrics signal.
	MetricsStability = component.StabilityLevelAlpha
	// LogsStability is the stability of the logs signal.
	LogsStability = component.StabilityLevelAlpha
)
