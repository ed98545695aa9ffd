package live

import (
	"encoding/json"
	"testing"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedPrefixBodies: requests of one group send the same system
// message, byte for byte, of the configured length; groups differ.
func TestSharedPrefixBodies(t *testing.T) {
	cfg := liveConfig("http://127.0.0.1:1", 1, 1)
	cfg.Live.Prompt.SharedPrefix = config.LiveSharedPrefixConfig{Groups: 3, Tokens: 300}
	require.NoError(t, cfg.Validate())
	sp := newSharedPrefixes(&cfg.Live, "run")
	require.Len(t, sp.groups, 3)
	system := func(g int, seq int64) (string, string) {
		body, _, err := sp.groups[g].build(seq, 500)
		require.NoError(t, err)
		var req struct {
			Messages []liveMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		require.Len(t, req.Messages, 2)
		return req.Messages[0].Content, req.Messages[1].Content
	}
	s0a, u0a := system(0, 1)
	s0b, u0b := system(0, 2)
	s1, _ := system(1, 3)
	assert.Equal(t, s0a, s0b, "one group, one system prompt")
	assert.NotEqual(t, u0a, u0b, "each request its own user message")
	assert.NotEqual(t, s0a[:12], s1[:12], "groups differ from their first bytes")
	assert.Equal(t, 300, messageOverhead+dataset.Tokens(len(s0a)), "the group prompt is 300 tokens under the estimate")
}

// TestSharedPrefixLive: every request names its group and shared tokens,
// and the seed spreads requests over every group.
func TestSharedPrefixLive(t *testing.T) {
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), 60, 200)
	cfg.Live.Prompt.SharedPrefix = config.LiveSharedPrefixConfig{Groups: 4, Tokens: 200}
	run := startLive(t, cfg)
	spans := run.spans(t, 60)
	run.stop(t)
	seen := map[int64]int{}
	for _, sp := range spans {
		g, ok := sp.Attributes().Get(attrLivePrefixGroup)
		require.True(t, ok)
		c, _ := sp.Attributes().Get(attrLiveCacheable)
		assert.EqualValues(t, 200, c.Int())
		seen[g.Int()]++
	}
	assert.Len(t, seen, 4, "requests in every group: %v", seen)
	for _, rec := range mock.Records() {
		assert.GreaterOrEqual(t, rec.PromptTokens, 200)
	}
	bad := liveConfig(mock.URL(), 1, 1)
	bad.Live.Prompt.SharedPrefix = config.LiveSharedPrefixConfig{Groups: 2, Tokens: 9000}
	assert.ErrorContains(t, bad.Validate(), "live.prompt.shared_prefix.tokens: must be >= 1 and leave room for max_tokens (64) in context_window (8192), got 9000")
}
