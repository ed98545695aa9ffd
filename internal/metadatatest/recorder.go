package metadatatest // import "github.com/otelcol-llm/otelcol-llm/internal/metadatatest"

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Kind is the Meter method that created an instrument, e.g.
// "Int64Counter" or "Float64ObservableGauge".
type Kind string

// The instrument kinds of the OpenTelemetry metric API.
const (
	Int64Counter                   Kind = "Int64Counter"
	Int64UpDownCounter             Kind = "Int64UpDownCounter"
	Int64Histogram                 Kind = "Int64Histogram"
	Int64Gauge                     Kind = "Int64Gauge"
	Int64ObservableCounter         Kind = "Int64ObservableCounter"
	Int64ObservableUpDownCounter   Kind = "Int64ObservableUpDownCounter"
	Int64ObservableGauge           Kind = "Int64ObservableGauge"
	Float64Counter                 Kind = "Float64Counter"
	Float64UpDownCounter           Kind = "Float64UpDownCounter"
	Float64Histogram               Kind = "Float64Histogram"
	Float64Gauge                   Kind = "Float64Gauge"
	Float64ObservableCounter       Kind = "Float64ObservableCounter"
	Float64ObservableUpDownCounter Kind = "Float64ObservableUpDownCounter"
	Float64ObservableGauge         Kind = "Float64ObservableGauge"
)

// shape is how metadata.yaml (the mdatagen schema) describes a kind.
type shape struct {
	typ       string // sum, gauge or histogram
	valueType string // int or double
	monotonic bool   // sums only
	async     bool   // observable instruments
}

var shapes = map[Kind]shape{
	Int64Counter:                   {"sum", "int", true, false},
	Int64UpDownCounter:             {"sum", "int", false, false},
	Int64Histogram:                 {"histogram", "int", false, false},
	Int64Gauge:                     {"gauge", "int", false, false},
	Int64ObservableCounter:         {"sum", "int", true, true},
	Int64ObservableUpDownCounter:   {"sum", "int", false, true},
	Int64ObservableGauge:           {"gauge", "int", false, true},
	Float64Counter:                 {"sum", "double", true, false},
	Float64UpDownCounter:           {"sum", "double", false, false},
	Float64Histogram:               {"histogram", "double", false, false},
	Float64Gauge:                   {"gauge", "double", false, false},
	Float64ObservableCounter:       {"sum", "double", true, true},
	Float64ObservableUpDownCounter: {"sum", "double", false, true},
	Float64ObservableGauge:         {"gauge", "double", false, true},
}

// Instrument is one instrument a component created.
type Instrument struct {
	Scope       string // the name passed to MeterProvider.Meter
	Name        string
	Kind        Kind
	Description string
	Unit        string
	// BucketBoundaries are the explicit boundaries a histogram was created
	// with (nil for the SDK's defaults and for other kinds).
	BucketBoundaries []float64
}

func (i Instrument) same(o Instrument) bool {
	return i.Kind == o.Kind && i.Description == o.Description && i.Unit == o.Unit &&
		slices.Equal(i.BucketBoundaries, o.BucketBoundaries)
}

func (i Instrument) String() string {
	return fmt.Sprintf("%s %s (unit %q, description %q)", i.Kind, i.Name, i.Unit, i.Description)
}

// Recorder is a metric.MeterProvider that records every instrument created
// on its meters and hands the call on to the MeterProvider it wraps, so the
// component works as it would on that provider. It is safe for concurrent
// use.
type Recorder struct {
	metric.MeterProvider // the wrapped provider

	mu          sync.Mutex
	instruments map[[2]string][]Instrument // {scope, name} → its distinct definitions
}

// NewRecorder wraps delegate (a no-op provider when nil).
func NewRecorder(delegate metric.MeterProvider) *Recorder {
	if delegate == nil {
		delegate = noop.NewMeterProvider()
	}
	return &Recorder{MeterProvider: delegate, instruments: map[[2]string][]Instrument{}}
}

// Record returns set with its MeterProvider wrapped in a Recorder, and the
// Recorder. Pass an SDK-backed set (componenttest.NewTelemetry) to also read
// the values the component records.
func Record(set component.TelemetrySettings) (component.TelemetrySettings, *Recorder) {
	r := NewRecorder(set.MeterProvider)
	set.MeterProvider = r
	return set, r
}

// Meter returns the wrapped provider's meter, wrapped to record the
// instruments created on it.
func (r *Recorder) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return &meter{Meter: r.MeterProvider.Meter(name, opts...), scope: name, r: r}
}

func (r *Recorder) add(i Instrument) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]string{i.Scope, i.Name}
	for _, prev := range r.instruments[k] {
		if prev.same(i) {
			return
		}
	}
	r.instruments[k] = append(r.instruments[k], i)
}

// Instruments returns the instruments created on meters named scope (every
// scope when scope is empty), sorted by name. An instrument created several
// times with one definition appears once; one created with different kinds,
// units, descriptions or buckets appears once per definition, which
// CheckSelfMetrics reports.
func (r *Recorder) Instruments(scope string) []Instrument {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Instrument
	for k, defs := range r.instruments {
		if scope == "" || k[0] == scope {
			out = append(out, defs...)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Name != out[b].Name {
			return out[a].Name < out[b].Name
		}
		return out[a].Scope < out[b].Scope
	})
	return out
}

