package llmsemconvprocessor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var validJSONSeeds = []string{
	`{}`, `[]`, ` {"a": [1, -2.5e+3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `, `"plain"`, `0`, `-0.0`, `1E9`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`, `"\x"`, `"\u12g4"`,
	"\"tab\there\"", "\"\xff\xfe high bytes are accepted\"", `{"a":{"b":{"c":[[[]]]}}}`, `{"a":1} x`, ``, ` `, `"unterminated`,
	`{"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}`,
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		require.Equal(t, json.Valid([]byte(s)), validJSON(s), "%q", s)
		if validJSON(s) {
			checkCompact(t, s)
		}
	}
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, open := range []string{"[", `{"k":`} {
			closeWith := "]"
			if open != "[" {
				closeWith = "}"
			}
			s := strings.Repeat(open, depth) + "1" + strings.Repeat(closeWith, depth)
			require.Equal(t, json.Valid([]byte(s)), validJSON(s), "depth %d %s", depth, open)
		}
	}
}

// checkCompact: appendCompact of a valid document is json.Compact's output.
func checkCompact(t *testing.T, s string) {
	t.Helper()
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, []byte(s)))
	require.Equal(t, want.String(), string(appendCompact(nil, s)), "%q", s)
	require.Equal(t, want.String(), string(appendRaw(nil, json.RawMessage(s))), "%q", s)
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := json.Valid([]byte(s))
		if validJSON(s) != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", s, !want, want)
		}
		if want {
			checkCompact(t, s)
		}
	})
}
