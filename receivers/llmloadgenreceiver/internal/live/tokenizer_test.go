package live

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/tokenize"
)

var gpt2Tokenizer = tokenize.Config{Path: filepath.Join("..", "tokenize", "testdata", "gpt2", "tokenizer.json")}

// TestPromptsExactUnderTokenizer: with the real GPT-2 tokenizer.json, with
// Gemma 2's SentencePiece tokenizer.model and with OpenAI's o200k_base, the
// messages' contents of every synthetic body
// come to exactly the sampled length, for many lengths; the count the
// builder reports is that length.
func TestPromptsExactUnderTokenizer(t *testing.T) {
	for name, tc := range map[string]tokenize.Config{
		"gpt2/tokenizer.json":    gpt2Tokenizer,
		"gemma2/tokenizer.model": {Path: filepath.Join("..", "tokenize", "testdata", "gemma2", "tokenizer.model")},
		"tiktoken/o200k_base":    {Encoding: "o200k_base"},
	} {
		t.Run(name, func(t *testing.T) { checkPromptsExact(t, tc, name) })
	}
}

func checkPromptsExact(t *testing.T, tc tokenize.Config, name string) {
	cfg := liveConfig("http://127.0.0.1:1", 1, 1)
	cfg.Live.Prompt.Tokenizer = tc
	require.NoError(t, cfg.Validate())
	b := newPromptBuilder(&cfg.Live, "run1")
	require.NoError(t, b.useTokenizer())
	assert.Equal(t, name, b.tokenizerName())
	tok, err := tokenize.Open(tc)
	require.NoError(t, err)
	for want := 40; want < 2000; want += 97 {
		body, n, err := b.build(int64(want), want)
		require.NoError(t, err)
		assert.Equal(t, want, n, "the builder's count")
		var req struct {
			Messages []liveMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		total := 0
		for _, m := range req.Messages {
			c, err := tok.Count(m.Content)
			require.NoError(t, err)
			total += c
		}
		assert.Equal(t, want, total, "the contents' tokens of a %d-token prompt", want)
	}
}

// TestLiveTokenizerOnSpans: spans carry the client's exact count and name
// the tokenizer; a session turn's user message is exact too.
func TestLiveTokenizerOnSpans(t *testing.T) {
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), 4, 20)
	cfg.Live.Prompt.Tokenizer = gpt2Tokenizer
	cfg.Live.Session = config.LiveSessionConfig{Turns: 2}
	run := startLive(t, cfg)
	spans := run.spans(t, 4)
	run.stop(t)
	// Every turn: the system prompt, the history, and a new user message
	// of the 100 tokens drawn.
	b := newPromptBuilder(&cfg.Live, "x")
	require.NoError(t, b.useTokenizer())
	system := b.baseTokens()
	require.Positive(t, system)
	for _, sp := range spans {
		assert.Equal(t, "gpt2/tokenizer.json", attrStr(sp, attrLiveTokenizer))
		n, ok := sp.Attributes().Get(attrLivePromptToks)
		require.True(t, ok)
		h, _ := sp.Attributes().Get(attrLiveHistory)
		assert.EqualValues(t, int64(system)+h.Int()+100, n.Int())
	}
	bad := liveConfig(mock.URL(), 1, 1)
	bad.Live.Prompt.Tokenizer = tokenize.Config{Path: "no/such/tokenizer.json"}
	assert.ErrorContains(t, bad.Validate(), "live.prompt.tokenizer.path: stat no/such/tokenizer.json: no such file or directory")
}
