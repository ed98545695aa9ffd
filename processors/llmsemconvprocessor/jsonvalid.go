package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

// validJSON reports whether s is one valid JSON value with optional
// surrounding whitespace: the same answer as encoding/json.Valid (which
// accepts any bytes >= 0x80 inside strings and nests at most 10,000 levels
// deep), without its per-byte state machine. FuzzValidJSON holds the two to
// the same result.
func validJSON(s string) bool {
	end, ok := validValue(s, skipSpace(s, 0))
	return ok && skipSpace(s, end) == len(s)
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

// validValue checks the value starting at s[i] and returns its end. Objects
// and arrays are walked with an explicit stack of open containers ('{' or
// '['), so that deep nesting cannot exhaust the goroutine stack.
func validValue(s string, i int) (int, bool) {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	for {
		// A value starts at s[i].
		if i >= len(s) {
			return 0, false
		}
		switch c := s[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxJSONDepth {
				return 0, false
			}
			stack = append(stack, c)
			i = skipSpace(s, i+1)
			if i < len(s) && (c == '{' && s[i] == '}' || c == '[' && s[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				var ok bool
				if i, ok = validKey(s, i); !ok {
					return 0, false
				}
			}
			continue
		case c == '"':
			end, ok := validString(s, i)
			if !ok {
				return 0, false
			}
			i = end
		case c == 't':
			if !hasPrefixAt(s, i, "true") {
				return 0, false
			}
			i += 4
		case c == 'f':
			if !hasPrefixAt(s, i, "false") {
				return 0, false
			}
			i += 5
		case c == 'n':
			if !hasPrefixAt(s, i, "null") {
				return 0, false
			}
			i += 4
		default:
			end, ok := validNumber(s, i)
			if !ok {
				return 0, false
			}
			i = end
		}
		// A value ended at s[i]: close containers or go on to the next member.
		for {
			if len(stack) == 0 {
				return i, true
			}
			i = skipSpace(s, i)
			if i >= len(s) {
				return 0, false
			}
			top := stack[len(stack)-1]
			if s[i] == ',' {
				i = skipSpace(s, i+1)
				if top == '{' {
					var ok bool
					if i, ok = validKey(s, i); !ok {
						return 0, false
					}
				}
				break
			}
			if top == '{' && s[i] == '}' || top == '[' && s[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return 0, false
		}
	}
}

// validKey checks `"key" :` at s[i] and returns where the member's value starts.
func validKey(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return 0, false
	}
	end, ok := validString(s, i)
	if !ok {
		return 0, false
	}
	i = skipSpace(s, end)
	if i >= len(s) || s[i] != ':' {
		return 0, false
	}
	return skipSpace(s, i+1), true
}

// validString checks the string starting at s[i] == '"' and returns its end.
func validString(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); {
		// Past the first bytes (most keys end there), plain bytes eight at
		// a time (no control character, quote or backslash; bytes >= 0x80
		// are accepted as encoding/json does).
		if j-i > 8 {
			for j+8 <= len(s) && plainOrHigh8(load64(s, j)) {
				j += 8
			}
			if j >= len(s) {
				break
			}
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\':
			if j+1 >= len(s) {
				return 0, false
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(s) {
					return 0, false
				}
				for k := j + 2; k < j+6; k++ {
					if !isHex(s[k]) {
						return 0, false
					}
				}
				j += 6
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		default:
			j++
		}
	}
	return 0, false
}

// plainOrHigh8 reports whether none of the eight bytes in x is a control
// character, '"' or '\\' (bytes >= 0x80 count as plain).
func plainOrHigh8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	// A byte below 0x20 with its high bit clear; bytes >= 0x80 cannot be
	// mistaken for one since ^x clears their high bit.
	return ((x-0x20*ones) & ^x & highs)|hasZero(x^('"'*ones))|hasZero(x^('\\'*ones)) == 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hasPrefixAt(s string, i int, p string) bool {
	return len(s)-i >= len(p) && s[i:i+len(p)] == p
}

// validNumber checks -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? at s[i].
func validNumber(s string, i int) (int, bool) {
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	return i, true
}
