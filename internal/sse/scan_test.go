package sse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Chunks as OpenAI-compatible servers send them: mockllm, vLLM, OpenAI,
// llama.cpp (reasoning), tool calls, text completions, usage and errors.
var chunkSamples = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"mock-llm","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"mock-llm","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"mock-llm","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"mock-llm","choices":[],"usage":{"prompt_tokens":31,"completion_tokens":32,"total_tokens":63}}`,
	`{"id":"cmpl-9","object":"text_completion","created":1733000000,"model":"m","choices":[{"index":0,"text":"abc","logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
	`{"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"meta-llama/Llama-3.1-8B-Instruct","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":"line\nbreak \"quoted\" \u00e9\ud83d\ude00"},"logprobs":{"content":[{"token":"x","logprob":-0.25,"bytes":[120],"top_logprobs":[]}]},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":null,"content":null},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"","tool_calls":[]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[ ]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":""},"finish_reason":"stop"}]}`,
	`{"choices":[null,{"index":1,"finish_reason":"length"}]}`,
	`  {"choices" : [ { "index" : -0 , "delta" : { "content" : "x" } } ] , "created" : 12345678901234567 }  ` + "\n",
	`{"error":{"message":"overloaded","type":"server_error","param":null,"code":500}}`,
	`{"error":null,"choices":[]}`,
	`{"id":"caf\u00e9","choices":[]}`,
	`{"id":"café","model":"ḿ","choices":[{"finish_reason":"stöp"}]}`,
	`{"Choices":[{"index":0,"delta":{"content":"a"}}]}`,
	`{"choices":[{"index":0,"Delta":{"content":"a"}}]}`,
	`{"choices":[{"index":0,"delta":{"CONTENT":"a"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"Prompt_Tokens":3}}`,
	"{\"cho\u017fices\":[]}",
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"delta":{"content":""}}]}`,
	`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2},"choices":[]}`,
	`{"choices":[{"index":1.5}]}`,
	`{"id":"x","object":"chat.completion.chunk","model":"grok-3-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":303,"prompt_tokens_details":{"text_tokens":12,"audio_tokens":0,"image_tokens":0,"cached_tokens":11},"completion_tokens_details":{"reasoning_tokens":290,"audio_tokens":0},"num_sources_used":0}}`,
	`{"id":"chatcmpl-5","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_01","usage":{"queue_time":0.28,"prompt_tokens":18,"completion_tokens":73,"total_tokens":91}}}`,
	`{"choices":[],"x_groq":{"id":"req_01"}}`,
	`{"choices":[],"x_groq":{"usage":null},"usage":null}`,
	`{"choices":[],"x_groq":null}`,
	`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2},"x_groq":{"usage":{"completion_tokens":9}}}`,
	`{"choices":[],"usage":{"completion_tokens_details":null,"prompt_tokens_details":{"cached_tokens":null}}}`,
	`{"choices":[],"usage":{"completion_tokens_details":{"Reasoning_Tokens":3}}}`,
	`{"choices":[],"usage":{"Completion_Tokens_Details":{"reasoning_tokens":3}}}`,
	`{"choices":[],"X_Groq":{"usage":{"completion_tokens":9}}}`,
	`{"choices":[],"x_groq":{"Usage":{"completion_tokens":9}}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":4,"cached_tokens":5}}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":[]}}`,
	`{"choices":[{"index":1e3}]}`,
	`{"choices":[{"index":99999999999999999999}]}`,
	`{"choices":[{"index":-9223372036854775808}]}`,
	`{"created":"1","choices":[]}`,
	`{"choices":[{"text":5}]}`,
	`{"choices":[{"delta":[]}]}`,
	`{"choices":{}}`,
	`{"choices":null}`,
	`{"choices":[],"error":{"message":"x"}}`,
	`{"choices":[]}x`,
	`{"choices":[],}`,
	`{"choices":[1]}`,
	`{"choices":["a"]}`,
	`{"choices":[{"index":0,"delta":{"content":"a` + "\x01" + `"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\u12"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"extra":{"a":[1,2.5e-3,true,false,null,{"b":"c"}]}}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"extra":01}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"extra":-}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"extra":tru}`,
	"{\"choices\":[],\"id\":\"\xff\"}",
	"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
	`{"choices":[{"delta":{"content":"\xff"}}]}`,
	`{"choices":[],"usage":{}}`,
	`{"choices":[],"usage":null}`,
	`{}`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{`, `{"choices":[`, `not json`,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"We"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"a","reasoning":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"Reasoning":"a","content":"b"}}]}`,
}

func summaryOf(t testing.TB, data []byte) (ChunkSummary, error) {
	t.Helper()
	var c Chunk
	if err := DecodeChunk(data, &c); err != nil {
		return ChunkSummary{}, err
	}
	var s ChunkSummary
	s.fromChunk(&c)
	return s, nil
}

func assertSameSummary(t testing.TB, want, got *ChunkSummary, data []byte) {
	t.Helper()
	msg := string(data)
	assert.Equal(t, string(want.ID), string(got.ID), msg)
	assert.Equal(t, string(want.Model), string(got.Model), msg)
	assert.Equal(t, want.Choices, got.Choices, msg)
	assert.Equal(t, want.Content, got.Content, msg)
	assert.Equal(t, want.Answer, got.Answer, msg)
	assert.Equal(t, string(want.Finish), string(got.Finish), msg)
	assert.Equal(t, want.HasUsage, got.HasUsage, msg)
	assert.Equal(t, want.Usage, got.Usage, msg)
	assert.Equal(t, want.Error, got.Error, msg)
}

// ScanChunk accepts, rejects and summarizes exactly as DecodeChunk does.
func TestScanChunkAgreesWithDecodeChunk(t *testing.T) {
	var s ChunkSummary
	for _, sample := range chunkSamples {
		data := []byte(sample)
		want, wantErr := summaryOf(t, data)
		err := ScanChunk(data, &s)
		if wantErr != nil {
			require.Error(t, err, sample)
			assert.Equal(t, wantErr.Error(), err.Error(), sample)
			assert.ErrorIs(t, err, ErrMalformedChunk)
			continue
		}
		require.NoError(t, err, sample)
		assertSameSummary(t, &want, &s, data)
	}
}

// The usual chunk shapes take the fast path and allocate nothing.
func TestScanChunkFastPath(t *testing.T) {
	for _, sample := range chunkSamples[:11] {
		var s ChunkSummary
		assert.True(t, scanChunk([]byte(sample), &s), sample)
	}
	for _, sample := range []string{
		`{"Choices":[]}`, `{"choices":[],"choices":[]}`, `{"id":"caf\u00e9","choices":[]}`,
		`{"error":{"message":"x"}}`, `{"choices":[]}x`, `{"choices":[{"index":1.5}]}`,
	} {
		var s ChunkSummary
		assert.False(t, scanChunk([]byte(sample), &s), sample)
	}
	var s ChunkSummary
	data := []byte(chunkSamples[1])
	allocs := testing.AllocsPerRun(100, func() {
		if err := ScanChunk(data, &s); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	for _, sample := range []string{
		`{"id":"x","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":303,"prompt_tokens_details":{"cached_tokens":11},"completion_tokens_details":{"reasoning_tokens":290}}}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_01","usage":{"queue_time":0.28,"prompt_tokens":18,"completion_tokens":73,"total_tokens":91}}}`,
	} {
		var u ChunkSummary
		b := []byte(sample)
		require.True(t, scanChunk(b, &u), sample)
		assert.Zero(t, testing.AllocsPerRun(100, func() { scanChunk(b, &u) }), sample)
	}
	_ = ScanChunk(data, &s)
	assert.Equal(t, "chatcmpl-1", string(s.ID))
	assert.Equal(t, "mock-llm", string(s.Model))
	assert.True(t, s.Content)
	assert.Equal(t, 1, s.Choices)

	require.NoError(t, ScanChunk([]byte(chunkSamples[3]), &s))
	assert.True(t, s.HasUsage)
	assert.Equal(t, UsageCounts{Prompt: 31, Completion: 32, Total: 63}, s.Usage)
	assert.Zero(t, s.Choices)

	require.NoError(t, ScanChunk([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`), &s))
	require.NotNil(t, s.Error)
	assert.Equal(t, "overloaded", s.Error.Message)
}

func BenchmarkScanChunk(b *testing.B) {
	data := []byte(chunkSamples[1])
	b.Run("scan", func(b *testing.B) {
		var s ChunkSummary
		b.ReportAllocs()
		for b.Loop() {
			_ = ScanChunk(data, &s)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		var c Chunk
		b.ReportAllocs()
		for b.Loop() {
			_ = DecodeChunk(data, &c)
		}
	})
}

// FuzzScanChunk: no input panics, ScanChunk fails exactly when DecodeChunk
// does (with the same error), and its summary equals the one taken from
// DecodeChunk's result.
func FuzzScanChunk(f *testing.F) {
	for _, s := range chunkSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s ChunkSummary
		err := ScanChunk(data, &s)
		want, wantErr := summaryOf(t, data)
		if wantErr != nil {
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("ScanChunk(%q) = %v, DecodeChunk: %v", data, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("ScanChunk(%q) = %v, DecodeChunk accepts it", data, err)
		}
		assertSameSummary(t, &want, &s, data)
		// The fast path alone, when it takes the input, agrees too.
		var fast ChunkSummary
		if scanChunk(data, &fast) {
			assertSameSummary(t, &want, &fast, data)
		}
	})
}

// TestScanRealReasoningChunks reads real reasoning-model chunks
// (testdata/real, sources in SOURCES.md): thinking under reasoning (Ollama)
// or reasoning_content (llama.cpp, vLLM) is content but no answer, on the
// fast path and the decoder alike.
func TestScanRealReasoningChunks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "real", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for n, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var s ChunkSummary
			require.NoError(t, ScanChunk([]byte(line), &s), "%s:%d", f, n+1)
			assert.True(t, s.Content, "%s:%d: thinking is generated content", f, n+1)
			assert.False(t, s.Answer, "%s:%d: thinking is not the answer", f, n+1)
			want, _ := summaryOf(t, []byte(line))
			assertSameSummary(t, &want, &s, []byte(line))
		}
	}
	var s ChunkSummary
	require.NoError(t, ScanChunk([]byte(`{"choices":[{"index":0,"delta":{"content":"Hi","reasoning":""}}]}`), &s))
	assert.True(t, s.Answer)
	require.NoError(t, ScanChunk([]byte(`{"choices":[{"index":0,"delta":{"content":"","reasoning":"x","tool_calls":[{"index":0}]}}]}`), &s))
	assert.True(t, s.Answer, "a tool call is an answer")
}

// vLLM sends "tool_calls":[] on chunks without a call: an empty array is
// no content, on the fast path and the decoder alike; a call with empty
// arguments (the first chunk of a call) is.
func TestEmptyToolCallsAreNotContent(t *testing.T) {
	for _, c := range []struct {
		data    string
		content bool
	}{
		{`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[]}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[ ]}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"tool_calls":null}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"Hmm","tool_calls":[]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":""}}]}}]}`, true},
	} {
		var s ChunkSummary
		require.NoError(t, ScanChunk([]byte(c.data), &s))
		assert.Equal(t, c.content, s.Content, c.data)
		var ch Chunk
		require.NoError(t, DecodeChunk([]byte(c.data), &ch))
		n, tools := ch.ContentLen()
		assert.Equal(t, c.content, n > 0 || tools, c.data)
	}
}

// What the usage details say: reasoning tokens inside completion_tokens
// (OpenAI) or beside them (xAI, whose total says so), cached prompt tokens,
// and Groq's usage under x_groq.
func TestUsageDetails(t *testing.T) {
	for _, c := range []struct {
		data   string
		counts UsageCounts
		output int
	}{
		{`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":303,"prompt_tokens_details":{"cached_tokens":11},"completion_tokens_details":{"reasoning_tokens":290}}}`,
			UsageCounts{Prompt: 12, Completion: 1, Total: 303, Reasoning: 290, Cached: 11}, 291},
		{`{"choices":[],"usage":{"prompt_tokens":90,"completion_tokens":50,"total_tokens":140,"completion_tokens_details":{"reasoning_tokens":33}}}`,
			UsageCounts{Prompt: 90, Completion: 50, Total: 140, Reasoning: 33}, 50},
		{`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_01","usage":{"queue_time":0.28,"prompt_tokens":18,"completion_tokens":73,"total_tokens":91}}}`,
			UsageCounts{Prompt: 18, Completion: 73, Total: 91}, 73},
	} {
		var s ChunkSummary
		require.NoError(t, ScanChunk([]byte(c.data), &s))
		assert.True(t, s.HasUsage, c.data)
		assert.Equal(t, c.counts, s.Usage, c.data)
		assert.Equal(t, c.output, s.Usage.Output(), c.data)
		want, err := summaryOf(t, []byte(c.data))
		require.NoError(t, err)
		assertSameSummary(t, &want, &s, []byte(c.data))
	}
}
