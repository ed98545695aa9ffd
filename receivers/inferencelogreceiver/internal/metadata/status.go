// Package metadata holds the inference_log receiver's identity: its component
// type, instrumentation scope and stability. It is written by hand and mirrors
// ../../metadata.yaml.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type users write in their configuration.
	Type = component.MustNewType("inference_log")
	// ScopeName is the instrumentation scope of the logs and metrics the
	// receiver emits and of its own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"
)

const (
	// LogsStability is the stability of the logs signal.
	LogsStability = component.StabilityLevelAlpha
	// MetricsStability is the stability of the metrics derived from stats lines.
	MetricsStability = component.StabilityLevelAlpha
)
