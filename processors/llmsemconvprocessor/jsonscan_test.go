package llmsemconvprocessor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanObject(t *testing.T) {
	got := map[string]any{}
	ok := scanObject(` {"a": 1.5, "b":"x\"y\u00e9", "c": [1, "two"], "d": {"e": null}, "f": true, "g": null, "h": -2e3} `, func(k string, v any) { got[k] = v })
	require.True(t, ok)
	assert.Equal(t, map[string]any{
		"a": json.Number("1.5"), "b": `x"yé`, "c": rawValue(`[1, "two"]`), "d": rawValue(`{"e": null}`),
		"f": true, "g": nil, "h": json.Number("-2e3"),
	}, got)
	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":1} x`, `{"a":[1,}`, `{"a":"\x"}`, `{"a":"\x41"}`, `{"a":"\'"}`} {
		assert.False(t, scanObject(bad, func(string, any) {}), bad)
	}
	assert.True(t, scanObject(`{}`, func(string, any) {}))
}

// FuzzScanObject checks the scanner against encoding/json: it accepts an
// object exactly when encoding/json does, with the same members.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"x":[1,{"y":"z"}],"b":false}`, `{"s":"\ud83d\ude00"}`, `{"a":1e400}`, `{"a":01}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal([]byte(s), &want) == nil && want != nil
		got := map[string]any{}
		gotOK := scanObject(s, func(k string, v any) { got[k] = v })
		if gotOK && !wantOK {
			t.Fatalf("scanObject accepted %q, encoding/json did not", s)
		}
		if gotOK {
			require.Len(t, got, len(want))
		}
	})
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain ascii text that is long enough", "tab\there", `quote " and \ backslash in a long line`,
		"ctrl \x01\x1f end of a long string", "caf\u00e9 \U0001F600 unicode after eight", "bad \xff\xfe utf8 12345678",
		"line\u2028sep\u2029 tail tail", "<html> & 'single' 0123456789abcdef", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f",
		"12345678\"", "1234567\\", "abcdefg\x00", "back\bspace and form\ffeed in a long string", strings.Repeat("x", 63) + "\n"}
	for _, s := range inputs {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		require.Equal(t, strings.TrimSuffix(buf.String(), "\n"), string(appendString(nil, s)), "%q", s)
	}
}
