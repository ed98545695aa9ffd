package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"strings"
	"unicode/utf8"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// chatJSONReader reads the common shapes of chat-message JSON without
// encoding/json: an array of messages, or an object holding "system",
// "prompt" and "messages" (the Vercel AI SDK's ai.prompt), or one message
// object (Langfuse's output), where every
// message has only "role", "content" (a string, or an array of text parts
// {"type":"text","text":...}), "name" and "finish_reason", each of the
// expected JSON type and given once. The result is exactly what
// messagesFromJSON returns for such a document. Anything else (other
// members, tool calls, null, duplicate keys, invalid UTF-8, syntax errors)
// is not handled and the caller takes messagesFromJSON, so the two never
// disagree (FuzzChatJSONReader checks it). Parts are carved from arena,
// which the owner resets once per build (the parts of every document read
// in one build stay valid until its JSON is written), and the messages are
// appended to the reader's reused slices, valid until the next read.
type chatJSONReader struct {
	s      string
	msgs   []message
	system []msgPart
	arena  []msgPart
}

// read parses s; handled is false when s is not one of the shapes above.
func (r *chatJSONReader) read(s string, dir direction) (msgs []message, system []msgPart, handled bool) {
	t := strings.TrimSpace(s)
	if t == "" || !utf8.ValidString(t) {
		return nil, nil, false
	}
	clear(r.msgs)
	clear(r.system)
	r.s, r.msgs, r.system = t, r.msgs[:0], r.system[:0]
	var end int
	var ok bool
	switch t[0] {
	case '[':
		end, ok = r.messages(0, dir)
	case '{':
		// One message object, else the prompt object.
		mark := len(r.arena)
		if end, ok = r.message(0, dir); !ok {
			r.arena = r.arena[:mark]
			end, ok = r.prompt(dir)
		}
	}
	if !ok || jsonscan.SkipSpace(t, end) != len(t) {
		return nil, nil, false
	}
	return r.msgs, r.system, true
}

// members walks the members of the object at r.s[i] (walkMembers).
func (r *chatJSONReader) members(i int, fn func(key string, at int) (int, bool)) (int, bool) {
	return walkMembers(r.s, i, fn)
}

// elements walks the elements of the array at s[i] == '['.
func (r *chatJSONReader) elements(i int, fn func(at int) (int, bool)) (int, bool) {
	s := r.s
	if i >= len(s) || s[i] != '[' {
		return 0, false
	}
	i = jsonscan.SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = fn(i); !ok {
			return 0, false
		}
		i = jsonscan.SkipSpace(s, i)
		if i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case ']':
			return i + 1, true
		case ',':
			i = jsonscan.SkipSpace(s, i+1)
		default:
			return 0, false
		}
	}
}

// str reads the string at s[i].
func (r *chatJSONReader) str(i int) (string, int, bool) {
	if i >= len(r.s) || r.s[i] != '"' {
		return "", 0, false
	}
	return scanString(r.s, i)
}

// onceStr reads the string value at r.s[at] into *dst for the member whose
// bit in seen is b, failing on a repeated key or a value of another type.
func (r *chatJSONReader) onceStr(seen *uint8, b uint8, at int, dst *string) (int, bool) {
	if !once(seen, b) {
		return 0, false
	}
	v, next, ok := r.str(at)
	*dst = v
	return next, ok
}

// once sets bit b in seen, failing when it was set (a duplicate key).
func once(seen *uint8, b uint8) bool {
	if *seen&b != 0 {
		return false
	}
	*seen |= b
	return true
}

// prompt reads {"system": "...", "prompt": "...", "messages": [...]}.
func (r *chatJSONReader) prompt(dir direction) (int, bool) {
	var system, prompt string
	var seen uint8
	var msgsAt int
	end, ok := r.members(0, func(key string, at int) (int, bool) {
		switch key {
		case "system":
			return r.onceStr(&seen, 1, at, &system)
		case "prompt":
			return r.onceStr(&seen, 2, at, &prompt)
		case "messages":
			if !once(&seen, 4) || at >= len(r.s) || r.s[at] != '[' {
				return 0, false
			}
			msgsAt = at
			return skipValue(r.s, at)
		}
		return 0, false
	})
	if !ok {
		return 0, false
	}
	if system != "" {
		r.system = append(r.system, textPart(system))
	}
	switch {
	case seen&4 != 0:
		if _, ok := r.messages(msgsAt, dir); !ok {
			return 0, false
		}
		if seen&2 != 0 && prompt != "" {
			r.text("user", prompt, dir)
		}
	case seen&2 != 0:
		r.text(defaultRole(dir), prompt, dir)
	default:
		return 0, false
	}
	return end, true
}

// text adds a message holding one text part, as messagesFromJSON does for
// a string content.
func (r *chatJSONReader) text(role, content string, dir direction) {
	start := len(r.arena)
	r.arena = append(r.arena, textPart(content))
	r.add(message{Role: role, Parts: r.arena[start:len(r.arena):len(r.arena)]}, dir)
}

func (r *chatJSONReader) add(m message, dir direction) {
	if m.Role == "system" && dir == dirInput {
		r.system = append(r.system, m.Parts...)
		return
	}
	r.msgs = append(r.msgs, m)
}

// messages reads an array of messages.
func (r *chatJSONReader) messages(i int, dir direction) (int, bool) {
	return r.elements(i, func(at int) (int, bool) { return r.message(at, dir) })
}

// message reads one message object and adds it.
func (r *chatJSONReader) message(at int, dir direction) (int, bool) {
	var m message
	var seen uint8
	start := len(r.arena)
	end, ok := r.members(at, func(key string, at int) (int, bool) {
		switch key {
		case "role":
			return r.onceStr(&seen, 1, at, &m.Role)
		case "name":
			return r.onceStr(&seen, 2, at, &m.Name)
		case "finish_reason":
			var f string
			next, ok := r.onceStr(&seen, 4, at, &f)
			if dir == dirOutput && f != "" {
				m.FinishReason, m.HasFinish = f, true
			}
			return next, ok
		case "content":
			if !once(&seen, 8) || at >= len(r.s) {
				return 0, false
			}
			if r.s[at] == '"' {
				v, next, ok := r.str(at)
				r.arena = append(r.arena, textPart(v))
				return next, ok
			}
			return r.textParts(at)
		}
		return 0, false
	})
	// A tool message's string content is a tool call response: left to
	// messagesFromJSON.
	if !ok || m.Role == "" || m.Role == "tool" && seen&8 != 0 {
		return 0, false
	}
	m.Parts = r.arena[start:len(r.arena):len(r.arena)]
	if len(m.Parts) == 0 {
		m.Parts = []msgPart{}
	}
	r.add(m, dir)
	return end, true
}

// textParts reads an array of {"type":"text"|"input_text"|"output_text","text":"..."}.
func (r *chatJSONReader) textParts(i int) (int, bool) {
	return r.elements(i, func(at int) (int, bool) {
		var typ, text string
		var seen uint8
		end, ok := r.members(at, func(key string, at int) (int, bool) {
			switch key {
			case "type":
				return r.onceStr(&seen, 1, at, &typ)
			case "text":
				return r.onceStr(&seen, 2, at, &text)
			}
			return 0, false
		})
		if !ok {
			return 0, false
		}
		switch typ {
		case "text", "input_text", "output_text":
		default:
			return 0, false
		}
		r.arena = append(r.arena, textPart(text))
		return end, true
	})
}
