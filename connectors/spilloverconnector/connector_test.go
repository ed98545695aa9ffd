package spilloverconnector

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
)

var (
	primaryID = pipeline.NewIDWithName(pipeline.SignalTraces, "upstream")
	spillID   = pipeline.NewIDWithName(pipeline.SignalTraces, "spill")
)

// backend is a primary pipeline that takes batches while up, and refuses
// them with a retryable (or, when permanent is set, a permanent) error
// while down.
type backend struct {
	consumertest.TracesSink
	down, permanent atomic.Bool
	calls           atomic.Int64
}

func (b *backend) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	b.calls.Add(1)
	switch {
	case b.down.Load() && b.permanent.Load():
		return consumererror.NewPermanent(errors.New("rejected as invalid"))
	case b.down.Load():
		return errors.New("connection refused")
	}
	return b.TracesSink.ConsumeTraces(ctx, td)
}

// refusing is a spill pipeline whose queue is full.
type refusing struct{ consumertest.TracesSink }

func (*refusing) ConsumeTraces(context.Context, ptrace.Traces) error {
	return errors.New("sending queue is full")
}

type fixture struct {
	c     connector.Traces
	conn  *spillover
	tel   *componenttest.Telemetry
	now   *time.Time
	prim  *backend
	spill *consumertest.TracesSink
}

func newFixture(t *testing.T, spill consumer.Traces) *fixture {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	prim := &backend{}
	if spill == nil {
		spill = new(consumertest.TracesSink)
	}
	router := connector.NewTracesRouter(map[pipeline.ID]consumer.Traces{primaryID: prim, spillID: spill})
	cfg := createDefaultConfig().(*Config)
	cfg.Primary, cfg.Spill = primaryID, spillID
	c, err := NewFactory().CreateTracesToTraces(context.Background(), set, cfg, router)
	require.NoError(t, err)
	conn := c.(*spillover)
	now := time.Unix(1_700_000_000, 0)
	conn.now = func() time.Time { return now }
	sink, _ := spill.(*consumertest.TracesSink)
	return &fixture{c: c, conn: conn, tel: tel, now: &now, prim: prim, spill: sink}
}

func (f *fixture) send(t *testing.T, spans int) error {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for range spans {
		ss.Spans().AppendEmpty().SetName("chat")
	}
	return f.c.ConsumeTraces(context.Background(), td)
}

func (f *fixture) counter(t *testing.T, name, key, value string) int64 {
	return metadatatest.CounterSum(t, f.tel, name, attribute.String(key, value))
}

func (f *fixture) spilling(t *testing.T) int64 {
	t.Helper()
	return metadatatest.GaugeValue(t, f.tel, "otelcol_spillover_spilling")
}

// TestPrimaryTakesEverythingWhileUp: with a healthy backend nothing
// reaches the spill pipeline.
func TestPrimaryTakesEverythingWhileUp(t *testing.T) {
	f := newFixture(t, nil)
	for range 5 {
		require.NoError(t, f.send(t, 10))
	}
	assert.Equal(t, 50, f.prim.SpanCount())
	assert.Zero(t, f.spill.SpanCount())
	assert.EqualValues(t, 50, f.counter(t, "otelcol_spillover_spans", "route", routePrimary))
	assert.Zero(t, f.counter(t, "otelcol_spillover_spans", "route", routeSpill))
	assert.Zero(t, f.spilling(t))
}

// TestSpillsWhileThePrimaryRefuses follows an outage: the first refused
// batch spills, later ones go straight to the spill pipeline for
// retry_primary_after without a call to the primary, then the primary is
// tried again; once it takes a batch, spilling stops.
func TestSpillsWhileThePrimaryRefuses(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.send(t, 1))
	f.prim.down.Store(true)

	require.NoError(t, f.send(t, 10), "a refused batch is spilled, not lost")
	assert.EqualValues(t, 2, f.prim.calls.Load())
	assert.EqualValues(t, 1, f.spilling(t))
	*f.now = f.now.Add(4 * time.Second)
	require.NoError(t, f.send(t, 10))
	assert.EqualValues(t, 2, f.prim.calls.Load(), "within retry_primary_after the primary is not tried")

	*f.now = f.now.Add(2 * time.Second)
	require.NoError(t, f.send(t, 10), "still down: spilled again, and the backoff restarts")
	assert.EqualValues(t, 3, f.prim.calls.Load())
	*f.now = f.now.Add(time.Second)
	f.prim.down.Store(false)
	require.NoError(t, f.send(t, 10))
	assert.EqualValues(t, 3, f.prim.calls.Load(), "the backoff restarted at the last refusal")

	*f.now = f.now.Add(5 * time.Second)
	require.NoError(t, f.send(t, 7))
	assert.EqualValues(t, 4, f.prim.calls.Load())
	assert.Zero(t, f.spilling(t))

	assert.Equal(t, 8, f.prim.SpanCount())
	assert.Equal(t, 40, f.spill.SpanCount())
	assert.EqualValues(t, 8, f.counter(t, "otelcol_spillover_spans", "route", routePrimary))
	assert.EqualValues(t, 40, f.counter(t, "otelcol_spillover_spans", "route", routeSpill))
	assert.EqualValues(t, 2, f.counter(t, "otelcol_spillover_spilled_batches", "cause", causeRefused))
	assert.EqualValues(t, 2, f.counter(t, "otelcol_spillover_spilled_batches", "cause", causeBackoff))
}

