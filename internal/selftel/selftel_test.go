package selftel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestBuilderInstruments(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	b := New(tel.NewTelemetrySettings(), "example")
	c := b.Counter("otelcol_example_items", "{item}", "Items seen.")
	g := b.Gauge("otelcol_example_devices", "{device}", "Devices found.")
	h := b.Histogram("otelcol_example_duration", "s", "Time taken.", 0.1, 1)
	require.NoError(t, b.Err())

	ctx := context.Background()
	c.Add(ctx, 3)
	g.Record(ctx, 2)
	h.Record(ctx, 0.5)

	m, err := tel.GetMetric("otelcol_example_items")
	require.NoError(t, err)
	assert.Equal(t, "{item}", m.Unit)
	assert.Equal(t, "Items seen.", m.Description)
	assert.EqualValues(t, 3, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
	m, err = tel.GetMetric("otelcol_example_devices")
	require.NoError(t, err)
	assert.EqualValues(t, 2, m.Data.(metricdata.Gauge[int64]).DataPoints[0].Value)
	m, err = tel.GetMetric("otelcol_example_duration")
	require.NoError(t, err)
	hp := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
	assert.Equal(t, []float64{0.1, 1}, hp.Bounds)
	assert.Equal(t, []uint64{0, 1, 0}, hp.BucketCounts)
}

// TestBuilderCollectsErrors: an instrument the SDK refuses (an invalid
// name) is reported by Err, next to the valid ones.
func TestBuilderCollectsErrors(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	b := New(tel.NewTelemetrySettings(), "example")
	b.Counter("otelcol_example_ok", "1", "A valid instrument.")
	require.NoError(t, b.Err())
	b.Counter("bad name with spaces", "1", "An invalid instrument name.")
	assert.ErrorContains(t, b.Err(), "bad name with spaces")
}
