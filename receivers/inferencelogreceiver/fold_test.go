package inferencelogreceiver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

// newTestFold builds a fold operator where a line starts a record when it
// begins with "REC", writing to a fake output.
func newTestFold(t *testing.T) (*foldOperator, *testutil.FakeOutput) {
	t.Helper()
	cfg := newFoldConfig(func(l string) bool { return strings.HasPrefix(l, "REC") })
	op, err := cfg.Build(componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	out := testutil.NewFakeOutput(t)
	op.SetOutputIDs([]string{out.ID()})
	require.NoError(t, op.SetOutputs([]operator.Operator{out}))
	require.NoError(t, op.Start(nil))
	return op.(*foldOperator), out
}

func foldEntries(file string, lines ...string) []*entry.Entry {
	es := make([]*entry.Entry, len(lines))
	for i, l := range lines {
		e := entry.New()
		e.Body = l
		e.Attributes = map[string]any{attrFileName: file}
		e.ObservedTimestamp = time.Now()
		es[i] = e
	}
	return es
}

func received(t *testing.T, out *testutil.FakeOutput, n int) []*entry.Entry {
	t.Helper()
	got := make([]*entry.Entry, 0, n)
	for range n {
		select {
		case e := <-out.Received:
			got = append(got, e)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no record", "got %d of %d", len(got), n)
		}
	}
	return got
}

// Records fold per file and keep their first line's entry; a one-line
// record keeps its body as read; a file that opens with continuation lines
// makes a record of them; Stop sends what is pending.
func TestFoldRecords(t *testing.T) {
	op, out := newTestFold(t)
	ctx := context.Background()
	a := foldEntries("a.log", "REC 1", "  cont 1", "  cont 2", "REC 2")
	b := foldEntries("b.log", "tail of a traceback", "REC 3")
	require.NoError(t, op.ProcessBatch(ctx, []*entry.Entry{a[0], b[0], a[1], a[2], b[1], a[3]}))
	got := received(t, out, 2)
	assert.Same(t, b[0], got[0], "b.log's opening continuation is a record of its own")
	assert.Equal(t, "tail of a traceback", got[0].Body)
	assert.Same(t, a[0], got[1], "the folded record is its first line's entry")
	assert.Equal(t, "REC 1\n  cont 1\n  cont 2", got[1].Body)
	out.ExpectNoEntry(t, 50*time.Millisecond)
	require.NoError(t, op.Stop())
	last := received(t, out, 2)
	bodies := []any{last[0].Body, last[1].Body}
	assert.ElementsMatch(t, []any{"REC 2", "REC 3"}, bodies)
}

// A record is cut at foldMaxLines lines and past foldMaxBytes bytes, and
// continuation lines with no record start at most foldMaxUnstarted lines
// each: no line is lost.
func TestFoldBounds(t *testing.T) {
	op, out := newTestFold(t)
	defer func() { require.NoError(t, op.Stop()) }()
	ctx := context.Background()
	lines := []string{"REC"}
	for range foldMaxLines {
		lines = append(lines, "x")
	}
	require.NoError(t, op.ProcessBatch(ctx, foldEntries("a.log", lines...)))
	got := received(t, out, 1)
	assert.Equal(t, foldMaxLines, strings.Count(got[0].Body.(string), "\n")+1)

	big := strings.Repeat("y", foldMaxBytes/2)
	require.NoError(t, op.ProcessBatch(ctx, foldEntries("b.log", "REC", big, big)))
	got = received(t, out, 1)
	assert.Greater(t, len(got[0].Body.(string)), foldMaxBytes)

	cont := make([]string, foldMaxUnstarted)
	for i := range cont {
		cont[i] = "z"
	}
	require.NoError(t, op.ProcessBatch(ctx, foldEntries("c.log", cont...)))
	got = received(t, out, 1)
	assert.Equal(t, foldMaxUnstarted, strings.Count(got[0].Body.(string), "z"))
}

// A pending record is sent once its first line is foldFlush old, without
// another line to end it.
func TestFoldFlushesOldRecords(t *testing.T) {
	op, out := newTestFold(t)
	defer func() { require.NoError(t, op.Stop()) }()
	require.NoError(t, op.ProcessBatch(context.Background(), foldEntries("a.log", "REC", "  cont")))
	got := received(t, out, 1)
	assert.Equal(t, "REC\n  cont", got[0].Body)
}

// A record whose body is not text is sent as it is, ending the record
// before it.
func TestFoldNonTextBody(t *testing.T) {
	op, out := newTestFold(t)
	defer func() { require.NoError(t, op.Stop()) }()
	es := foldEntries("a.log", "REC", "  cont", "")
	es[2].Body = map[string]any{"k": "v"}
	require.NoError(t, op.ProcessBatch(context.Background(), es))
	got := received(t, out, 2)
	assert.Equal(t, "REC\n  cont", got[0].Body)
	assert.Equal(t, map[string]any{"k": "v"}, got[1].Body)
}
