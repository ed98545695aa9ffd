package dataset // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// decode turns one record's JSON into a Record, or says why it is skipped
// (no user turn), or names the field that is wrong. Records are decoded in
// one pass into typed fields; only a record that does not fit them is
// decoded again, field by field, to name the one that is wrong.
func decode(format string, b []byte) (Record, string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Record{}, "", notObject(format, b)
	}
	if format == FormatShareGPT {
		var r struct {
			Conversations []shareGPTTurn `json:"conversations"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return slowPath(err, b, decodeShareGPT)
		}
		return shareGPTTurns(r.Conversations)
	}
	var r struct {
		Messages     []rawMessage    `json:"messages"`
		Prompt       json.RawMessage `json:"prompt"`
		MaxTokens    json.RawMessage `json:"max_tokens"`
		OutputTokens json.RawMessage `json:"output_tokens"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return slowPath(err, b, decodeJSONL)
	}
	return jsonlFields(r.Messages, r.Prompt, r.MaxTokens, r.OutputTokens)
}

// notObject says why a record that is not a JSON object is wrong: invalid
// JSON, or JSON of another shape than the format's object.
func notObject(format string, b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if format == FormatShareGPT {
		return fmt.Errorf("a conversation is a JSON object with conversations")
	}
	return fmt.Errorf("a record is a JSON object with messages or prompt")
}

// slowPath reports a syntax error as such, and decodes a record whose
// fields have the wrong shape again with slow, to name the field.
func slowPath(err error, b []byte, slow func([]byte) (Record, string, error)) (Record, string, error) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Record{}, "", fmt.Errorf("invalid JSON: %w", err)
	}
	return slow(b)
}

type jsonlRecord struct {
	Messages     []json.RawMessage `json:"messages"`
	Prompt       json.RawMessage   `json:"prompt"`
	MaxTokens    json.RawMessage   `json:"max_tokens"`
	OutputTokens json.RawMessage   `json:"output_tokens"`
}

type rawMessage struct {
	Role    json.RawMessage `json:"role"`
	Content json.RawMessage `json:"content"`
}

func decodeJSONL(b []byte) (Record, string, error) {
	var r jsonlRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, "", fmt.Errorf("messages: must be a list of {role, content} objects")
	}
	msgs := make([]rawMessage, len(r.Messages))
	for i, raw := range r.Messages {
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			return Record{}, "", fmt.Errorf("messages[%d]: must be a {role, content} object", i)
		}
	}
	if r.Messages == nil {
		msgs = nil
	}
	return jsonlFields(msgs, r.Prompt, r.MaxTokens, r.OutputTokens)
}

func jsonlFields(msgs []rawMessage, prompt, maxTokens, outputTokens json.RawMessage) (Record, string, error) {
	var rec Record
	var err error
	if rec.OutputTokens, err = positiveInt("max_tokens", maxTokens); err != nil {
		return rec, "", err
	}
	if rec.OutputTokens == 0 {
		if rec.OutputTokens, err = positiveInt("output_tokens", outputTokens); err != nil {
			return rec, "", err
		}
	}
	switch {
	case msgs != nil:
		return jsonlMessages(rec, msgs)
	case prompt != nil:
		p, err := text("prompt", prompt)
		if err != nil {
			return rec, "", err
		}
		if strings.TrimSpace(p) == "" {
			return rec, SkipNoUserTurn, nil
		}
		rec.Messages = []Message{{Role: "user", Content: p}}
		rec.InputTokens = estimate(rec.Messages)
		return rec, "", nil
	}
	return rec, "", fmt.Errorf("messages: missing (a record has messages or prompt)")
}

