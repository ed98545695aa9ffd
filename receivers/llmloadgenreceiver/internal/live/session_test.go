package live

import (
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
)

// TestLiveSessions: sessions of 5 turns arriving in an open loop, 20
// requests in all, so the last sessions are cut short by the request
// bound. In every session each turn from the second on carries the
// server's real answers (mockllm checks them verbatim), turns follow each
// other in order, the history grows, and the spans name the conversation
// and the turn.
func TestLiveSessions(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "unary"}[stream], func(t *testing.T) {
			mock := startMock(t, nil)
			cfg := liveConfig(mock.URL(), 20, 5)
			cfg.Live.Stream, cfg.Live.IncludeUsage = stream, stream
			cfg.Live.Session = config.LiveSessionConfig{Turns: 5, ThinkTime: 5 * time.Millisecond}
			require.NoError(t, cfg.Validate())
			run := startLive(t, cfg)
			spans := run.spans(t, 20)
			run.stop(t)

			recs := map[string][]mockllm.Record{}
			for _, r := range mock.Records() {
				recs[r.Session] = append(recs[r.Session], r)
			}
			complete := 0
			for id, rs := range recs {
				require.NotEmpty(t, id, "every request belongs to a session")
				require.LessOrEqual(t, len(rs), 5, "session %s", id)
				if len(rs) == 5 {
					complete++
				}
				sort.Slice(rs, func(i, j int) bool { return rs[i].SessionTurn < rs[j].SessionTurn })
				for i, r := range rs {
					assert.Equal(t, i+1, r.SessionTurn, "session %s", id)
					if i == 0 {
						continue
					}
					assert.True(t, r.HistoryChecked && r.HistoryOK, "session %s turn %d carried the real answer to turn %d", id, i+1, i)
					assert.False(t, r.Received.Before(rs[i-1].EndAt.Add(-time.Millisecond)), "turn %d went out after turn %d ended", i+1, i)
					assert.Greater(t, r.PromptTokens, rs[i-1].PromptTokens, "the history grows")
				}
			}
			assert.Positive(t, complete, "at least one session ran all 5 turns")
			assert.Zero(t, mock.Stats().HistoryMismatches)

			history := map[string]map[int64]int64{}
			for _, sp := range spans {
				conv := attrStr(sp, genai.AttrConversationID)
				require.NotEmpty(t, conv)
				turn, ok := sp.Attributes().Get(attrLiveTurn)
				require.True(t, ok)
				h, _ := sp.Attributes().Get(attrLiveHistory)
				if history[conv] == nil {
					history[conv] = map[int64]int64{}
				}
				history[conv][turn.Int()] = h.Int()
			}
			assert.Len(t, history, len(recs))
			for conv, byTurn := range history {
				assert.Zero(t, byTurn[1], "%s: the first turn has no history", conv)
				for turn := int64(2); turn <= int64(len(byTurn)); turn++ {
					assert.Greater(t, byTurn[turn], byTurn[turn-1], "%s: turn %d carries more history", conv, turn)
				}
			}
		})
	}
}

// TestLiveSessionsClosedLoop: two virtual users each run sessions one after
// another; against the mock's prefix cache, a session's later turns find
// their history cached and its first turns find nothing.
func TestLiveSessionsClosedLoop(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) { c.PrefixCacheBlockTokens = 16 })
	cfg := liveConfig(mock.URL(), 12, 0)
	cfg.Arrival = config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: 2}
	cfg.Live.Session = config.LiveSessionConfig{Turns: 3}
	run := startLive(t, cfg)
	run.spans(t, 12)
	run.stop(t)
	assert.Zero(t, mock.Stats().HistoryMismatches)
	assert.LessOrEqual(t, mock.Stats().MaxStreams, int64(2))
	sessions := map[string]int{}
	for _, r := range mock.Records() {
		sessions[r.Session]++
	}
	assert.GreaterOrEqual(t, len(sessions), 4, "two users, 12 requests, 3 turns a session")
	for _, r := range mock.Records() {
		if r.SessionTurn == 1 {
			assert.Zero(t, r.CachedTokens, "a first turn shares no more than the system prompt's part block")
		} else {
			assert.Positive(t, r.CachedTokens, "turn %d of %s finds its history cached", r.SessionTurn, r.Session)
		}
	}
	for id, n := range sessions {
		assert.LessOrEqual(t, n, 3, id)
	}
}