// Names returns the distinct names of Instruments(scope), sorted.
func (r *Recorder) Names(scope string) []string {
	var names []string
	for _, i := range r.Instruments(scope) {
		names = append(names, i.Name)
	}
	return slices.Compact(names)
}

// Scopes returns the names of the meters instruments were created on,
// sorted: the component's own scope and those of the collector helpers
// (receiverhelper, processorhelper, exporterhelper, scraperhelper) it uses.
func (r *Recorder) Scopes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var scopes []string
	for k := range r.instruments {
		scopes = append(scopes, k[0])
	}
	sort.Strings(scopes)
	return slices.Compact(scopes)
}

// meter records each instrument created and delegates everything,
// RegisterCallback included, to the wrapped meter: the instruments it
// returns are the wrapped meter's own.
type meter struct {
	metric.Meter
	scope string
	r     *Recorder
}

func (m *meter) rec(name string, k Kind, desc, unit string, buckets []float64) {
	m.r.add(Instrument{Scope: m.scope, Name: name, Kind: k, Description: desc, Unit: unit,
		BucketBoundaries: slices.Clone(buckets)})
}

func (m *meter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c := metric.NewInt64CounterConfig(opts...)
	m.rec(name, Int64Counter, c.Description(), c.Unit(), nil)
	return m.Meter.Int64Counter(name, opts...)
}

func (m *meter) Int64UpDownCounter(name string, opts ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	c := metric.NewInt64UpDownCounterConfig(opts...)
	m.rec(name, Int64UpDownCounter, c.Description(), c.Unit(), nil)
	return m.Meter.Int64UpDownCounter(name, opts...)
}

func (m *meter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	c := metric.NewInt64HistogramConfig(opts...)
	m.rec(name, Int64Histogram, c.Description(), c.Unit(), c.ExplicitBucketBoundaries())
	return m.Meter.Int64Histogram(name, opts...)
}

func (m *meter) Int64Gauge(name string, opts ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	c := metric.NewInt64GaugeConfig(opts...)
	m.rec(name, Int64Gauge, c.Description(), c.Unit(), nil)
	return m.Meter.Int64Gauge(name, opts...)
}

func (m *meter) Int64ObservableCounter(name string, opts ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	c := metric.NewInt64ObservableCounterConfig(opts...)
	m.rec(name, Int64ObservableCounter, c.Description(), c.Unit(), nil)
	return m.Meter.Int64ObservableCounter(name, opts...)
}

func (m *meter) Int64ObservableUpDownCounter(name string, opts ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	c := metric.NewInt64ObservableUpDownCounterConfig(opts...)
	m.rec(name, Int64ObservableUpDownCounter, c.Description(), c.Unit(), nil)
	return m.Meter.Int64ObservableUpDownCounter(name, opts...)
}

func (m *meter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	c := metric.NewInt64ObservableGaugeConfig(opts...)
	m.rec(name, Int64ObservableGauge, c.Description(), c.Unit(), nil)
	return m.Meter.Int64ObservableGauge(name, opts...)
}

func (m *meter) Float64Counter(name string, opts ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	c := metric.NewFloat64CounterConfig(opts...)
	m.rec(name, Float64Counter, c.Description(), c.Unit(), nil)
	return m.Meter.Float64Counter(name, opts...)
}

func (m *meter) Float64UpDownCounter(name string, opts ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	c := metric.NewFloat64UpDownCounterConfig(opts...)
	m.rec(name, Float64UpDownCounter, c.Description(), c.Unit(), nil)
	return m.Meter.Float64UpDownCounter(name, opts...)
}

func (m *meter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	c := metric.NewFloat64HistogramConfig(opts...)
	m.rec(name, Float64Histogram, c.Description(), c.Unit(), c.ExplicitBucketBoundaries())
	return m.Meter.Float64Histogram(name, opts...)
}

func (m *meter) Float64Gauge(name string, opts ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	c := metric.NewFloat64GaugeConfig(opts...)
	m.rec(name, Float64Gauge, c.Description(), c.Unit(), nil)
	return m.Meter.Float64Gauge(name, opts...)
}

func (m *meter) Float64ObservableCounter(name string, opts ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	c := metric.NewFloat64ObservableCounterConfig(opts...)
	m.rec(name, Float64ObservableCounter, c.Description(), c.Unit(), nil)
	return m.Meter.Float64ObservableCounter(name, opts...)
}

func (m *meter) Float64ObservableUpDownCounter(name string, opts ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	c := metric.NewFloat64ObservableUpDownCounterConfig(opts...)
	m.rec(name, Float64ObservableUpDownCounter, c.Description(), c.Unit(), nil)
	return m.Meter.Float64ObservableUpDownCounter(name, opts...)
}

func (m *meter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	c := metric.NewFloat64ObservableGaugeConfig(opts...)
	m.rec(name, Float64ObservableGauge, c.Description(), c.Unit(), nil)
	return m.Meter.Float64ObservableGauge(name, opts...)
}

// CollectedNames collects reader once (running the callbacks of observable
// instruments) and returns the names of the metrics of scope it holds,
// sorted. Every one of them must be among the Recorder's Names(scope): a
// name collected but not recorded is an instrument the Recorder missed.
func CollectedNames(t testing.TB, reader *sdkmetric.ManualReader, scope string) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var names []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scope {
			continue
		}
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}
