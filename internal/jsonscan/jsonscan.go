// Package jsonscan holds the JSON primitives shared by the scanners that
// read JSON without decoding it: the SSE chunk scanner (internal/sse) and
// llm_semconv's attribute readers. Every function works on a string or a
// byte slice and gives encoding/json.Valid's answer for the grammar it
// checks (bytes >= 0x80 are accepted inside strings, nesting is limited to
// MaxDepth); FuzzValid holds Valid to encoding/json.Valid.
package jsonscan // import "github.com/otelcol-llm/otelcol-llm/internal/jsonscan"

// Text is the input of the scanners: JSON text held in a string or bytes.
type Text interface{ ~string | ~[]byte }

// MaxDepth is encoding/json's nesting limit: deeper values are invalid.
const MaxDepth = 10000

// Valid reports whether s is one valid JSON value with optional white
// space around it, as encoding/json.Valid does.
func Valid[T Text](s T) bool {
	end, ok := Value(s, SkipSpace(s, 0))
	return ok && SkipSpace(s, end) == len(s)
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace[T Text](s T, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Value checks the value starting at s[i] and returns its end. Objects and
// arrays are walked with an explicit stack of open containers ('{' or '['),
// so that deep nesting cannot exhaust the goroutine stack.
func Value[T Text](s T, i int) (int, bool) {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	for {
		// A value starts at s[i].
		if i >= len(s) {
			return 0, false
		}
		c := s[i]
		if c == '{' || c == '[' {
			if len(stack) >= MaxDepth {
				return 0, false
			}
			var ok, empty bool
			if i, empty, ok = open(s, i); !ok {
				return 0, false
			}
			if !empty {
				stack = append(stack, c)
				continue
			}
		} else {
			var ok bool
			if i, ok = scalar(s, i); !ok {
				return 0, false
			}
		}
		// A value ended at s[i]: close containers or go on to the next member.
		var ok bool
		if i, stack, ok = closeOrNext(s, i, stack); !ok {
			return 0, false
		}
		if len(stack) == 0 {
			return i, true
		}
	}
}

// open reads the '{' or '[' at s[i] up to where its first value starts (past
// the first member's name for an object); empty says it closed at once, and
// i is then past the closing bracket.
func open[T Text](s T, i int) (next int, empty, ok bool) {
	c := s[i]
	i = SkipSpace(s, i+1)
	if i < len(s) && (c == '{' && s[i] == '}' || c == '[' && s[i] == ']') {
		return i + 1, true, true
	}
	if c == '{' {
		i, ok = Key(s, i)
		return i, false, ok
	}
	return i, false, true
}

// closeOrNext is called where a value ended: it closes the containers that
// end there and returns where the next value starts (after a ',' and, in an
// object, the member's name), or the end of the outermost value when the
// stack is empty.
func closeOrNext[T Text](s T, i int, stack []byte) (int, []byte, bool) {
	for len(stack) > 0 {
		i = SkipSpace(s, i)
		if i >= len(s) {
			return 0, stack, false
		}
		top := stack[len(stack)-1]
		switch {
		case s[i] == ',':
			i = SkipSpace(s, i+1)
			if top == '{' {
				var ok bool
				i, ok = Key(s, i)
				return i, stack, ok
			}
			return i, stack, true
		case top == '{' && s[i] == '}' || top == '[' && s[i] == ']':
			stack = stack[:len(stack)-1]
			i++
		default:
			return 0, stack, false
		}
	}
	return i, stack, true
}

// scalar checks the string, number or literal at s[i] and returns its end.
func scalar[T Text](s T, i int) (int, bool) {
	switch s[i] {
	case '"':
		end, _, ok := String(s, i)
		return end, ok
	case 't', 'f', 'n':
		return Literal(s, i)
	}
	end, _, ok := Number(s, i)
	return end, ok
}

// Key checks `"name" :` at s[i] and returns where the member's value starts.
func Key[T Text](s T, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return 0, false
	}
	end, _, ok := String(s, i)
	if !ok {
		return 0, false
	}
	i = SkipSpace(s, end)
	if i >= len(s) || s[i] != ':' {
		return 0, false
	}
	return SkipSpace(s, i+1), true
}

// Literal checks true, false or null at s[i] and returns its end.
func Literal[T Text](s T, i int) (int, bool) {
	var lit string
	switch {
	case i >= len(s):
		return 0, false
	case s[i] == 't':
		lit = "true"
	case s[i] == 'f':
		lit = "false"
	case s[i] == 'n':
		lit = "null"
	default:
		return 0, false
	}
	if len(s)-i < len(lit) || string(s[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// IsNull reports whether null starts at s[i].
func IsNull[T Text](s T, i int) bool {
	return i+4 <= len(s) && s[i] == 'n' && s[i+1] == 'u' && s[i+2] == 'l' && s[i+3] == 'l'
}

// String checks the string starting at s[i] == '"' and returns the index
// after its closing quote and whether it holds escapes.
func String[T Text](s T, i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(s); {
		// Past the first bytes (most keys end there), plain bytes eight at
		// a time (no control character, quote or backslash; bytes >= 0x80
		// are accepted as encoding/json does).
		if j-i > 8 {
			for j+8 <= len(s) && PlainOrHigh8(Load64(s, j)) {
				j += 8
			}
			if j >= len(s) {
				break
			}
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			n := escapeLen(s, j)
			if n == 0 {
				return 0, escaped, false
			}
			escaped = true
			j += n
		case c < 0x20:
			return 0, escaped, false
		default:
			j++
		}
	}
	return 0, escaped, false
}

// escapeLen is the length of the valid escape sequence at s[j] == '\\', 0
// when it is not one.
func escapeLen[T Text](s T, j int) int {
	if j+1 >= len(s) {
		return 0
	}
	switch s[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if j+6 > len(s) {
			return 0
		}
		for k := j + 2; k < j+6; k++ {
			if !isHex(s[k]) {
				return 0
			}
		}
		return 6
	}
	return 0
}

// PlainOrHigh8 reports whether none of the eight bytes in x is a control
// character, '"' or '\\' (bytes >= 0x80 count as plain).
func PlainOrHigh8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	// A byte below 0x20 with its high bit clear; bytes >= 0x80 cannot be
	// mistaken for one since ^x clears their high bit.
	return ((x-0x20*ones) & ^x & highs)|hasZero(x^('"'*ones))|hasZero(x^('\\'*ones)) == 0
}

// Load64 reads s[i:i+8] as a little-endian word.
func Load64[T Text](s T, i int) uint64 {
	t := s[i : i+8] // one bounds check; the eight loads combine into one
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at s[i] and
// returns its end and whether it is an integer (no fraction, no exponent).
func Number[T Text](s T, i int) (end int, integer, ok bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return 0, false, false
	}
	integer = true
	if i < len(s) && s[i] == '.' {
		integer = false
		if i, ok = moreDigits(s, i+1); !ok {
			return 0, false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		integer = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i, ok = moreDigits(s, i); !ok {
			return 0, false, false
		}
	}
	return i, integer, true
}

// digits returns the end of the run of digits at s[i].
func digits[T Text](s T, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// moreDigits is digits for a run that must not be empty.
func moreDigits[T Text](s T, i int) (int, bool) {
	end := digits(s, i)
	return end, end > i
}
