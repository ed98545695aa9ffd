package live

import (
	"encoding/json"
	"testing"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLivePromptSizing(t *testing.T) {
	cfg := config.Default().Live
	cfg.Prompt.ContextWindow, cfg.MaxTokens = 1000, 200
	b := newPromptBuilder(&cfg, "run1")
	body, tokens, err := b.build(42, 300)
	require.NoError(t, err)
	assert.InDelta(t, 300, tokens, 5)
	assert.Contains(t, string(body), "[run run1 request 42]")
	assert.Contains(t, string(body), `"stream_options":{"include_usage":true}`)
	assert.Contains(t, string(body), `"max_tokens":200`)

	// A prompt never exceeds the context window less max_tokens.
	_, tokens, err = b.build(43, 5000)
	require.NoError(t, err)
	assert.LessOrEqual(t, tokens, 800+5)

	// Two requests never share a prefix when unique_prefix is on.
	b1, _, _ := b.build(1, 50)
	b2, _, _ := b.build(2, 50)
	assert.NotEqual(t, b1, b2)
}

// The body assembled from the template is byte for byte the body
// encoding/json renders, for chat and text completions, extra body fields,
// few-shot turns, text that needs escaping and run ids that do.
func TestLivePromptTemplateMatchesMarshal(t *testing.T) {
	variants := map[string]func(*config.LiveConfig){
		"default": func(*config.LiveConfig) {},
		"text":    func(c *config.LiveConfig) { c.Operation = config.LiveOpText },
		"extra": func(c *config.LiveConfig) {
			c.ExtraBody = map[string]any{"temperature": 0.5, "stop": []any{"</s>", "\n"}, "seed": 7}
			c.IgnoreEOS, c.IncludeUsage = true, false
		},
		"escapes": func(c *config.LiveConfig) {
			c.Prompt.System = "Say \"hi\" <b>&</b>\n\ttab é \u2028 \x01"
			c.Prompt.User = "Résumé: \"quoted\" \\ <tag> & \xff"
			c.Prompt.FewShot = []config.LiveMessage{{Role: "user", Content: "q?"}, {Role: "assistant", Content: "a!"}}
		},
		"text_escapes": func(c *config.LiveConfig) {
			c.Operation = config.LiveOpText
			c.Prompt.System = "line1\nline2 <x>"
			c.Prompt.User = "naïve \"user\""
		},
		"no_prefix":  func(c *config.LiveConfig) { c.Prompt.UniquePrefix = false },
		"no_system":  func(c *config.LiveConfig) { c.Prompt.System = ""; c.Stream = false },
		"sentinel":   func(c *config.LiveConfig) { c.ExtraBody = map[string]any{"x": promptSentinel} },
		"empty_user": func(c *config.LiveConfig) { c.Prompt.User = "" },
	}
	for name, mutate := range variants {
		for _, runID := range []string{"abc-12", `run "7" <&>`} {
			cfg := config.Default().Live
			cfg.Prompt.ContextWindow, cfg.MaxTokens = 1000, 100
			mutate(&cfg)
			b := newPromptBuilder(&cfg, runID)
			if name != "sentinel" {
				require.NotNil(t, b.head, "%s: the body template was not built", name)
			} else {
				require.Nil(t, b.head, "the placeholder occurs twice: no template")
			}
			for _, want := range []int{0, 1, 10, 37, 300, 5000} {
				seq := int64(want*7 + 1)
				got, tokens, err := b.build(seq, want)
				require.NoError(t, err)
				// The reference: the same content marshalled whole.
				ref := *b
				ref.head = nil
				wantBody, wantTokens, err := ref.build(seq, want)
				require.NoError(t, err)
				assert.Equal(t, string(wantBody), string(got), "%s run %q want %d", name, runID, want)
				assert.Equal(t, wantTokens, tokens)
				assert.True(t, json.Valid(got))
			}
		}
	}
}
