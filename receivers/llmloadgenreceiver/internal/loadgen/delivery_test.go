package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
)

// newTestDeliverer is a deliverer on a recording meter with a 1 ms backoff
// doubling up to 4 ms.
func newTestDeliverer(t *testing.T, retries int) (*Deliverer, *componenttest.Telemetry) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	lt, err := NewTelemetry(tel.NewTelemetrySettings(), config.ModeSynthetic)
	require.NoError(t, err)
	bp := config.BackpressureConfig{InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
	return &Deliverer{Backpressure: bp, Tel: lt, Logger: zap.NewNop(), Retries: retries}, tel
}

// refuse returns a consume function that fails n times with err, then
// accepts; *calls counts its calls.
func refuse(n int, err error, calls *int) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= n {
			return err
		}
		return nil
	}
}

func TestDeliverRetriesUntilAccepted(t *testing.T) {
	d, tel := newTestDeliverer(t, 0)
	calls := 0
	ok, waited := d.Deliver(context.Background(), context.Background(), SignalTraces, 5, refuse(4, errors.New("memory limit"), &calls))
	require.True(t, ok)
	assert.Equal(t, 5, calls)
	assert.Equal(t, (1+2+4+4)*time.Millisecond, waited, "backoff doubles up to max_backoff")
	assert.EqualValues(t, 5, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_emitted", attribute.String("signal", "traces")))
	assert.EqualValues(t, 4*5, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_refused", attribute.String("signal", "traces")))
	m, err := tel.GetMetric("otelcol_llm_loadgen_backoff")
	require.NoError(t, err)
	assert.InDelta(t, 0.011, m.Data.(metricdata.Sum[float64]).DataPoints[0].Value, 1e-9)
}

func TestDeliverDropReasons(t *testing.T) {
	retryable := errors.New("memory limit")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		retries int
		stop    context.Context
		err     error
		calls   int
	}{
		{DropRetriesExhausted, LiveRetries, context.Background(), retryable, LiveRetries + 1},
		{DropPermanent, 0, context.Background(), consumererror.NewPermanent(errors.New("bad data")), 1},
		{DropShutdown, 0, cancelled, retryable, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, tel := newTestDeliverer(t, tc.retries)
			calls := 0
			ok, _ := d.Deliver(context.Background(), tc.stop, SignalMetrics, 3, refuse(1<<30, tc.err, &calls))
			require.False(t, ok)
			assert.Equal(t, tc.calls, calls, "sends of the batch")
			assert.EqualValues(t, 3, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_dropped",
				attribute.String("signal", "metrics"), attribute.String("reason", tc.name)))
		})
	}
}

// TestDeliverStopEndsTheWait: a batch waiting out its backoff is dropped
// (reason shutdown) as soon as stop is done, not after the wait.
func TestDeliverStopEndsTheWait(t *testing.T) {
	d, tel := newTestDeliverer(t, 0)
	d.Backpressure = config.BackpressureConfig{InitialBackoff: time.Hour, MaxBackoff: time.Hour}
	stop, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan bool)
	go func() {
		ok, _ := d.Deliver(context.Background(), stop, SignalLogs, 2, refuse(1<<30, errors.New("busy"), &calls))
		done <- ok
	}()
	cancel()
	select {
	case ok := <-done:
		assert.False(t, ok)
	case <-time.After(time.Minute):
		t.Fatal("deliver waited out its backoff after stop")
	}
	assert.EqualValues(t, 2, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_dropped",
		attribute.String("signal", "logs"), attribute.String("reason", DropShutdown)))
}
