package live

import (
	"cmp"
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
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
		Path:   filepath.Join("..", "dataset", "testdata", "real", "mooncake-conversation-first400.jsonl"),
		Format: dataset.TraceFormatMooncake, Speed: 20, Offset: 3 * time.Second, Length: 40 * time.Second, BlockTokens: 512,
	}
	cfg.Live.Timeouts.Total = time.Minute
	rows := readTraceRows(t, cfg.Live.Trace)
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

	// Send times. Never early: the i-th request the mock received came at
	// least the i-th row's offset after the run was started (start is taken
	// before the receiver starts, so the schedule's own start is later).
	// How late is the machine's business; it is logged, not asserted.
	late := make([]time.Duration, len(recs))
	for i := range recs {
		got := recs[i].Received.Sub(start)
		assert.GreaterOrEqual(t, got, rows[i].At, "request %d sent before its row's time", i)
		late[i] = (recs[i].Received.Sub(recs[0].Received) - (rows[i].At - rows[0].At)).Abs()
	}
	slices.Sort(late)
	t.Logf("%d rows over %v replayed in %v; send-time error at the mock against the trace's gaps p50 %v, p99 %v, max %v",
		len(rows), rows[len(rows)-1].At, time.Since(start).Round(time.Millisecond), late[len(late)/2], late[len(late)*99/100], late[len(late)-1])
	var sent, disp []time.Duration // from the row's time to the request written (and to its dispatch), at the client
	for _, sp := range spans {
		_, ok := sp.Attributes().Get(attrLiveDatasetRow)
		assert.True(t, ok, "spans name the trace line")
		for i := 0; i < sp.Events().Len(); i++ {
			switch ev := sp.Events().At(i); ev.Name() {
			case "llm_loadgen.request_sent":
				sent = append(sent, ev.Timestamp().AsTime().Sub(sp.StartTimestamp().AsTime()))
			case "llm_loadgen.dispatched":
				disp = append(disp, ev.Timestamp().AsTime().Sub(sp.StartTimestamp().AsTime()))
			}
		}
	}
	slices.Sort(sent)
	slices.Sort(disp)
	if len(sent) > 0 && len(disp) > 0 {
		t.Logf("at the client, from each row's time to its request written: p50 %v, p99 %v, max %v; to its dispatch: p50 %v, p99 %v",
			sent[len(sent)/2], sent[len(sent)*99/100], sent[len(sent)-1], disp[len(disp)/2], disp[len(disp)*99/100])
	}
}

// TestLiveTracePrefixHits replays a window of the real Mooncake
// conversation trace against the mock with its prefix cache on, in blocks
// of the trace's 512 tokens: the tokens the mock served from its cache,
// request by request in the order it received them, are exactly what the
// rows' hash_ids imply (a row's block is cached when an earlier row had
// the same ids up to and including it, both as full blocks).
func TestLiveTracePrefixHits(t *testing.T) {
	const block = 512
	mock := startMock(t, func(c *mockllm.Config) {
		c.OutputTokens, c.ITL, c.TTFT, c.ContextWindow = 1, 100*time.Microsecond, time.Millisecond, 1<<22
		c.PrefixCacheBlockTokens, c.PrefixCacheBlocks = block, 1<<20
	})
	cfg := liveConfig(mock.URL(), 0, 1)
	cfg.Live.Trace = dataset.TraceConfig{
		Path:   filepath.Join("..", "dataset", "testdata", "real", "mooncake-conversation-first400.jsonl"),
		Format: dataset.TraceFormatMooncake, Speed: 20, Offset: 3 * time.Second, Length: 60 * time.Second, BlockTokens: block,
	}
	cfg.Live.Timeouts.Total = time.Minute
	rows := readTraceRows(t, cfg.Live.Trace)
	byLine := map[int64]dataset.TraceRow{}
	for _, r := range rows {
		byLine[r.Line] = r
	}
	run := startLive(t, cfg)
	spans := run.spans(t, len(rows))
	run.stop(t)
	lineOf := map[string]int64{}
	for _, sp := range spans {
		line, ok := sp.Attributes().Get(attrLiveDatasetRow)
		require.True(t, ok)
		lineOf[sp.TraceID().String()] = line.Int()
	}
	recs := mock.Records()
	require.Len(t, recs, len(rows))
	// In the order the mock's cache saw them: rows of one timestamp are sent
	// together and may reach it in another order than they arrived.
	slices.SortFunc(recs, func(a, b mockllm.Record) int { return cmp.Compare(a.CacheSeq, b.CacheSeq) })

	cached := map[string]bool{} // chains of hash ids cached so far
	total, shared := 0, 0
	for _, rec := range recs {
		row := byLine[lineOf[strings.Split(rec.Traceparent, "-")[1]]]
		require.NotZero(t, row.Line, "record %s maps to a trace row", rec.ID)
		full := max(row.InputTokens-dataset.MessageOverhead, 1) / block // whole blocks of the prompt as sent
		chain, hits, counting := "", 0, true
		for j := 0; j < full; j++ {
			id := -(row.Line<<20 | int64(j)) - 1 // a block past the row's hash_ids is its own
			if j < len(row.HashIDs) {
				id = row.HashIDs[j]
			}
			chain += strconv.FormatInt(id, 10) + ","
			if counting && cached[chain] {
				hits++
			} else {
				counting = false
			}
			cached[chain] = true
		}
		assert.Equal(t, hits*block, rec.CachedTokens, "trace line %d", row.Line)
		total += hits * block
		if hits > 0 {
			shared++
		}
	}
	assert.Positive(t, shared, "the window has rows that share a prefix")
	assert.EqualValues(t, total, mock.Stats().PrefixCacheHits)
	t.Logf("%d rows, %d with cached blocks; %d of %d prompt tokens from the cache", len(rows), shared, total, mock.Stats().PrefixCacheQueries)
}

