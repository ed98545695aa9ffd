package live

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/sse"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
)

// A session (live.session) is one conversation: turn k+1 goes out after
// the answer to turn k and a think time, and carries the whole history,
// the server's real answers included, so a server's prefix cache sees what
// a chat application gives it. The session id is the requests' "user"
// field (sticky routing) and gen_ai.conversation.id on their spans.

// sessionTurn is what a request of a session carries.
type sessionTurn struct {
	id            string
	turn          int           // 1-based
	history       []liveMessage // earlier turns: user, assistant, ...
	historyTokens int           // their estimated tokens
	// With a dataset: the session's conversation, its system messages and
	// their estimated tokens, and its number of human turns.
	conv         *dataset.Record
	system       []liveMessage
	systemTokens int
	maxTurns     int
}

// Outcomes of a session, for otelcol_llm_loadgen_live_sessions.
const (
	sessionCompleted  = "completed"
	sessionFailedTurn = "failed_turn" // a turn failed; the later ones were not sent
	sessionStopped    = "stopped"     // the run ended (duration, request bound) first
)

// runSession sends the turns of a new session, the first at sched (its
// ticket already taken) with the schedule's rate.
func (r *Runner) runSession(ctx context.Context, sched time.Time, rate float64) {
	r.idMu.Lock()
	rng := rand.New(rand.NewPCG(r.idRand.Uint64(), r.idRand.Uint64()))
	r.idMu.Unlock()
	st := &sessionTurn{id: fmt.Sprintf("%s-s%d", r.runID, r.sessions.Add(1))}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	outcome := sessionCompleted
	defer func() {
		r.tel.Live.Sessions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("outcome", outcome)))
	}()
	for t := 1; t <= r.lc.Session.Turns && (st.maxTurns == 0 || t <= st.maxTurns); t++ {
		if t > 1 {
			if !r.thinkThenTicket(ctx, timer, rng) {
				outcome = sessionStopped
				return
			}
			sched = time.Now()
		}
		st.turn = t
		res := r.send(sched, rate, nil, st)
		if !res.succeeded() {
			outcome = sessionFailedTurn
			return
		}
		user, answer := liveMessage{Role: "user", Content: res.userText}, liveMessage{Role: "assistant", Content: string(res.answer)}
		st.history = append(st.history, user, answer)
		st.historyTokens += r.prompts.messageTokens(user.Content) + r.prompts.messageTokens(answer.Content)
	}
}

// thinkThenTicket waits the think time before a session's next turn and
// reserves its request; false when the run ended meanwhile.
func (r *Runner) thinkThenTicket(ctx context.Context, timer *time.Timer, rng *rand.Rand) bool {
	if think := r.lc.Session.ThinkTime; think > 0 {
		timer.Reset(time.Duration(rng.ExpFloat64() * float64(think)))
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
	}
	return ctx.Err() == nil && r.ticket()
}

// sessionBody renders a turn: the system messages, the history and the
// turn's user message, synthetic (of a sampled length, after the base
// messages) or the conversation's next human turn.
func (r *Runner) sessionBody(res *liveResult) ([]byte, int, error) {
	st := res.session
	b := r.prompts
	maxTokens := b.cfg.MaxTokens
	var prefix []liveMessage
	var prefixTokens int
	if r.dataset != nil {
		user, out, err := r.conversationTurn(st)
		if err != nil {
			return nil, 0, err
		}
		res.userText, res.DatasetRow = user, st.conv.Row
		if out > 0 {
			maxTokens, res.MaxTokens = out, out
		}
		prefix, prefixTokens = st.system, st.systemTokens
	} else {
		r.inMu.Lock()
		want := r.inputs.Tokens(1)
		r.inMu.Unlock()
		res.userText = b.userContent(res.Seq, want)
		prefix, prefixTokens = b.base, b.baseTokens()
	}
	msgs := make([]liveMessage, 0, len(prefix)+len(st.history)+1)
	msgs = append(append(append(msgs, prefix...), st.history...), liveMessage{Role: "user", Content: res.userText})
	tokens := prefixTokens + st.historyTokens + b.messageTokens(res.userText)
	res.HistoryTokens = st.historyTokens
	body, err := b.marshalBody(msgs, maxTokens, st.id)
	return body, tokens, err
}

// conversationTurn returns the session's turn from its dataset
// conversation, drawn on the first turn: the human turn's text and the
// recorded answer's estimated length (0: none).
func (r *Runner) conversationTurn(st *sessionTurn) (string, int, error) {
	if st.turn > 1 {
		t := st.conv.Turns[st.turn-2]
		return t.User, t.OutputTokens, nil
	}
	rec, err := r.dataset.Next()
	if err != nil {
		return "", 0, err
	}
	st.conv, st.maxTurns = &rec, 1+len(rec.Turns)
	last := len(rec.Messages) - 1 // the first human turn; before it the system turns
	for _, m := range rec.Messages[:last] {
		st.system = append(st.system, liveMessage(m))
		st.systemTokens += r.prompts.messageTokens(m.Content)
	}
	return rec.Messages[last].Content, rec.OutputTokens, nil
}

// appendAnswer adds the answer text of a chat chunk (its first choice's
// content) to the result, for the session's next turn.
func appendAnswer(data []byte, res *liveResult) {
	var c sse.Chunk
	if sse.DecodeChunk(data, &c) != nil {
		return // the scan already failed the request
	}
	for _, ch := range c.Choices {
		if ch.Index == 0 && ch.Delta != nil && ch.Delta.Content != nil {
			res.answer = append(res.answer, *ch.Delta.Content...)
		}
	}
}
