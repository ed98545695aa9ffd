package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// The GenAI message JSON schema (gen_ai.input.messages / gen_ai.output.messages):
// each message has a role and a list of typed parts.

type msgPart struct {
	Type    string `json:"type"`
	Content string `json:"content,omitempty"`
	// HasContent writes content even when empty (text and reasoning parts).
	HasContent bool            `json:"-"`
	ID         string          `json:"id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Response   json.RawMessage `json:"response,omitempty"`
	Modality   string          `json:"modality,omitempty"`
	URI        string          `json:"uri,omitempty"`
}

type message struct {
	Role         string
	Parts        []msgPart
	Name         string
	FinishReason string
	HasFinish    bool // FinishReason is set (an empty one is written too)
}

type toolDef struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

func textPart(s string) msgPart { return msgPart{Type: "text", Content: s, HasContent: true} }

// rawJSON keeps s as JSON when it is a JSON value, else as a JSON string.
func rawJSON(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t != "" && (t[0] == '{' || t[0] == '[') && jsonscan.Valid(t) {
		return appendCompact(make([]byte, 0, len(t)), t)
	}
	return appendString(make([]byte, 0, len(s)+2), s)
}

func rawAny(x any) json.RawMessage {
	if s, ok := x.(string); ok {
		return rawJSON(s)
	}
	if x == nil {
		return nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil
	}
	return b
}

func marshalJSON(x any) string {
	// Generic messages (maps, lists, strings, booleans, null) are written
	// directly; anything else (numbers, other types) by encoding/json.
	var stack [512]byte
	if b, ok := appendGeneric(stack[:0], x); ok {
		return string(b)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// appendGeneric appends x as encoding/json (HTML escaping off) writes it,
// for maps (keys sorted), lists, strings, booleans and nil; ok is false for
// anything else, and b is then not to be used.
func appendGeneric(b []byte, x any) ([]byte, bool) {
	switch v := x.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, v), true
	case bool:
		if v {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendGeneric(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		var keyBuf [8]string
		keys := keyBuf[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendGeneric(b, v[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}