// readTraceRows reads every row of the trace window.
func readTraceRows(t testing.TB, c dataset.TraceConfig) []dataset.TraceRow {
	t.Helper()
	tr, err := dataset.OpenTrace(c)
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
	require.NotEmpty(t, rows)
	return rows
}

func TestLiveTraceConfigConflicts(t *testing.T) {
	cfg := liveConfig("http://127.0.0.1:1", 1, 1)
	cfg.Live.Trace.Path = "trace.jsonl"
	cfg.Live.Trace.Speed = 0
	cfg.Live.Dataset.Path = "prompts.jsonl"
	cfg.Live.Sweep.StepDuration = time.Second
	err := cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{"live.trace.speed: must be > 0", "live.trace: a trace brings its own prompts; remove live.dataset", "live.trace: a trace sets the send times; remove live.sweep"} {
		assert.Contains(t, err.Error(), want)
	}
}

// Rows armed ahead of their time (here up to an hour ahead) and the run ending
// before that time: each is finished as cancelled, unsent, its slot and
// connection given back; the request bound stops the arming.
func TestLiveTraceArmedRowsCancelled(t *testing.T) {
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), 5, 1)
	cfg.Live.MaxConcurrency = 64
	cfg.Live.Trace = dataset.TraceConfig{
		Path:   filepath.Join("..", "dataset", "testdata", "real", "mooncake-synthetic-first400.jsonl"),
		Format: dataset.TraceFormatMooncake, Speed: 1, Offset: 30 * time.Second, Length: 40 * time.Second, BlockTokens: 512,
	}
	cfg.StartAt = time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)
	require.NoError(t, cfg.Validate())
	run := &liveRun{traces: new(consumertest.TracesSink), metrics: new(consumertest.MetricsSink)}
	r, err := New(&loadgen.Run{Config: cfg, Settings: receivertest.NewNopSettings(metadata.Type), Traces: run.traces, Metrics: run.metrics})
	require.NoError(t, err)
	r.armLead = time.Hour // the schedule starts in a minute: every row is armable now
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	run.r = r
	require.Eventually(t, func() bool { return len(r.sem) == 5 }, 30*time.Second, 5*time.Millisecond,
		"the request bound's five rows armed, each with its slot")
	run.stop(t)
	spans := run.spans(t, 5)
	assert.Len(t, spans, 5, "the request bound stopped the arming")
	for _, sp := range spans {
		assert.Equal(t, errTypeCancelled, attrStr(sp, genai.AttrErrorType))
		assert.Equal(t, "the replay ended before the row's time", attrStr(sp, attrLiveErrorDetail))
	}
	assert.Empty(t, mock.Records(), "nothing was sent")
	assert.Empty(t, r.sem, "every slot given back")
}

// A gate hands the scheduler the staged rows waiting for it, once: a row
// that left before the gate opened is not sent by the scheduler, and a row
// that comes or leaves after it opened is told so (it sends itself, or
// waits for the scheduler's send).
func TestTraceGateHandsOverStagedRows(t *testing.T) {
	g := &traceGate{open: make(chan struct{})}
	a, b, c := &liveResult{Seq: 1}, &liveResult{Seq: 2}, &liveResult{Seq: 3}
	require.True(t, g.wait(a))
	require.True(t, g.wait(b))
	require.True(t, g.wait(c))
	require.True(t, g.leave(b), "b leaves before the gate opens")
	assert.Equal(t, []*liveResult{a, c}, g.take())
	assert.False(t, g.wait(&liveResult{}), "the gate is open: a late row sends itself")
	assert.False(t, g.leave(a), "a is being sent by the scheduler")
	assert.Empty(t, g.take(), "the rows are handed over once")
}
