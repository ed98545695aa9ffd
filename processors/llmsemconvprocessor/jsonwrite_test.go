package llmsemconvprocessor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validJSONSeeds are documents valid and not, for the writers' tests.
var validJSONSeeds = []string{
	`{}`, `[]`, ` {"a": [1, -2.5e+3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `, `"plain"`, `0`, `-0.0`, `1E9`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`, `"\x"`, `"\u12g4"`,
	"\"tab\there\"", "\"\xff\xfe high bytes are accepted\"", `{"a":{"b":{"c":[[[]]]}}}`, `{"a":1} x`, ``, ` `, `"unterminated`,
	`{"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}`,
}

func TestAppendCompactMatchesEncodingJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		if json.Valid([]byte(s)) {
			checkCompact(t, s)
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

// FuzzAppendCompact: appendCompact and appendRaw of any valid document
// are json.Compact's output (validity itself is internal/jsonscan's,
// fuzzed there against encoding/json).
func FuzzAppendCompact(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if json.Valid([]byte(s)) {
			checkCompact(t, s)
		}
	})
}

// encodingJSON is what marshalJSON wrote before its direct path.
func encodingJSON(t *testing.T, x any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(x))
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestMarshalJSONMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, "x<&>\u2028\xff", true, false, []any{}, []any(nil), map[string]any{}, map[string]any(nil),
		[]any{map[string]any{"role": "user", "content": "hi", "parts": []any{map[string]any{"type": "text", "content": "a\"b"}}}},
		map[string]any{"b": nil, "a": []any{"x", true}, "é": "k", "A": map[string]any{"z": "1", "y": false}, "k9": "", "k10": "", "k1": "", "k2": "", "k3": ""},
		[]any{1.5, "numbers go through encoding/json"}, map[string]any{"n": int64(3)},
	}
	for _, v := range values {
		require.Equal(t, encodingJSON(t, v), marshalJSON(v), "%#v", v)
	}
}

// FuzzMarshalJSON: any JSON document decoded into generic values is written
// back exactly as encoding/json writes it.
func FuzzMarshalJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add(s)
	}
	f.Add(`[{"role":"user","content":"x"},{"role":"assistant","parts":[{"type":"text","content":"y"}],"finish_reason":"stop"}]`)
	f.Fuzz(func(t *testing.T, s string) {
		var x any
		if json.Unmarshal([]byte(s), &x) != nil {
			return
		}
		require.Equal(t, encodingJSON(t, x), marshalJSON(x), "%q", s)
	})
}
