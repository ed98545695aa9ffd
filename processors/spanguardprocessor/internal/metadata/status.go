// Package metadata holds the span_guard processor's identity: its component
// type, instrumentation scope and stability. It is written by hand and mirrors
// ../../metadata.yaml.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type users write in their configuration.
	Type = component.MustNewType("span_guard")
	// ScopeName is the instrumentation scope of the processor's own telemetry
	// and of the summary spans it emits.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"
)

const (
	// TracesStability is the stability of the traces signal.
	TracesStability = component.StabilityLevelAlpha
)
