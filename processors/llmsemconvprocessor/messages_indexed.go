package llmsemconvprocessor

import (
	"slices"
	"strconv"
	"strings"
)

// --- indexed attributes (llm.input_messages.N.*, gen_ai.prompt.N.*) -------

type indexedMsg struct {
	role, content, name, toolCallID, finish string
	contents                                sparse[indexedContent]
	toolCalls                               sparse[indexedToolCall]
}

// sparse is a small list of values by index, cheaper than a map for the
// handful of messages, parts and tool calls of one span.
type sparse[T any] struct{ s []slot[T] }

type slot[T any] struct {
	n int
	v T
}

// at returns the value at index n, adding it when missing. The pointer is
// valid until the next call.
func (x *sparse[T]) at(n int) *T {
	for i := range x.s {
		if x.s[i].n == n {
			return &x.s[i].v
		}
	}
	x.s = append(x.s, slot[T]{n: n})
	return &x.s[len(x.s)-1].v
}

// sorted returns the values in index order.
func (x *sparse[T]) sorted() []slot[T] {
	if len(x.s) < 2 {
		return x.s
	}
	slices.SortFunc(x.s, func(a, b slot[T]) int { return a.n - b.n })
	return x.s
}

type indexedContent struct{ typ, text, url string }

type indexedToolCall struct{ id, name, args string }

type indexedTool struct{ name, description, parameters, schema string }

// indexedAcc accumulates the attributes of one indexed message source.
type indexedAcc struct {
	src   *msgSource
	msgs  sparse[indexedMsg]
	tools sparse[indexedTool]
	keys  []string
}

// splitIndex splits "3.message.role" into 3 and "message.role".
func splitIndex(rest string) (int, string, bool) {
	i := strings.IndexByte(rest, '.')
	if i <= 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil || n < 0 || n > 1<<20 {
		return 0, "", false
	}
	return n, rest[i+1:], true
}

// add records one indexed attribute; false when the key has no known meaning.
func (a *indexedAcc) add(key, value string) bool {
	n, rest, ok := splitIndex(key[len(a.src.prefix):])
	if !ok {
		return false
	}
	switch a.src.layout {
	case layoutOpenInferenceTools, layoutIndexedTools:
		t := a.tools.at(n)
		switch rest {
		case "tool.json_schema":
			t.schema = value
		case "name":
			t.name = value
		case "description":
			t.description = value
		case "parameters":
			t.parameters = value
		default:
			return false
		}
		return true
	}
	m := a.msgs.at(n)
	if a.src.layout == layoutOpenInference {
		if !strings.HasPrefix(rest, "message.") {
			return false
		}
		rest = rest[len("message."):]
	}
	switch rest {
	case "role":
		m.role = value
	case "content":
		m.content = value
	case "name":
		m.name = value
	case "tool_call_id":
		m.toolCallID = value
	case "finish_reason":
		m.finish = value
	default:
		return m.addNested(a.src.layout, rest, value)
	}
	return true
}

func (m *indexedMsg) addNested(lay layout, rest, value string) bool {
	switch {
	case strings.HasPrefix(rest, "contents."):
		n, field, ok := splitIndex(rest[len("contents."):])
		if !ok {
			return false
		}
		c := m.contents.at(n)
		switch strings.TrimPrefix(field, "message_content.") {
		case "type":
			c.typ = value
		case "text":
			c.text = value
		case "image.image.url", "image.url":
			c.url = value
		default:
			return false
		}
		return true
	case strings.HasPrefix(rest, "tool_calls."):
		n, field, ok := splitIndex(rest[len("tool_calls."):])
		if !ok {
			return false
		}
		tc := m.toolCalls.at(n)
		if lay == layoutOpenInference {
			field = strings.TrimPrefix(field, "tool_call.")
		}
		switch field {
		case "id":
			tc.id = value
		case "function.name", "name":
			tc.name = value
		case "function.arguments", "arguments":
			tc.args = value
		default:
			return false
		}
		return true
	case rest == "function_call.name":
		m.toolCall(0).name = value
		return true
	case rest == "function_call.arguments":
		m.toolCall(0).args = value
		return true
	}
	return false
}

func (m *indexedMsg) toolCall(n int) *indexedToolCall { return m.toolCalls.at(n) }

// appendMessages appends the accumulated messages to dst. Their parts are
// appended to *arena and each message gets its own capacity-bounded window
// of it, so that the arena is reused from item to item.
func (a *indexedAcc) appendMessages(dst []message, arena *[]msgPart, dir direction) []message {
	for i := range a.msgs.sorted() {
		im := &a.msgs.s[i].v
		msg := message{Role: im.role, Name: im.name}
		if msg.Role == "" {
			msg.Role = defaultRole(dir)
		}
		parts := *arena
		start := len(parts)
		if msg.Role == "tool" {
			parts = append(parts, msgPart{Type: "tool_call_response", ID: im.toolCallID, Response: rawJSON(im.content)})
		} else if im.content != "" {
			if ps, ok := partsFromJSON(im.content); ok {
				parts = append(parts, ps...)
			} else {
				parts = append(parts, textPart(im.content))
			}
		}
		for ci := range im.contents.sorted() {
			c := &im.contents.s[ci].v
			switch {
			case c.url != "":
				parts = append(parts, uriPart(c.url))
			case c.text != "" || c.typ == "text":
				parts = append(parts, textPart(c.text))
			}
		}
		for ti := range im.toolCalls.sorted() {
			tc := &im.toolCalls.s[ti].v
			parts = append(parts, msgPart{Type: "tool_call", ID: tc.id, Name: tc.name, Arguments: rawJSON(tc.args)})
		}
		msg.Parts = parts[start:len(parts):len(parts)]
		*arena = parts
		if dir == dirOutput && im.finish != "" {
			msg.FinishReason, msg.HasFinish = im.finish, true
		}
		dst = append(dst, msg)
	}
	return dst
}

func (a *indexedAcc) appendToolDefs(out []toolDef) []toolDef {
	for i := range a.tools.sorted() {
		t := &a.tools.s[i].v
		if t.schema != "" {
			if d, ok := toolDefFromJSON(t.schema); ok {
				out = append(out, d)
				continue
			}
		}
		d := toolDef{Type: "function", Name: t.name, Description: t.description}
		if t.parameters != "" {
			d.Parameters = rawJSON(t.parameters)
		}
		out = append(out, d)
	}
	return out
}
