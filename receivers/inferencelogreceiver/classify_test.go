package inferencelogreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCollectionEvent(t *testing.T) {
	for _, tc := range []struct {
		body  string
		attrs map[string]any
		want  string
	}{
		{"", map[string]any{}, emptyMessage},
		{"[100B blob data]", map[string]any{}, eventBlob},
		{"[48B blob data]", map[string]any{attrProcessName: "llama-server"}, eventBlob},
		{"[B blob data]", map[string]any{}, ""},
		{"[1x0B blob data]", map[string]any{}, ""},
		{"x [100B blob data]", map[string]any{}, ""},
		{"Started Ollama Service.", map[string]any{attrProcessName: "systemd"}, eventSystemd},
		{"Started Ollama Service.", map[string]any{attrProcessName: "ollama"}, ""},
		{"INFO 11-29 17:40:02 [x.py:1] y", map[string]any{}, ""},
		{"2026-02-02 17:59:02.735", map[string]any{}, eventViewerColumn},
		{"2024-04-18T18:45:35.144-04:00", map[string]any{}, eventViewerColumn},
		{"info", map[string]any{}, eventViewerColumn},
		{"informative", map[string]any{}, ""},
		{"2026-02-02 17:59:02.735 the rest", map[string]any{}, ""},
	} {
		assert.Equal(t, tc.want, collectionEvent(tc.body, tc.attrs), "body %q attrs %v", tc.body, tc.attrs)
	}
}

// TestCollectionRecordsSkipTheGrammar: every preset takes what log
// collection made as parsed records, not as lines of the server.
func TestCollectionRecordsSkipTheGrammar(t *testing.T) {
	for _, name := range presetNames {
		pp := buildPresetPipeline(t, name)
		e := pp.parse(t, "[100B blob data]")
		assert.Equal(t, eventBlob, e.Attributes[attrEventName], name)
		assert.NotContains(t, e.Attributes, attrParseError, name)
		e = pp.parse(t, "")
		assert.NotContains(t, e.Attributes, attrParseError, name)
		assert.NotContains(t, e.Attributes, attrEventName, name)
		assert.Equal(t, name, e.Attributes[attrServer])
	}
}
