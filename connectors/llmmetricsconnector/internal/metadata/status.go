// Package metadata holds the llm_metrics connector's identity: its component
// type, instrumentation scope and stability levels. It is written by hand and
// mirrors ../../metadata.yaml.
package metadata // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the component type used in configurations.
	Type = component.MustNewType("llm_metrics")
	// ScopeName is the instrumentation scope of the metrics the connector
	// produces and of its own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"
)

const (
	// TracesToMetricsStability is the stability of the traces → metrics route.
	TracesToMetricsStability = component.StabilityLevelAlpha
)
