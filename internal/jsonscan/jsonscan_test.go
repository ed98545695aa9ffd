package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seeds is the shared corpus: valid and invalid documents of every kind the
// grammar distinguishes.
var seeds = []string{
	`{}`, `[]`, ` {"a": [1, -2.5e+3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `, `"plain"`, `0`, `-0.0`, `1E9`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`, `"\x"`, `"\u12g4"`,
	"\"tab\there\"", "\"\xff\xfe high bytes are accepted\"", `{"a":{"b":{"c":[[[]]]}}}`, `{"a":1} x`, ``, ` `, `"unterminated`,
	`{"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}`,
	`[{"a":[]},{}]`, `{"a":[1,{"b":null}],"c":"d"}`, `[[],[[]],{}]`, `{"a" :1 , "b":[ ]}`, `"a long string past the eight-byte fast path \u0041 and more"`,
	`"ends with a backslash \`, `"\u00"`, `[-]`, `[1e+]`, `{"a":tru}`, `[nul]`, `[falsey]`, `{"a":1}}`, `[1]]`, `{"a":1]`,
	`data: {"id":"x","choices":[]}`,
}

// check holds Valid, on a string and on bytes, to encoding/json.Valid.
func check(t *testing.T, s string) {
	t.Helper()
	want := json.Valid([]byte(s))
	require.Equal(t, want, Valid(s), "Valid(%q) as a string", s)
	require.Equal(t, want, Valid([]byte(s)), "Valid(%q) as bytes", s)
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		check(t, s)
	}
	for _, depth := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
		for _, open := range []string{"[", `{"k":`} {
			closeWith := "]"
			if open != "[" {
				closeWith = "}"
			}
			check(t, strings.Repeat(open, depth)+"1"+strings.Repeat(closeWith, depth))
		}
	}
}

func TestValueEnds(t *testing.T) {
	for _, tc := range []struct {
		in  string
		at  int
		end int
	}{
		{`{"a":[1,2]} tail`, 0, 11},
		{`x [true] `, 2, 8},
		{`"s\"q" ,`, 0, 6},
		{`-12.5e3,`, 0, 7},
		{`null}`, 0, 4},
	} {
		end, ok := Value(tc.in, tc.at)
		require.True(t, ok, "%q", tc.in)
		assert.Equal(t, tc.end, end, "%q", tc.in)
	}
}

func TestStringEscapes(t *testing.T) {
	for _, tc := range []struct {
		in      string
		end     int
		escaped bool
		ok      bool
	}{
		{`"plain"`, 7, false, true},
		{`"a\nb"`, 6, true, true},
		{`"\u00e9 and a long tail after the escape"`, 41, true, true},
		{`"bad \q"`, 0, true, false},
		{"\"ctl \x01\"", 0, false, false},
		{`"open`, 0, false, false},
	} {
		end, esc, ok := String(tc.in, 0)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		if tc.ok {
			assert.Equal(t, tc.end, end, "%q", tc.in)
			assert.Equal(t, tc.escaped, esc, "%q", tc.in)
		}
	}
}

func TestNumberInteger(t *testing.T) {
	for in, integer := range map[string]bool{"0": true, "-7": true, "123456789012345678901": true, "1.0": false, "2e3": false, "-0E-1": false} {
		end, isInt, ok := Number(in, 0)
		require.True(t, ok, in)
		assert.Equal(t, len(in), end, in)
		assert.Equal(t, integer, isInt, in)
	}
	for _, in := range []string{"", "-", "01x", ".5", "1.", "1e", "+1"} {
		if end, _, ok := Number(in, 0); ok && end == len(in) {
			t.Errorf("Number(%q) accepted", in)
		}
	}
}

func TestLiteral(t *testing.T) {
	for in, ok := range map[string]bool{"true": true, "false": true, "null": true, "tru": false, "nul": false, "nulL": false, "x": false, "": false} {
		end, got := Literal(in, 0)
		assert.Equal(t, ok, got, in)
		if ok {
			assert.Equal(t, len(in), end, in)
		}
		assert.Equal(t, in == "null", IsNull(in, 0), in)
	}
}

// FuzzValid holds Valid (on strings and bytes) to encoding/json.Valid, and
// String's end and escape flag to what json.Unmarshal makes of the string.
func FuzzValid(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(t, s)
		if len(s) == 0 || s[0] != '"' {
			return
		}
		end, esc, ok := String(s, 0)
		var u string
		decoded := ok && json.Unmarshal([]byte(s[:end]), &u) == nil
		require.Equal(t, ok, decoded, "String(%q)", s)
		if ok && !esc {
			require.True(t, bytes.Equal([]byte(s[1:end-1]), []byte(u)) || !isUTF8(s[1:end-1]), "String(%q) without escapes decodes to itself", s)
		}
	})
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
