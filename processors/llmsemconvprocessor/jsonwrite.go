package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// A small JSON writer for the GenAI message schema: the same output as
// encoding/json with HTML escaping off, without reflection.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain ASCII bytes (no control character, quote or
		// backslash) at a time, in all but short strings (roles, ids).
		if len(s) >= 16 {
			for i+8 <= len(s) && plain8(jsonscan.Load64(s, i)) {
				i += 8
			}
			if i >= len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether none of the eight bytes in x needs escaping or
// UTF-8 decoding: all are ASCII, none a control character, '"' or '\\'.
func plain8(x uint64) bool {
	return x&0x8080808080808080 == 0 && jsonscan.PlainOrHigh8(x)
}

// appendRaw appends a JSON value compacted (as json.Compact does); a value
// that is not valid JSON is appended as it is.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if bytes.IndexAny(raw, " \t\r\n") < 0 || !json.Valid(raw) {
		return append(b, raw...)
	}
	return appendCompact(b, []byte(raw))
}

// appendCompact appends the valid JSON text s without the whitespace
// between its tokens.
func appendCompact[T string | []byte](b []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			// Copy the string as it is: skip to its closing quote.
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ' ', '\t', '\r', '\n':
			b = append(b, s[start:i]...)
			start = i + 1
		}
	}
	return append(b, s[start:]...)
}

func appendField(b []byte, first bool, name string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func appendParts(b []byte, parts []msgPart) []byte {
	b = append(b, '[')
	for i := range parts {
		p := &parts[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendField(b, true, "type")
		b = appendString(b, p.Type)
		if p.HasContent || p.Content != "" {
			b = appendField(b, false, "content")
			b = appendString(b, p.Content)
		}
		if p.ID != "" {
			b = appendField(b, false, "id")
			b = appendString(b, p.ID)
		}
		if p.Name != "" {
			b = appendField(b, false, "name")
			b = appendString(b, p.Name)
		}
		if len(p.Arguments) > 0 {
			b = appendField(b, false, "arguments")
			b = appendRaw(b, p.Arguments)
		}
		if len(p.Response) > 0 {
			b = appendField(b, false, "response")
			b = appendRaw(b, p.Response)
		}
		if p.Modality != "" {
			b = appendField(b, false, "modality")
			b = appendString(b, p.Modality)
		}
		if p.URI != "" {
			b = appendField(b, false, "uri")
			b = appendString(b, p.URI)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendMessages(b []byte, msgs []message) []byte {
	b = append(b, '[')
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendField(b, true, "role")
		b = appendString(b, m.Role)
		b = appendField(b, false, "parts")
		b = appendParts(b, m.Parts)
		if m.Name != "" {
			b = appendField(b, false, "name")
			b = appendString(b, m.Name)
		}
		if m.HasFinish {
			b = appendField(b, false, "finish_reason")
			b = appendString(b, m.FinishReason)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendToolDefs(b []byte, defs []toolDef) []byte {
	b = append(b, '[')
	for i := range defs {
		d := &defs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendField(b, true, "type")
		b = appendString(b, d.Type)
		b = appendField(b, false, "name")
		b = appendString(b, d.Name)
		if d.Description != "" {
			b = appendField(b, false, "description")
			b = appendString(b, d.Description)
		}
		if len(d.Parameters) > 0 {
			b = appendField(b, false, "parameters")
			b = appendRaw(b, d.Parameters)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
