package mockllm

import (
	"encoding/json"
	"sync"
)

// Sessions: a chat request whose "user" field is set belongs to that
// session. The server remembers the answer it gave each session's last
// turn and checks that the next turn's messages carry it, verbatim, as an
// assistant message: the ground truth a multi-turn client is tested
// against. Session answers start at a word that depends on the request, so
// two answers of one length differ.

// maxSessions bounds the sessions remembered; the oldest is forgotten
// first.
const maxSessions = 100_000

type sessionState struct {
	turns  int
	answer string
}

type sessionBook struct {
	mu    sync.Mutex
	byID  map[string]*sessionState
	order []string // insertion order, for forgetting
}

func newSessionBook() *sessionBook { return &sessionBook{byID: map[string]*sessionState{}} }

// begin files turn n of session id and reports whether the request's
// messages carry the answer to the turn before (checked false on a
// session's first turn).
func (b *sessionBook) begin(id string, q *completionRequest) (turn int, checked, ok bool) {
	b.mu.Lock()
	st := b.byID[id]
	var last string
	if st != nil {
		turn, last = st.turns, st.answer
	}
	b.mu.Unlock()
	if turn == 0 {
		return 1, false, false
	}
	for _, m := range q.Messages {
		var text string
		if m.Role == "assistant" && json.Unmarshal(m.Content, &text) == nil && text == last {
			return turn + 1, true, true
		}
	}
	return turn + 1, true, false
}

// answered records the answer given to a session's turn.
func (b *sessionBook) answered(id string, turn int, answer string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.byID[id]
	if st == nil {
		if len(b.order) >= maxSessions {
			delete(b.byID, b.order[0])
			b.order = b.order[1:]
		}
		st = &sessionState{}
		b.byID[id] = st
		b.order = append(b.order, id)
	}
	st.turns, st.answer = turn, answer
}

// noteAnswer files a session turn's whole answer, before the response's
// end is written: a client may send the next turn the moment it reads it.
func (s *Server) noteAnswer(rec *Record, p plan) {
	if rec.Session != "" {
		// The thinking of a reasoning model is not part of the answer a
		// client carries into the next turn.
		skip := 0
		if rec.Stream && rec.Endpoint == endpointChat.path() {
			skip = min(s.cfg.ReasoningTokens, p.tokens)
		}
		s.sessions.answered(rec.Session, rec.SessionTurn, answerText(p.wordOffset+skip, p.tokens-skip))
	}
}

// answerText is the text of the first n tokens of an answer that starts
// at word offset.
func answerText(offset, n int) string {
	return string(appendWords(nil, offset, n))
}
