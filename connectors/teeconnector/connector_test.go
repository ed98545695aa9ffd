package teeconnector

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelcol-llm/otelcol-llm/connectors/teeconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
)

var (
	genaiID   = pipeline.NewIDWithName(pipeline.SignalTraces, "genai")
	statsID   = pipeline.NewIDWithName(pipeline.SignalTraces, "stats")
	guardedID = pipeline.NewIDWithName(pipeline.SignalTraces, "guarded")
)

// step is one call a fake pipeline saw: which pipeline, the span names at
// the time of the call, and the batch itself.
type step struct {
	pipeline pipeline.ID
	names    []string
	td       ptrace.Traces
}

// journal records the order in which the fake pipelines were called.
type journal struct{ steps []step }

// fake is a pipeline's first consumer. A reader records what it saw; the
// owner (mutates) renames every span, as span_guard truncates attributes.
type fake struct {
	id       pipeline.ID
	j        *journal
	mutates  bool
	readOnly bool // marks the batch read-only, as a fan-out to two readers does
	err      error
}

func (f *fake) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: f.mutates}
}

func (f *fake) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	f.j.steps = append(f.j.steps, step{pipeline: f.id, names: spanNames(td), td: td})
	if f.readOnly {
		td.MarkReadOnly()
	}
	if f.mutates {
		forEachSpan(td, func(s ptrace.Span) { s.SetName(s.Name() + " (guarded)") })
	}
	return f.err
}

func forEachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for i := range td.ResourceSpans().Len() {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := range sss.Len() {
			for k := range sss.At(j).Spans().Len() {
				fn(sss.At(j).Spans().At(k))
			}
		}
	}
}

func spanNames(td ptrace.Traces) []string {
	var names []string
	forEachSpan(td, func(s ptrace.Span) { names = append(names, s.Name()) })
	return names
}

func batch(names ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, n := range names {
		ss.Spans().AppendEmpty().SetName(n)
	}
	return td
}

type fixture struct {
	c       connector.Traces
	tel     *componenttest.Telemetry
	j       *journal
	readers []*fake
	owner   *fake
}

// newFixture builds a tee with the given readers (in order) and an owner
// that mutates, behind a real pipeline router.
func newFixture(t *testing.T, readers ...*fake) *fixture {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	j := &journal{}
	owner := &fake{id: guardedID, j: j, mutates: true}
	m := map[pipeline.ID]consumer.Traces{guardedID: owner}
	cfg := &Config{Owner: guardedID}
	for _, r := range readers {
		r.j = j
		m[r.id] = r
		cfg.Readers = append(cfg.Readers, r.id)
	}
	c, err := NewFactory().CreateTracesToTraces(context.Background(), set, cfg, connector.NewTracesRouter(m))
	require.NoError(t, err)
	return &fixture{c: c, tel: tel, j: j, readers: readers, owner: owner}
}

func (f *fixture) counter(t *testing.T, name string, attrs ...attribute.KeyValue) int64 {
	return metadatatest.CounterSum(t, f.tel, name, attrs...)
}

// TestReadersFirstThenOwnerWithoutCopy: the readers see the batch in
// configured order before the owner changes it, and the owner gets the
// very batch the caller sent, not a copy.
func TestReadersFirstThenOwnerWithoutCopy(t *testing.T) {
	f := newFixture(t, &fake{id: genaiID}, &fake{id: statsID})
	td := batch("chat", "embeddings")
	require.NoError(t, f.c.ConsumeTraces(context.Background(), td))

	require.Len(t, f.j.steps, 3)
	for i, want := range []pipeline.ID{genaiID, statsID, guardedID} {
		assert.Equal(t, want, f.j.steps[i].pipeline, "call %d", i)
		assert.Equal(t, []string{"chat", "embeddings"}, f.j.steps[i].names, "call %d saw the batch as sent", i)
	}
	assert.Equal(t, []string{"chat (guarded)", "embeddings (guarded)"}, spanNames(td),
		"the owner changed the caller's batch: it was handed over, not copied")
	assert.Equal(t, td, f.j.steps[2].td)
	assert.Zero(t, f.counter(t, "otelcol_tee_copied_batches"))
}

