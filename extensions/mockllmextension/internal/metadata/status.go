// Package metadata holds the mock_llm extension's identity: its component
// type, instrumentation scope and stability level. It is written by hand and
// mirrors ../../metadata.yaml.
package metadata // import "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the component type used in configurations.
	Type = component.MustNewType("mock_llm")
	// ScopeName is the instrumentation scope of the extension's own
	// telemetry and of the server spans it records.
	ScopeName = "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension"
)

const (
	// ExtensionStability is the stability of the extension.
	ExtensionStability = component.StabilityLevelDevelopment
)
