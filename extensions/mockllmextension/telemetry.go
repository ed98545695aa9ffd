package mockllmextension // import "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
)

// telemetry reports the running server's counters on the component's
// meter. The instruments are asynchronous: each collection reads the
// server's Stats, so serving a request costs nothing extra.
type telemetry struct {
	meter metric.Meter

	requests, rejected, faults, gone, cut, completed metric.Int64ObservableCounter
	running, queued, streams                         metric.Int64ObservableGauge

	queueFull metric.MeasurementOption
	byFault   map[string]metric.MeasurementOption

	mu  sync.Mutex
	reg metric.Registration
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	counter, gauge := b.ObservableCounter, b.ObservableGauge
	t := &telemetry{
		meter:     b.Meter(),
		requests:  counter("otelcol_mock_llm_requests", "{request}", "Requests received (completions, embeddings)."),
		rejected:  counter("otelcol_mock_llm_rejected", "{request}", "Completion requests refused with a 503, by reason (queue_full)."),
		faults:    counter("otelcol_mock_llm_faults", "{request}", "Requests given an injected fault, by fault kind."),
		gone:      counter("otelcol_mock_llm_client_gone", "{request}", "Completion requests whose client went away before the end (queued or streaming)."),
		cut:       counter("otelcol_mock_llm_cut_bodies", "{request}", "Completion requests whose client went before their body was complete (not served, not counted as requests)."),
		completed: counter("otelcol_mock_llm_completed", "{request}", "Completion requests answered to the end."),
		running:   gauge("otelcol_mock_llm_running", "{request}", "Completion requests holding an engine slot now."),
		queued:    gauge("otelcol_mock_llm_queued", "{request}", "Completion requests waiting for an engine slot now."),
		streams:   gauge("otelcol_mock_llm_active_streams", "{stream}", "Streamed responses being sent now."),
		queueFull: metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", "queue_full"))),
		byFault:   map[string]metric.MeasurementOption{},
	}
	for _, f := range mockllm.Faults {
		t.byFault[f] = metric.WithAttributeSet(attribute.NewSet(attribute.String("fault", f)))
	}
	return t, b.Err()
}

// observe reports srv's counters until stop.
func (t *telemetry) observe(srv *mockllm.Server) error {
	reg, err := t.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := srv.Stats()
		o.ObserveInt64(t.requests, st.Requests)
		o.ObserveInt64(t.rejected, st.Rejected, t.queueFull)
		for f, n := range srv.FaultCounts() {
			if n > 0 {
				o.ObserveInt64(t.faults, n, t.byFault[f])
			}
		}
		o.ObserveInt64(t.gone, st.ClientGone)
		o.ObserveInt64(t.cut, st.CutBodies)
		o.ObserveInt64(t.completed, st.Completed)
		o.ObserveInt64(t.running, st.Running)
		o.ObserveInt64(t.queued, st.Queued)
		o.ObserveInt64(t.streams, st.ActiveStreams)
		return nil
	}, t.requests, t.rejected, t.faults, t.gone, t.cut, t.completed, t.running, t.queued, t.streams)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.reg = reg
	t.mu.Unlock()
	return nil
}

func (t *telemetry) stop() error {
	t.mu.Lock()
	reg := t.reg
	t.reg = nil
	t.mu.Unlock()
	if reg == nil {
		return nil
	}
	return reg.Unregister()
}
