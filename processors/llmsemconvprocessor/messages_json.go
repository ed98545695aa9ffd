package llmsemconvprocessor

import (
	"encoding/json"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// --- JSON chat messages (OpenAI, Vercel AI SDK, Langfuse, GenAI shapes) -----

func toolDefFromJSON(s string) (toolDef, bool) {
	if !jsonscan.Valid(s) {
		return toolDef{}, false
	}
	return toolDefFromValidJSON(s)
}

// toolDefFromValidJSON is toolDefFromJSON for s known to be valid JSON.
func toolDefFromValidJSON(s string) (toolDef, bool) {
	var d toolDef
	var fn, params, schema string
	ok := scanValidMembers(s, func(k string, kind byte, text string) {
		isString, isObject := kind == '"', kind == '{' || kind == '['
		switch k {
		case "name":
			d.Name = ""
			if isString {
				d.Name = text
			}
		case "description":
			d.Description = ""
			if isString {
				d.Description = text
			}
		case "parameters":
			params = ""
			if isObject {
				params = text
			}
		case "inputSchema":
			schema = ""
			if isObject {
				schema = text
			}
		case "function":
			fn = ""
			if isObject {
				fn = text
			}
		}
	})
	if !ok {
		return toolDef{}, false
	}
	if fn != "" {
		return toolDefFromValidJSON(fn)
	}
	if d.Name == "" {
		return toolDef{}, false
	}
	d.Type = "function"
	if params == "" {
		params = schema
	}
	if params != "" {
		// Compacted once here (the document is valid), so that writing it
		// is a copy.
		d.Parameters = appendCompact(make([]byte, 0, len(params)), params)
	}
	return d, true
}

func uriPart(u string) msgPart {
	return msgPart{Type: "uri", Modality: "image", URI: u}
}

func defaultRole(dir direction) string {
	if dir == dirOutput {
		return "assistant"
	}
	return "user"
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

// partsFromJSON reads a JSON array of content parts (OpenAI, Vercel AI SDK
// or GenAI shapes).
func partsFromJSON(s string) ([]msgPart, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	var arr []any
	if err := json.Unmarshal([]byte(t), &arr); err != nil {
		return nil, false
	}
	return partsFromAny(arr)
}

func partsFromAny(arr []any) ([]msgPart, bool) {
	parts := make([]msgPart, 0, len(arr))
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		typ := str(m, "type")
		switch typ {
		case "text", "input_text", "output_text":
			parts = append(parts, textPart(str(m, "text", "content")))
		case "reasoning":
			c := str(m, "text", "content")
			parts = append(parts, msgPart{Type: "reasoning", Content: c, HasContent: true})
		case "image_url":
			u := str(m, "url")
			if iu, ok := m["image_url"].(map[string]any); ok {
				u = str(iu, "url")
			}
			parts = append(parts, uriPart(u))
		case "image":
			parts = append(parts, uriPart(str(m, "image", "url")))
		case "tool-call", "tool_call", "tool_use":
			args := m["args"]
			if args == nil {
				args = m["input"]
			}
			if args == nil {
				args = m["arguments"]
			}
			parts = append(parts, msgPart{Type: "tool_call", ID: str(m, "toolCallId", "id"), Name: str(m, "toolName", "name"), Arguments: rawAny(args)})
		case "tool-result", "tool_call_response", "tool_result":
			res := m["result"]
			if res == nil {
				res = m["output"]
			}
			if res == nil {
				res = m["response"]
			}
			if res == nil {
				res = m["content"]
			}
			parts = append(parts, msgPart{Type: "tool_call_response", ID: str(m, "toolCallId", "id", "tool_use_id"), Response: rawAny(res)})
		default:
			if typ == "" {
				return nil, false
			}
			raw, _ := json.Marshal(m)
			c := string(raw)
			parts = append(parts, msgPart{Type: typ, Content: c, HasContent: true})
		}
	}
	return parts, true
}

// messagesFromJSON reads a chat-shaped JSON value: an array of messages, or
// an object with a "messages" array (and optionally "system" and "prompt").
// System messages are returned separately.
func messagesFromJSON(s string, dir direction) (msgs []message, system []msgPart, ok bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return nil, nil, false
	}
	var x any
	if err := json.Unmarshal([]byte(t), &x); err != nil {
		return nil, nil, false
	}
	arr, system, ok := chatEntries(x, dir)
	if !ok {
		return nil, nil, false
	}
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, nil, false
		}
		msg, ok := messageFromMap(m, dir)
		if !ok {
			return nil, nil, false
		}
		if msg.Role == "system" && dir == dirInput {
			system = append(system, msg.Parts...)
			continue
		}
		msgs = append(msgs, msg)
	}
	return msgs, system, true
}

