package metadatatest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var exampleType = component.MustNewType("example")

var exampleIdentity = Identity{
	Type:  exampleType,
	Class: Receiver,
	Stability: map[string]component.StabilityLevel{
		"traces":  component.StabilityLevelAlpha,
		"metrics": component.StabilityLevelAlpha,
		"logs":    component.StabilityLevelDevelopment,
	},
}

// exampleInstruments are what the fixture testdata/good/metadata.yaml documents.
func exampleInstruments(t *testing.T, m metric.Meter) {
	t.Helper()
	_, err := m.Int64Counter("otelcol_example_requests", metric.WithDescription("Requests handled, by outcome."), metric.WithUnit("{request}"))
	require.NoError(t, err)
	_, err = m.Int64UpDownCounter("otelcol_example_in_flight", metric.WithDescription("Requests being handled: now."), metric.WithUnit("{request}"))
	require.NoError(t, err)
	_, err = m.Float64Histogram("otelcol_example_latency", metric.WithDescription("Time to handle a request."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.1, 1, 10))
	require.NoError(t, err)
	_, err = m.Int64ObservableGauge("otelcol_example_queue", metric.WithDescription("Requests waiting."), metric.WithUnit("{request}"))
	require.NoError(t, err)
}

func TestMetadataIdentity(t *testing.T) {
	md := MustLoad(t, "testdata/good")
	assert.Empty(t, md.IdentityProblems(exampleIdentity))
	CheckMetadata(t, "testdata/good", exampleIdentity)

	wrong := Identity{
		Type:  component.MustNewType("other"),
		Class: Processor,
		Stability: map[string]component.StabilityLevel{
			"traces":   component.StabilityLevelBeta,
			"metrics":  component.StabilityLevelAlpha,
			"profiles": component.StabilityLevelDevelopment,
		},
	}
	problems := strings.Join(md.IdentityProblems(wrong), "\n")
	for _, want := range []string{
		`type: metadata.yaml says "example", internal/metadata says "other"`,
		`status.class: metadata.yaml says "receiver", the component is a processor`,
		`stability of "traces": metadata.yaml says alpha, internal/metadata says beta`,
		`metadata.yaml lists no "profiles"`,
		`metadata.yaml lists "logs" (development), internal/metadata does not`,
	} {
		assert.Contains(t, problems, want)
	}
	assert.NotContains(t, problems, `"metrics"`)
}

func TestMetadataStrictMetricEntries(t *testing.T) {
	_, err := Load("testdata/strict")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "otelcol_example_spans")
	assert.Contains(t, err.Error(), "type")
	_, err = Load("testdata/missing")
	require.Error(t, err)
}

func TestMetadataSelfMetrics(t *testing.T) {
	set, rec := Record(componenttest.NewNopTelemetrySettings())
	m := set.MeterProvider.Meter("scope/example")
	exampleInstruments(t, m)
	// Another scope (a collector helper's) is not the component's.
	_, err := set.MeterProvider.Meter("scope/helper").Int64Counter("otelcol_receiver_accepted_spans")
	require.NoError(t, err)

	assert.Equal(t, []string{"scope/example", "scope/helper"}, rec.Scopes())
	assert.Equal(t, []string{"otelcol_example_in_flight", "otelcol_example_latency", "otelcol_example_queue", "otelcol_example_requests"},
		rec.Names("scope/example"))
	md := MustLoad(t, "testdata/good")
	assert.Empty(t, md.SelfMetricsProblems(rec.Instruments("scope/example")))
	CheckSelfMetrics(t, "testdata/good", rec.Instruments("scope/example"))
	CheckSelfMetricNames(t, "testdata/good", rec.Names("scope/example"))

	problems := strings.Join(md.SelfMetricsProblems(rec.Instruments("")), "\n")
	assert.Contains(t, problems, "telemetry.metrics lacks otelcol_receiver_accepted_spans")
	assert.Contains(t, problems, "the component's own metrics are named otelcol_example_*")
}