// TestReadOnlyBatchIsCopiedForTheOwner: a batch a reader pipeline marked
// read-only (or that arrived so) reaches the owner as a copy, counted; the
// caller's batch is unchanged.
func TestReadOnlyBatchIsCopiedForTheOwner(t *testing.T) {
	f := newFixture(t, &fake{id: genaiID, readOnly: true})
	td := batch("chat")
	require.NoError(t, f.c.ConsumeTraces(context.Background(), td))
	assert.Equal(t, []string{"chat"}, spanNames(td))
	assert.NotEqual(t, td, f.j.steps[1].td)
	assert.Equal(t, []string{"chat (guarded)"}, spanNames(f.j.steps[1].td))
	assert.EqualValues(t, 1, f.counter(t, "otelcol_tee_copied_batches"))

	arrived := batch("rag", "tool")
	arrived.MarkReadOnly()
	require.NoError(t, f.c.ConsumeTraces(context.Background(), arrived))
	assert.Equal(t, []string{"rag (guarded)", "tool (guarded)"}, spanNames(f.j.steps[3].td))
	assert.EqualValues(t, 2, f.counter(t, "otelcol_tee_copied_batches"))
}

// TestReaderRefusalIsCountedNotReturned: the owner still gets the batch,
// the caller gets no error (a resend would reach the owner twice), and
// the refused spans are counted by pipeline; the other reader is called.
func TestReaderRefusalIsCountedNotReturned(t *testing.T) {
	f := newFixture(t, &fake{id: genaiID, err: errors.New("metrics pipeline is full")}, &fake{id: statsID})
	require.NoError(t, f.c.ConsumeTraces(context.Background(), batch("a", "b", "c")))
	require.NoError(t, f.c.ConsumeTraces(context.Background(), batch("d")))
	require.Len(t, f.j.steps, 6)
	assert.Equal(t, guardedID, f.j.steps[5].pipeline)
	assert.EqualValues(t, 4, f.counter(t, "otelcol_tee_reader_refused_spans", attribute.String("pipeline", "traces/genai")))
	assert.Zero(t, f.counter(t, "otelcol_tee_reader_refused_spans", attribute.String("pipeline", "traces/stats")))
}

// TestOwnerRefusalIsReturned: the owner's error is the caller's, so the
// component in front counts or retries the batch.
func TestOwnerRefusalIsReturned(t *testing.T) {
	f := newFixture(t, &fake{id: genaiID})
	f.owner.err = errors.New("span_guard is over its memory limit")
	err := f.c.ConsumeTraces(context.Background(), batch("chat"))
	require.ErrorContains(t, err, "memory limit")
}

// TestFactoryRefusesUnsafeLayouts: a pipeline the configuration does not
// name, a missing one, and a reader that modifies data all fail at start,
// naming the field and the pipeline.
func TestFactoryRefusesUnsafeLayouts(t *testing.T) {
	set := connectortest.NewNopSettings(metadata.Type)
	cfg := &Config{Readers: []pipeline.ID{genaiID}, Owner: guardedID}
	read := consumertest.NewNop()
	for _, tc := range []struct {
		name  string
		pipes map[pipeline.ID]consumer.Traces
		want  string
	}{
		{"no reader", map[pipeline.ID]consumer.Traces{guardedID: read, statsID: read}, `readers[0]: "traces/genai"`},
		{"no owner", map[pipeline.ID]consumer.Traces{genaiID: read, statsID: read}, `owner: "traces/guarded"`},
		{"an unnamed pipeline", map[pipeline.ID]consumer.Traces{genaiID: read, guardedID: read, statsID: read}, `"traces/stats" lists the connector`},
		{"a mutating reader", map[pipeline.ID]consumer.Traces{genaiID: &fake{mutates: true}, guardedID: read}, `readers[0]: "traces/genai" modifies spans`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFactory().CreateTracesToTraces(context.Background(), set, cfg, connector.NewTracesRouter(tc.pipes))
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := NewFactory().CreateTracesToTraces(context.Background(), set, cfg, read)
	require.ErrorContains(t, err, "must feed the pipelines")
}

func TestLifecycle(t *testing.T) {
	componenttestkit.Lifecycle(t, func(t *testing.T) component.Component { return newFixture(t, &fake{id: genaiID}).c })
}