// TestPermanentErrorIsNotSpilled: data the backend rejects as invalid
// would be rejected from the spill queue too; it goes back to the caller,
// counted.
func TestPermanentErrorIsNotSpilled(t *testing.T) {
	f := newFixture(t, nil)
	f.prim.down.Store(true)
	f.prim.permanent.Store(true)
	err := f.send(t, 3)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err))
	assert.Zero(t, f.spill.SpanCount())
	assert.EqualValues(t, 3, f.counter(t, "otelcol_spillover_refused_spans", "reason", reasonPermanent))
	assert.Zero(t, f.spilling(t), "a permanent error says nothing about the backend being down")
}

// TestSpillRefusalReachesTheCaller: when the spill queue is full too, the
// caller gets the error (span_guard counts the spans as export_failed) and
// the connector counts them.
func TestSpillRefusalReachesTheCaller(t *testing.T) {
	f := newFixture(t, &refusing{})
	f.prim.down.Store(true)
	require.Error(t, f.send(t, 4))
	require.Error(t, f.send(t, 5))
	assert.EqualValues(t, 9, f.counter(t, "otelcol_spillover_refused_spans", "reason", reasonSpillRefused))
	assert.Zero(t, f.counter(t, "otelcol_spillover_spans", "route", routeSpill))
}

// TestConcurrentBatchesAllAccounted: batches from many goroutines while the
// backend flaps all land in exactly one of the two pipelines.
func TestConcurrentBatchesAllAccounted(t *testing.T) {
	f := newFixture(t, nil)
	f.conn.now = time.Now
	f.conn.retryAfter = time.Millisecond
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if g == 0 && i%20 == 0 {
					f.prim.down.Store(!f.prim.down.Load())
				}
				assert.NoError(t, f.send(t, 3))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 8*200*3, f.prim.SpanCount()+f.spill.SpanCount())
	assert.Positive(t, f.spill.SpanCount())
	assert.EqualValues(t, f.prim.SpanCount(), f.counter(t, "otelcol_spillover_spans", "route", routePrimary))
	assert.EqualValues(t, f.spill.SpanCount(), f.counter(t, "otelcol_spillover_spans", "route", routeSpill))
}

// TestFactoryNamesTheMissingPipeline: a connector that does not feed the
// pipelines its configuration names fails to start, naming the field.
func TestFactoryNamesTheMissingPipeline(t *testing.T) {
	set := connectortest.NewNopSettings(metadata.Type)
	cfg := createDefaultConfig().(*Config)
	cfg.Primary, cfg.Spill = primaryID, spillID
	other := pipeline.NewIDWithName(pipeline.SignalTraces, "other")
	for _, tc := range []struct {
		name  string
		pipes []pipeline.ID
		want  string
	}{
		{"no primary", []pipeline.ID{spillID, other}, `primary: "traces/upstream"`},
		{"no spill", []pipeline.ID{primaryID, other}, `spill: "traces/spill"`},
		{"a third pipeline", []pipeline.ID{primaryID, spillID, other}, "exactly primary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[pipeline.ID]consumer.Traces{}
			for _, p := range tc.pipes {
				m[p] = consumertest.NewNop()
			}
			_, err := NewFactory().CreateTracesToTraces(context.Background(), set, cfg, connector.NewTracesRouter(m))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLifecycle(t *testing.T) {
	componenttestkit.Lifecycle(t, func(t *testing.T) component.Component { return newFixture(t, nil).c })
}