func TestMetadataSelfMetricsDisagreements(t *testing.T) {
	_, rec := Record(componenttest.NewNopTelemetrySettings())
	m := rec.Meter("s")
	_, err := m.Int64Counter("otelcol_example_requests", metric.WithDescription("Requests handled."), metric.WithUnit("{req}"))
	require.NoError(t, err)
	_, err = m.Float64UpDownCounter("otelcol_example_in_flight", metric.WithDescription("Requests being handled: now."), metric.WithUnit("{request}"))
	require.NoError(t, err)
	_, err = m.Float64Histogram("otelcol_example_latency", metric.WithDescription("Time to handle a request."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(1, 10))
	require.NoError(t, err)
	_, err = m.Float64Gauge("otelcol_example_new", metric.WithDescription("New: a gauge."), metric.WithUnit("1"))
	require.NoError(t, err)
	// Created twice, differently.
	_, err = m.Int64Counter("otelcol_example_twice", metric.WithUnit("1"))
	require.NoError(t, err)
	_, err = m.Int64Counter("otelcol_example_twice", metric.WithUnit("{x}"))
	require.NoError(t, err)
	// Created twice, alike: recorded once.
	for range 2 {
		_, err = m.Int64Counter("otelcol_example_alike")
		require.NoError(t, err)
	}

	md := MustLoad(t, "testdata/good")
	problems := strings.Join(md.SelfMetricsProblems(rec.Instruments("s")), "\n")
	for _, want := range []string{
		"otelcol_example_requests: description",
		`otelcol_example_requests: unit: metadata.yaml says "{request}", the code "{req}"`,
		"otelcol_example_in_flight: metadata.yaml says sum: {monotonic: false, value_type: int}, the code's Float64UpDownCounter is sum: {monotonic: false, value_type: double}",
		"otelcol_example_latency: bucket_boundaries",
		"telemetry.metrics lacks otelcol_example_new, which the code creates (Float64Gauge); add:\n" +
			"    otelcol_example_new:\n      description: \"New: a gauge.\"\n      unit: \"1\"\n      gauge: {value_type: double}\n",
		"telemetry.metrics lists otelcol_example_queue, which the code does not create",
		"otelcol_example_twice is created twice, differently",
	} {
		assert.Contains(t, problems, want)
	}
	assert.Equal(t, 1, strings.Count(problems, "lacks otelcol_example_alike"), problems)
	assert.NotContains(t, problems, "otelcol_example_alike is created twice")
}

func TestRecorderDelegates(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set, rec := Record(tt.NewTelemetrySettings())
	m := set.MeterProvider.Meter("s")

	c, err := m.Int64Counter("c")
	require.NoError(t, err)
	c.Add(context.Background(), 3)
	g, err := m.Int64ObservableGauge("g")
	require.NoError(t, err)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(g, 7)
		return nil
	}, g)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, reg.Unregister()) })
	for _, k := range []Kind{Int64UpDownCounter, Int64Histogram, Float64Histogram, Int64Gauge, Int64ObservableCounter, Int64ObservableUpDownCounter,
		Float64Counter, Float64UpDownCounter, Float64Gauge, Float64ObservableCounter, Float64ObservableUpDownCounter, Float64ObservableGauge} {
		createKind(t, m, k)
	}

	assert.Equal(t, []string{"c", "g"}, CollectedNames(t, tt.Reader, "s"))
	assert.Empty(t, CollectedNames(t, tt.Reader, "other"))
	got, err := tt.GetMetric("c")
	require.NoError(t, err)
	assert.Equal(t, "c", got.Name)
	got, err = tt.GetMetric("g")
	require.NoError(t, err)
	assert.Equal(t, "g", got.Name)

	kinds := map[string]Kind{}
	for _, in := range rec.Instruments("s") {
		kinds[in.Name] = in.Kind
	}
	assert.Len(t, kinds, len(shapes))
	for name, k := range kinds {
		if name != "c" && name != "g" {
			assert.Equal(t, string(k), name)
		}
	}
}