// chatEntries finds the message entries of a parsed chat value, and the
// system text of an object's "system" field; ok is false for an object
// that holds no messages.
func chatEntries(x any, dir direction) (arr []any, system []msgPart, ok bool) {
	v, isObject := x.(map[string]any)
	if !isObject {
		arr, _ = x.([]any)
		return arr, nil, true
	}
	if sys, ok := v["system"].(string); ok && sys != "" {
		system = append(system, textPart(sys))
	}
	if ms, ok := v["messages"].([]any); ok {
		arr = ms
	} else if p, ok := v["prompt"].(string); ok {
		arr = []any{map[string]any{"role": defaultRole(dir), "content": p}}
	} else if _, isMsg := v["role"]; isMsg {
		arr = []any{v}
	} else {
		return nil, nil, false
	}
	if p, ok := v["prompt"].(string); ok && v["messages"] != nil && p != "" {
		arr = append(arr, map[string]any{"role": "user", "content": p})
	}
	return arr, system, true
}

// messageFromMap reads one chat message: role, name, parts or content,
// tool calls and (for output) the finish reason.
func messageFromMap(m map[string]any, dir direction) (message, bool) {
	role := str(m, "role")
	if role == "" {
		return message{}, false
	}
	msg := message{Role: role, Name: str(m, "name")}
	if ps, ok := m["parts"].([]any); ok {
		parts, ok := partsFromAny(ps)
		if !ok {
			return message{}, false
		}
		msg.Parts = parts
	}
	switch c := m["content"].(type) {
	case string:
		if role == "tool" {
			msg.Parts = append(msg.Parts, msgPart{Type: "tool_call_response", ID: str(m, "tool_call_id", "toolCallId"), Response: rawJSON(c)})
		} else {
			msg.Parts = append(msg.Parts, textPart(c))
		}
	case []any:
		parts, ok := partsFromAny(c)
		if !ok {
			return message{}, false
		}
		msg.Parts = append(msg.Parts, parts...)
	}
	if tcs, ok := m["tool_calls"].([]any); ok {
		msg.Parts = appendToolCalls(msg.Parts, tcs)
	}
	if msg.Parts == nil {
		msg.Parts = []msgPart{}
	}
	if dir == dirOutput {
		if f := str(m, "finish_reason"); f != "" {
			msg.FinishReason, msg.HasFinish = f, true
		}
	}
	return msg, true
}

// appendToolCalls appends the tool_call parts of an OpenAI tool_calls list
// (entries that are no object are skipped).
func appendToolCalls(parts []msgPart, tcs []any) []msgPart {
	for _, tc := range tcs {
		tm, ok := tc.(map[string]any)
		if !ok {
			continue
		}
		p := msgPart{Type: "tool_call", ID: str(tm, "id"), Name: str(tm, "name")}
		if f, ok := tm["function"].(map[string]any); ok {
			p.Name = str(f, "name")
			p.Arguments = rawAny(f["arguments"])
		} else {
			p.Arguments = rawAny(tm["arguments"])
		}
		parts = append(parts, p)
	}
	return parts
}

// toolCallsFromJSON reads the Vercel AI SDK ai.response.toolCalls array.
func toolCallsFromJSON(s string) ([]msgPart, bool) {
	var arr []map[string]any
	if err := json.Unmarshal([]byte(s), &arr); err != nil {
		return nil, false
	}
	parts := make([]msgPart, 0, len(arr))
	for _, m := range arr {
		args := m["args"]
		if args == nil {
			args = m["input"]
		}
		parts = append(parts, msgPart{Type: "tool_call", ID: str(m, "toolCallId", "id"), Name: str(m, "toolName", "name"), Arguments: rawAny(args)})
	}
	return parts, true
}
