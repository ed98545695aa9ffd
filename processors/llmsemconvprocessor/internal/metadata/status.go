// Package metadata holds the component type, instrumentation scope and
// stability levels of the llm_semconv processor. It is written by hand (the
// collector's mdatagen is not used in this project); metadata.yaml in the
// component folder documents the same facts.
package metadata // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type used in collector configurations.
	Type = component.MustNewType("llm_semconv")
	// ScopeName is the instrumentation scope of the processor's own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"
)

const (
	// TracesStability is the stability level of the traces signal.
	TracesStability = component.StabilityLevelAlpha
	// LogsStability is the stability level of the logs signal.
	LogsStability = component.StabilityLevelAlpha
)