// TestLiveSessionsFromShareGPT: sessions whose turns are a real ShareGPT
// excerpt's human turns (the Glaive tool-call set: two conversations of two
// human turns each), so every session has two turns whatever
// session.turns says; each turn asks for its recorded answer's length, and
// the second carries the server's real first answer.
func TestLiveSessionsFromShareGPT(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) { c.OutputTokens = 1 << 10 })
	cfg := liveConfig(mock.URL(), 4, 0)
	cfg.Arrival = config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: 1}
	cfg.Live.IgnoreEOS = true
	cfg.Live.MaxTokens = 1000
	cfg.Live.Dataset = dataset.Config{Path: filepath.Join("..", "dataset", "testdata", "real", "glaive_toolcall_en_demo.head.json"),
		Format: dataset.FormatShareGPT, Order: dataset.OrderSequential, MaxRecords: 10}
	cfg.Live.Session = config.LiveSessionConfig{Turns: 5}
	require.NoError(t, cfg.Validate())
	run := startLive(t, cfg)
	spans := run.spans(t, 4)
	run.stop(t)
	for _, sp := range spans {
		assert.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
		_, ok := sp.Attributes().Get(attrLiveDatasetRow)
		assert.True(t, ok, "spans name the conversation")
	}
	byTurn := map[int][]mockllm.Record{}
	for _, r := range mock.Records() {
		byTurn[r.SessionTurn] = append(byTurn[r.SessionTurn], r)
	}
	require.Len(t, byTurn[1], 2, "two sessions")
	require.Len(t, byTurn[2], 2, "of two turns each")
	for _, r := range byTurn[2] {
		assert.True(t, r.HistoryChecked && r.HistoryOK, "turn 2 of %s carried the real answer", r.Session)
	}
	planned := []int{}
	for _, turn := range []int{1, 2} {
		for _, r := range byTurn[turn] {
			planned = append(planned, r.PlannedTokens)
		}
	}
	sort.Ints(planned)
	ix, err := dataset.Open(cfg.Live.Dataset, 1)
	require.NoError(t, err)
	defer ix.Close()
	var recorded []int
	for range 2 {
		rec, err := ix.Next()
		require.NoError(t, err)
		recorded = append(recorded, rec.OutputTokens, rec.Turns[0].OutputTokens)
	}
	sort.Ints(recorded)
	assert.Equal(t, recorded, planned, "each turn asked for its recorded answer's length")
}

func TestLiveSessionConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*config.Config)
		want   string
	}{
		{func(c *config.Config) { c.Live.Session.Turns = 1 }, "live.session.turns: must be from 2 to 1000 (0 turns sessions off), got 1"},
		{func(c *config.Config) { c.Live.Session = config.LiveSessionConfig{Turns: 3, ThinkTime: -time.Second} }, "live.session.think_time: must not be negative, got -1s"},
		{func(c *config.Config) { c.Live.Session.Turns = 3; c.Live.Operation = config.LiveOpText }, `live.session: a conversation needs operation "chat", got "text_completion"`},
		{func(c *config.Config) { c.Live.Session.Turns = 3; c.Live.Dataset.Path = "x.jsonl" }, `live.session: sessions from live.dataset need format "sharegpt" (conversations with later human turns), got "jsonl"`},
		{func(c *config.Config) { c.Live.Session.Turns = 3; c.Live.Trace.Path = "x.jsonl" }, "live.session: a trace sets every request's send time; remove live.trace"},
	} {
		cfg := liveConfig("http://127.0.0.1:1", 1, 1)
		tc.mutate(cfg)
		assert.ErrorContains(t, cfg.Validate(), tc.want)
	}
}

// TestLiveSessionsWithAReasoningModel: a session carries the model's
// answers into the next turn, not its thinking, and the mock, which expects
// exactly that, finds every history right.
func TestLiveSessionsWithAReasoningModel(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) { c.ReasoningTokens = 5 })
	cfg := liveConfig(mock.URL(), 9, 5)
	cfg.Live.Session = config.LiveSessionConfig{Turns: 3, ThinkTime: 5 * time.Millisecond}
	require.NoError(t, cfg.Validate())
	run := startLive(t, cfg)
	run.spans(t, 9)
	run.stop(t)
	checked := 0
	for _, r := range mock.Records() {
		if r.HistoryChecked {
			checked++
			assert.True(t, r.HistoryOK, "session %s turn %d", r.Session, r.SessionTurn)
		}
	}
	assert.Positive(t, checked)
	assert.Zero(t, mock.Stats().HistoryMismatches)
}
