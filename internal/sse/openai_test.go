package sse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeChunk(t *testing.T) {
	var c Chunk
	require.NoError(t, DecodeChunk([]byte(`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`), &c))
	n, tools := c.ContentLen()
	assert.Equal(t, 0, n)
	assert.False(t, tools)
	assert.Equal(t, "", c.FinishReason())

	require.NoError(t, DecodeChunk([]byte(`{"choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}]}`), &c))
	n, _ = c.ContentLen()
	assert.Equal(t, 5, n)

	require.NoError(t, DecodeChunk([]byte(`{"choices":[{"index":0,"text":"abc","finish_reason":"length"}]}`), &c))
	n, _ = c.ContentLen()
	assert.Equal(t, 3, n)
	assert.Equal(t, "length", c.FinishReason())

	require.NoError(t, DecodeChunk([]byte(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`), &c))
	require.NotNil(t, c.Usage)
	assert.Equal(t, 4, c.Usage.CompletionTokens)

	require.NoError(t, DecodeChunk([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}`), &c))
	_, tools = c.ContentLen()
	assert.True(t, tools)

	require.NoError(t, DecodeChunk([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`), &c))
	require.NotNil(t, c.Error)
	assert.Equal(t, "overloaded", c.Error.Message)

	for _, bad := range []string{`{"choices":[`, `not json`, `{}`, `[]`, `{"id":"x"}`} {
		assert.ErrorIs(t, DecodeChunk([]byte(bad), &c), ErrMalformedChunk, bad)
	}
	assert.True(t, IsDone([]byte("[DONE]")))
	assert.True(t, IsDone([]byte(" [DONE] ")))
	assert.False(t, IsDone([]byte("[DONE")))
}
