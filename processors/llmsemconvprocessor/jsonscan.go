package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"encoding/json"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// scanObject walks the members of a JSON object without building a map:
// fn gets each key and its value as a Go value for scalars (string, float64
// as string via json.Number, bool, nil) or as the raw JSON text of nested
// objects and arrays. It returns false on malformed input.
func scanObject(s string, fn func(key string, value any)) bool {
	return scanMembers(s, func(key string, kind byte, text string) {
		var v any
		switch kind {
		case '"':
			v = text
		case 't':
			v = true
		case 'f':
			v = false
		case 'n':
			v = nil
		case '{', '[':
			v = rawValue(text)
		default:
			v = json.Number(text)
		}
		fn(key, v)
	})
}

// scanMembers is scanObject without boxing: kind is the first byte of the
// value's JSON text ('"' string, 't', 'f', 'n', '{', '[', else a number);
// text is the decoded string for strings and the JSON text otherwise.
func scanMembers(s string, fn func(key string, kind byte, text string)) bool {
	return scanMembersIn(s, false, fn)
}

// scanValidMembers is scanMembers for a document already known to be valid
// JSON: nested objects and arrays are skipped without validating them again.
func scanValidMembers(s string, fn func(key string, kind byte, text string)) bool {
	return scanMembersIn(s, true, fn)
}

func scanMembersIn(s string, valid bool, fn func(key string, kind byte, text string)) bool {
	end, ok := walkMembers(s, jsonscan.SkipSpace(s, 0), func(key string, at int) (int, bool) {
		end, ok := skipValueIn(s, at, valid)
		if !ok {
			return 0, false
		}
		if s[at] != '"' {
			fn(key, s[at], s[at:end])
			return end, true
		}
		str, _, ok := scanString(s, at)
		if !ok {
			return 0, false
		}
		fn(key, '"', str)
		return end, true
	})
	return ok && jsonscan.SkipSpace(s, end) == len(s)
}

// walkMembers walks the members of the object at s[i] == '{': fn gets each
// key and the index of its value, and returns the index after the value. It
// returns the index after the object.
func walkMembers(s string, i int, fn func(key string, at int) (int, bool)) (int, bool) {
	if i >= len(s) || s[i] != '{' {
		return 0, false
	}
	i = jsonscan.SkipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return 0, false
		}
		key, next, ok := scanString(s, i)
		if !ok {
			return 0, false
		}
		i = jsonscan.SkipSpace(s, next)
		if i >= len(s) || s[i] != ':' {
			return 0, false
		}
		if i, ok = fn(key, jsonscan.SkipSpace(s, i+1)); !ok {
			return 0, false
		}
		i = jsonscan.SkipSpace(s, i)
		if i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case '}':
			return i + 1, true
		case ',':
			i = jsonscan.SkipSpace(s, i+1)
		default:
			return 0, false
		}
	}
}

// rawValue is nested JSON text handed to a rule: arrays are decoded (for
// string_array targets), objects stay text.
type rawValue string

// scanString reads the JSON string starting at s[i] == '"': the text
// between the quotes, decoded when it holds escapes.
func scanString(s string, i int) (string, int, bool) {
	end, escaped, ok := jsonscan.String(s, i)
	if !ok {
		return "", 0, false
	}
	if !escaped {
		return s[i+1 : end-1], end, true
	}
	var u string
	if json.Unmarshal([]byte(s[i:end]), &u) != nil {
		return "", 0, false
	}
	return u, end, true
}

// skipValue returns the end of the JSON value starting at s[i].
func skipValue(s string, i int) (int, bool) { return skipValueIn(s, i, false) }

// skipValueIn is skipValue; valid says s is known to be valid JSON, so a
// nested object or array needs no validation of its own.
func skipValueIn(s string, i int, valid bool) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch s[i] {
	case '"':
		_, end, ok := scanString(s, i)
		return end, ok
	case '{', '[':
		if !valid {
			return jsonscan.Value(s, i)
		}
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				_, end, ok := scanString(s, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\r' {
		j++
	}
	lit := s[i:j]
	switch lit {
	case "true", "false", "null":
		return j, true
	}
	if end, _, ok := jsonscan.Number(lit, 0); !ok || end != len(lit) {
		return 0, false
	}
	return j, true
}
