// Package selftel creates a component's own instruments (its self-metrics)
// on the meter of its TelemetrySettings, collecting every creation error so
// that a component builds its whole telemetry struct in one expression and
// checks one error at the end.
package selftel // import "github.com/otelcol-llm/otelcol-llm/internal/selftel"

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

// Builder creates instruments on one meter.
type Builder struct {
	m    metric.Meter
	errs []error
}

// New returns a Builder on the meter named scope (the component's
// metadata.ScopeName) of set.
func New(set component.TelemetrySettings, scope string) *Builder {
	return &Builder{m: set.MeterProvider.Meter(scope)}
}

// Counter is an Int64Counter with a unit and a description.
func (b *Builder) Counter(name, unit, desc string) metric.Int64Counter {
	c, err := b.m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return c
}

// Gauge is an Int64Gauge with a unit and a description.
func (b *Builder) Gauge(name, unit, desc string) metric.Int64Gauge {
	g, err := b.m.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return g
}

// Histogram is a Float64Histogram with a unit, a description and explicit
// bucket boundaries (the SDK's defaults when none are given).
func (b *Builder) Histogram(name, unit, desc string, bounds ...float64) metric.Float64Histogram {
	opts := []metric.Float64HistogramOption{metric.WithUnit(unit), metric.WithDescription(desc)}
	if len(bounds) > 0 {
		opts = append(opts, metric.WithExplicitBucketBoundaries(bounds...))
	}
	h, err := b.m.Float64Histogram(name, opts...)
	b.errs = append(b.errs, err)
	return h
}

// IntHistogram is an Int64Histogram with a unit, a description and
// explicit bucket boundaries (the SDK's defaults when none are given).
func (b *Builder) IntHistogram(name, unit, desc string, bounds ...float64) metric.Int64Histogram {
	opts := []metric.Int64HistogramOption{metric.WithUnit(unit), metric.WithDescription(desc)}
	if len(bounds) > 0 {
		opts = append(opts, metric.WithExplicitBucketBoundaries(bounds...))
	}
	h, err := b.m.Int64Histogram(name, opts...)
	b.errs = append(b.errs, err)
	return h
}

// FloatCounter is a Float64Counter with a unit and a description.
func (b *Builder) FloatCounter(name, unit, desc string) metric.Float64Counter {
	c, err := b.m.Float64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return c
}

// FloatGauge is a Float64Gauge with a unit and a description.
func (b *Builder) FloatGauge(name, unit, desc string) metric.Float64Gauge {
	g, err := b.m.Float64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return g
}

// UpDownCounter is an Int64UpDownCounter with a unit and a description.
func (b *Builder) UpDownCounter(name, unit, desc string) metric.Int64UpDownCounter {
	c, err := b.m.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return c
}

// ObservableGauge is an Int64ObservableGauge with a unit and a
// description; its values come from a callback registered on Meter.
func (b *Builder) ObservableGauge(name, unit, desc string) metric.Int64ObservableGauge {
	g, err := b.m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return g
}

// ObservableCounter is an Int64ObservableCounter with a unit and a
// description; its values come from a callback registered on Meter.
func (b *Builder) ObservableCounter(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := b.m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	return c
}

// Meter is the meter the instruments are created on, for registering the
// callbacks of observable ones.
func (b *Builder) Meter() metric.Meter { return b.m }

// Err is every creation error so far, joined; nil when there was none.
func (b *Builder) Err() error { return errors.Join(b.errs...) }