func createKind(t *testing.T, m metric.Meter, k Kind) {
	t.Helper()
	name := string(k)
	var err error
	switch k {
	case Int64UpDownCounter:
		_, err = m.Int64UpDownCounter(name)
	case Int64Histogram:
		_, err = m.Int64Histogram(name)
	case Int64Gauge:
		_, err = m.Int64Gauge(name)
	case Int64ObservableCounter:
		_, err = m.Int64ObservableCounter(name)
	case Int64ObservableUpDownCounter:
		_, err = m.Int64ObservableUpDownCounter(name)
	case Float64Counter:
		_, err = m.Float64Counter(name)
	case Float64UpDownCounter:
		_, err = m.Float64UpDownCounter(name)
	case Float64Histogram:
		_, err = m.Float64Histogram(name)
	case Float64Gauge:
		_, err = m.Float64Gauge(name)
	case Float64ObservableCounter:
		_, err = m.Float64ObservableCounter(name)
	case Float64ObservableUpDownCounter:
		_, err = m.Float64ObservableUpDownCounter(name)
	case Float64ObservableGauge:
		_, err = m.Float64ObservableGauge(name)
	default:
		t.Fatalf("kind %s", k)
	}
	require.NoError(t, err)
}

func TestMetadataFactory(t *testing.T) {
	noTraces := func(context.Context, receiver.Settings, component.Config, consumer.Traces) (receiver.Traces, error) {
		return nil, nil
	}
	noMetrics := func(context.Context, receiver.Settings, component.Config, consumer.Metrics) (receiver.Metrics, error) {
		return nil, nil
	}
	noLogs := func(context.Context, receiver.Settings, component.Config, consumer.Logs) (receiver.Logs, error) {
		return nil, nil
	}
	cfg := func() component.Config { return struct{}{} }
	f := receiver.NewFactory(exampleType, cfg,
		receiver.WithTraces(noTraces, component.StabilityLevelAlpha),
		receiver.WithMetrics(noMetrics, component.StabilityLevelAlpha),
		receiver.WithLogs(noLogs, component.StabilityLevelDevelopment))
	assert.Equal(t, Receiver, FactoryClass(f))
	assert.Equal(t, exampleIdentity.Stability, FactoryStability(f))
	assert.Empty(t, FactoryProblems(f, exampleIdentity))
	CheckFactory(t, f, exampleIdentity)

	partial := receiver.NewFactory(exampleType, cfg, receiver.WithTraces(noTraces, component.StabilityLevelBeta))
	problems := strings.Join(FactoryProblems(partial, exampleIdentity), "\n")
	assert.Contains(t, problems, `stability of "traces": the factory says beta, internal/metadata says alpha`)
	assert.Contains(t, problems, `the factory lists no "logs"`)

	conn := connector.NewFactory(exampleType, cfg, connector.WithTracesToMetrics(
		func(context.Context, connector.Settings, component.Config, consumer.Metrics) (connector.Traces, error) {
			return nil, nil
		}, component.StabilityLevelAlpha))
	assert.Equal(t, Connector, FactoryClass(conn))
	assert.Equal(t, map[string]component.StabilityLevel{"traces_to_metrics": component.StabilityLevelAlpha}, FactoryStability(conn))

	ext := extension.NewFactory(exampleType, cfg,
		func(context.Context, extension.Settings, component.Config) (extension.Extension, error) {
			return nil, nil
		},
		component.StabilityLevelDevelopment)
	assert.Equal(t, Extension, FactoryClass(ext))
	assert.Equal(t, map[string]component.StabilityLevel{"extension": component.StabilityLevelDevelopment}, FactoryStability(ext))
}
