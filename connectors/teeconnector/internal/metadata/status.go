// Package metadata holds the tee connector's identity: its component type,
// instrumentation scope and stability levels. It is written by hand and
// mirrors ../../metadata.yaml.
package metadata // import "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the component type used in configurations.
	Type = component.MustNewType("tee")
	// ScopeName is the instrumentation scope of the connector's own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector"
)

const (
	// TracesToTracesStability is the stability of the traces → traces route.
	TracesToTracesStability = component.StabilityLevelAlpha
)
