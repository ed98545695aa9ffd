package mockllm

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chatTurn sends a unary chat request of session user with the given
// messages and returns the answer's text.
func chatTurn(t *testing.T, s *Server, user string, msgs []map[string]string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"user": user, "messages": msgs, "max_tokens": 6})
	require.NoError(t, err)
	resp := post(t, s.URL()+"/v1/chat/completions", string(body), nil)
	require.Equal(t, 200, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(raw, &out))
	require.Len(t, out.Choices, 1)
	return out.Choices[0].Message.Content
}

func TestSessionHistory(t *testing.T) {
	s := startServer(t, nil)
	msgs := []map[string]string{{"role": "user", "content": "first"}}
	a1 := chatTurn(t, s, "s1", msgs)
	msgs = append(msgs, map[string]string{"role": "assistant", "content": a1}, map[string]string{"role": "user", "content": "second"})
	a2 := chatTurn(t, s, "s1", msgs)
	assert.NotEqual(t, a1, a2, "two answers of a session differ")
	// A client that sends an answer the server did not give.
	wrong := append(msgs, map[string]string{"role": "assistant", "content": strings.ToUpper(a2)}, map[string]string{"role": "user", "content": "third"})
	chatTurn(t, s, "s1", wrong)
	// Another session, and a request without one.
	chatTurn(t, s, "s2", []map[string]string{{"role": "user", "content": "x"}})
	chatTurn(t, s, "", []map[string]string{{"role": "user", "content": "x"}})

	byTurn := map[string][]Record{}
	for _, r := range s.Records() {
		byTurn[r.Session] = append(byTurn[r.Session], r)
	}
	require.Len(t, byTurn["s1"], 3)
	turns := map[int]Record{}
	for _, r := range byTurn["s1"] {
		turns[r.SessionTurn] = r
	}
	assert.False(t, turns[1].HistoryChecked)
	assert.True(t, turns[2].HistoryChecked && turns[2].HistoryOK, "turn 2 carried the real answer")
	assert.True(t, turns[3].HistoryChecked && !turns[3].HistoryOK, "turn 3 did not")
	assert.Equal(t, 1, byTurn["s2"][0].SessionTurn)
	assert.Empty(t, byTurn[""][0].Session)
	assert.Equal(t, int64(1), s.Stats().HistoryMismatches)
}

// TestSessionHistoryStreamed: a streamed answer, reassembled from its
// chunks, is what the next turn must carry.
func TestSessionHistoryStreamed(t *testing.T) {
	s := startServer(t, nil)
	body := `{"user":"s9","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	res := readStream(post(t, s.URL()+"/v1/chat/completions", body, nil).Body)
	require.ErrorIs(t, res.err, io.EOF)
	require.True(t, res.done)
	var answer strings.Builder
	for _, c := range res.chunks {
		for _, ch := range c.Choices {
			if ch.Delta != nil && ch.Delta.Content != nil {
				answer.WriteString(*ch.Delta.Content)
			}
		}
	}
	next, err := json.Marshal(map[string]any{"user": "s9", "stream": true, "messages": []map[string]string{
		{"role": "user", "content": "hi"}, {"role": "assistant", "content": answer.String()}, {"role": "user", "content": "more"}}})
	require.NoError(t, err)
	res = readStream(post(t, s.URL()+"/v1/chat/completions", string(next), nil).Body)
	require.True(t, res.done)
	assert.Zero(t, s.Stats().HistoryMismatches)
	var checked int
	for _, r := range s.Records() {
		if r.SessionTurn == 2 {
			checked++
			assert.True(t, r.HistoryOK)
		}
	}
	assert.Equal(t, 1, checked)
}
