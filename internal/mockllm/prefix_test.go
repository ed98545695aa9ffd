package mockllm

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrefixCache: a prompt's leading full blocks that an earlier prompt
// had are cached and cost no prefill; a block is shared only when
// everything before it is too.
func TestPrefixCache(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.PrefixCacheBlockTokens, c.PrefillPerToken, c.Jitter, c.ContextWindow = 16, 100*time.Microsecond, 0, 1<<16
	})
	block := func(c byte) string { return strings.Repeat(string(c), 64) } // 16 tokens
	send := func(system, user string) Record {
		body, err := json.Marshal(map[string]any{"max_tokens": 1, "messages": []map[string]string{
			{"role": "system", "content": system}, {"role": "user", "content": user}}})
		require.NoError(t, err)
		resp := post(t, s.URL()+"/v1/chat/completions", string(body), nil)
		require.Equal(t, 200, resp.StatusCode)
		id := resp.Header.Get(HeaderRequestID)
		resp.Body.Close()
		rec, ok := s.Record(t.Context(), id)
		require.True(t, ok)
		return rec
	}
	first := send(block('a')+block('b'), block('c')+"tail")
	assert.Zero(t, first.CachedTokens, "an empty cache")
	second := send(block('a')+block('b'), block('c')+block('d'))
	assert.Equal(t, 48, second.CachedTokens, "three blocks in common, across the message boundary")
	assert.Less(t, second.PlannedTTFT, first.PlannedTTFT, "cached tokens take no prefill time")
	assert.Equal(t, (second.PromptTokens-48)*100, int(second.PlannedTTFT/time.Microsecond)-int(s.cfg.TTFT/time.Microsecond))
	third := send(block('x')+block('b'), block('c'))
	assert.Zero(t, third.CachedTokens, "block b after x is not block b after a")
	st := s.Stats()
	assert.EqualValues(t, 48, st.PrefixCacheHits)
	assert.EqualValues(t, first.PromptTokens+second.PromptTokens+third.PromptTokens, st.PrefixCacheQueries)
}

func TestPrefixCacheEvicts(t *testing.T) {
	c := newPrefixCache(1, 2) // 4-byte blocks, two of them
	assert.Equal(t, 0, first(c.lookup([]byte("aaaabbbb"))))
	assert.Equal(t, 2, first(c.lookup([]byte("aaaabbbb"))))
	assert.Equal(t, 0, first(c.lookup([]byte("cccc"))), "cccc evicts the least recently used block")
	assert.Equal(t, 1, first(c.lookup([]byte("aaaabbbb"))), "aaaa stayed; aaaa+bbbb was evicted")
	_, seq := c.lookup(nil)
	assert.EqualValues(t, 5, seq, "lookups are numbered in the cache's order")
}

func first(hits int, _ int64) int { return hits }
