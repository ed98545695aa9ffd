// Package metadatatest keeps a component's hand-written metadata.yaml honest.
// mdatagen is not used in this project, so metadata.yaml (documentation) and
// internal/metadata/status.go (code) are both written by hand; this package
// is what checks that they, the factory and the instruments the component
// really creates say the same thing.
//
// A component's metadata_test.go typically does
//
//	id := metadatatest.Identity{Type: metadata.Type, Class: metadatatest.Receiver,
//		Stability: map[string]component.StabilityLevel{"traces": metadata.TracesStability}}
//	metadatatest.CheckMetadata(t, ".", id)      // metadata.yaml ↔ internal/metadata
//	metadatatest.CheckFactory(t, NewFactory(), id) // factory ↔ internal/metadata
//
//	set, rec := metadatatest.Record(componenttest.NewNopTelemetrySettings())
//	// ... create (and, where instruments are made at Start, start) the
//	// component with set, once per mode ...
//	metadatatest.CheckSelfMetrics(t, ".", rec.Instruments(metadata.ScopeName))
//
// Record wraps a MeterProvider so that every instrument created on it is
// recorded with its scope, kind, unit, description and histogram buckets,
// whether or not it is ever recorded to, observable instruments as well as
// synchronous ones; calls are handed on to the wrapped provider. With an
// SDK provider behind it (componenttest.NewTelemetry), CollectedNames shows
// what a collection exports, which must be among the recorded names.
// StartShutdown starts and stops components whose instruments are made at
// Start.
//
// The package is imported by tests only; it may use testing and testify.
package metadatatest // import "github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
