package llmloadgenreceiver

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
)

// TestLiveTraceReplay replays a window of the real Mooncake conversation
// trace against the mock at 20×: every row of the window is sent once, at
// its timestamp (the mock's receive times against the replay's start), with
// the row's prompt length and, with ignore_eos, exactly its output length.
func TestLiveTraceReplay(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) {
		c.OutputTokens, c.ITL, c.TTFT, c.ContextWindow = 1<<20, 100*time.Microsecond, 5*time.Millisecond, 1<<22
	})
	cfg := liveConfig(mock.URL(), 0, 1)
	cfg.Live.IgnoreEOS = true
	cfg.Live.Trace = dataset.TraceConfig{
		Path:   filepath.Join("internal", "dataset", "testdata", "real", "mooncake-conversation-first400.jsonl"),
		Format: dataset.TraceFormatMooncake, Speed: 20, Offset: 3 * time.Second, Length: 40 * time.Second, BlockTokens: 512,
	}
	cfg.Live.Timeouts.Total = time.Minute
	tr, err := dataset.OpenTrace(cfg.Live.Trace)
	require.NoError(t, err)
	var rows []dataset.TraceRow
	for {
		row, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		rows = append(rows, row)
	}
	require.NoError(t, tr.Close())
	require.Greater(t, len(rows), 20)

	start := time.Now()
	run := startLive(t, cfg)
	spans := run.spans(t, len(rows))
	run.stop(t)
	assert.Len(t, spans, len(rows), "every row of the window once")

	recs := mock.Records()
	require.Len(t, recs, len(rows))
	slices.SortFunc(recs, func(a, b mockllm.Record) int { return a.Received.Compare(b.Received) })
	var wantIn, gotIn, wantOut, gotOut []int
	for _, r := range rows {
		wantIn, wantOut = append(wantIn, r.InputTokens), append(wantOut, r.OutputTokens)
	}
	for _, r := range recs {
		gotIn, gotOut = append(gotIn, r.PromptTokens), append(gotOut, r.PlannedTokens)
	}
	for _, s := range [][]int{wantIn, gotIn, wantOut, gotOut} {
		slices.Sort(s)
	}
	assert.Equal(t, wantIn, gotIn, "each row's prompt length")
	assert.Equal(t, wantOut, gotOut, "each row's output length")

	// Send times: the gaps between the mock's receive times follow the
	// trace's gaps (this measures from the first request, so the start-up
	// of the receiver does not count).
	errs := make([]time.Duration, len(recs))
	for i := range recs {
		errs[i] = (recs[i].Received.Sub(recs[0].Received) - (rows[i].At - rows[0].At)).Abs()
	}
	slices.Sort(errs)
	worst := errs[len(errs)-1]
	t.Logf("%d rows over %v replayed in %v; send-time error at the mock p50 %v, p99 %v, max %v", len(rows), rows[len(rows)-1].At,
		time.Since(start).Round(time.Millisecond), errs[len(errs)/2], errs[len(errs)*99/100], worst)
	assert.Less(t, worst, 250*time.Millisecond, "send times follow the trace (bound generous for a busy machine)")
	for _, sp := range spans {
		_, ok := sp.Attributes().Get(attrLiveDatasetRow)
		assert.True(t, ok, "spans name the trace line")
	}
}