// jsonlMessages keeps the messages up to the last user turn as the prompt;
// the assistant answer after it, when the record has no output length,
// gives one.
func jsonlMessages(rec Record, raws []rawMessage) (Record, string, error) {
	msgs := make([]Message, 0, len(raws))
	for i, m := range raws {
		role, err := text(fmt.Sprintf("messages[%d].role", i), m.Role)
		if err != nil || role == "" {
			return rec, "", fmt.Errorf("messages[%d].role: must be a non-empty string", i)
		}
		content, err := text(fmt.Sprintf("messages[%d].content", i), m.Content)
		if err != nil {
			return rec, "", err
		}
		msgs = append(msgs, Message{Role: role, Content: content})
	}
	last := -1
	for i, m := range msgs {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 {
		return rec, SkipNoUserTurn, nil
	}
	if rec.OutputTokens == 0 && last+1 < len(msgs) && msgs[last+1].Role == "assistant" {
		rec.OutputTokens = tokensOf(msgs[last+1].Content)
	}
	rec.Messages = msgs[:last+1]
	rec.InputTokens = estimate(rec.Messages)
	return rec, "", nil
}

type shareGPTRecord struct {
	Conversations []json.RawMessage `json:"conversations"`
}

type shareGPTTurn struct {
	From  json.RawMessage `json:"from"`
	Value json.RawMessage `json:"value"`
}

// shareGPTRoles maps the speakers ShareGPT-format files use to chat roles;
// other turns (function_call, observation, ...) are not part of the prompt.
var shareGPTRoles = map[string]string{
	"human": "user", "user": "user",
	"gpt": "assistant", "chatgpt": "assistant", "bard": "assistant", "bing": "assistant", "assistant": "assistant", "model": "assistant",
	"system": "system",
}

// decodeShareGPT takes the system turns before the first human turn and
// that turn as the prompt, the first answer after it as the output length,
// and every later human turn, with the first answer after it, as a turn of
// a multi-turn session.
func decodeShareGPT(b []byte) (Record, string, error) {
	var r shareGPTRecord
	if err := json.Unmarshal(b, &r); err != nil || r.Conversations == nil {
		return Record{}, "", fmt.Errorf("conversations: must be a list of {from, value} objects")
	}
	turns := make([]shareGPTTurn, len(r.Conversations))
	for i, raw := range r.Conversations {
		if err := json.Unmarshal(raw, &turns[i]); err != nil {
			return Record{}, "", fmt.Errorf("conversations[%d]: must be a {from, value} object", i)
		}
	}
	return shareGPTTurns(turns)
}

func shareGPTTurns(turns []shareGPTTurn) (Record, string, error) {
	var rec Record
	if turns == nil {
		return rec, "", fmt.Errorf("conversations: must be a list of {from, value} objects")
	}
	answered := false // the latest human turn has its answer
	for i, t := range turns {
		from, err := text(fmt.Sprintf("conversations[%d].from", i), t.From)
		if err == nil {
			var value string
			if value, err = text(fmt.Sprintf("conversations[%d].value", i), t.Value); err == nil {
				answered = rec.take(shareGPTRoles[strings.ToLower(from)], value, answered)
				continue
			}
		}
		if rec.OutputTokens > 0 || len(rec.Turns) > 0 {
			break // the prompt is whole; a bad later turn only ends the conversation early
		}
		return rec, "", err
	}
	if rec.InputTokens == 0 {
		return rec, SkipNoUserTurn, nil
	}
	return rec, "", nil
}

// take adds one ShareGPT turn of role to the record: the prompt's system
// and first human turn, the first answer's length, then later human turns
// and their first answers. It returns whether the latest human turn has
// its answer.
func (rec *Record) take(role, value string, answered bool) bool {
	switch {
	case rec.InputTokens == 0 && role == "system":
		rec.Messages = append(rec.Messages, Message{Role: role, Content: value})
	case rec.InputTokens == 0 && role == "user":
		rec.Messages = append(rec.Messages, Message{Role: role, Content: value})
		rec.InputTokens = estimate(rec.Messages)
	case rec.InputTokens > 0 && role == "user":
		rec.Turns = append(rec.Turns, Turn{User: value})
		return false
	case rec.InputTokens > 0 && role == "assistant" && !answered:
		if n := len(rec.Turns); n > 0 {
			rec.Turns[n-1].OutputTokens = tokensOf(value)
		} else {
			rec.OutputTokens = tokensOf(value)
		}
		return true
	}
	return answered
}

// text reads a JSON string, or a list of {"type": "text", "text"} parts
// (OpenAI's content parts), as one string.
func text(field string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("%s: must be a string or a list of text parts, got %s", field, clip(raw))
	}
	if raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil // valid JSON without escapes: the text itself
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("%s: must be a string or a list of text parts, got %s", field, clip(raw))
	}
	var sb strings.Builder
	for i, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("%s[%d].type: %q parts cannot be sent as a text prompt", field, i, p.Type)
		}
		sb.WriteString(p.Text)
	}
	return sb.String(), nil
}

func positiveInt(field string, raw json.RawMessage) (int, error) {
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil || n < 1 || n != float64(int(n)) || n > 1<<24 {
		return 0, fmt.Errorf("%s: must be a whole number from 1 to 16777216, got %s", field, clip(raw))
	}
	return int(n), nil
}

func clip(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// MessageOverhead is the chat framing estimate per message, in tokens.
const MessageOverhead = 4

// Tokens is the estimated token count of n bytes of text (BytesPerToken
// bytes each, rounded up): the estimate live mode sizes every prompt with.
func Tokens(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

func tokensOf(s string) int { return Tokens(len(s)) }

func estimate(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += MessageOverhead + tokensOf(m.Content)
	}
	return n
}
