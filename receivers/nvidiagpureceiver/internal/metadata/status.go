// Package metadata holds the nvidia_gpu receiver's identity: its component
// type, instrumentation scope and stability. It is written by hand and mirrors
// ../../metadata.yaml.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type users write in their configuration.
	Type = component.MustNewType("nvidia_gpu")
	// ScopeName is the instrumentation scope of the metrics and logs the
	// receiver emits and of its own telemetry.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"
)

const (
	// MetricsStability is the stability of the metrics signal.
	MetricsStability = component.StabilityLevelAlpha
	// LogsStability is the stability of the logs signal (XID and other
	// critical NVML events).
	LogsStability = component.StabilityLevelAlpha
)
