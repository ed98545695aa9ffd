package tokenize

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gpt2(t *testing.T) *Tokenizer {
	t.Helper()
	tk, err := Open(Config{Path: filepath.Join("testdata", "gpt2", "tokenizer.json")})
	require.NoError(t, err)
	return tk
}

// TestGPT2 checks the real GPT-2 tokenizer.json against GPT-2's known ids.
func TestGPT2(t *testing.T) {
	tk := gpt2(t)
	assert.Equal(t, "gpt2/tokenizer.json", tk.Name())
	ids, err := tk.Encode("Hello world!")
	require.NoError(t, err)
	assert.Equal(t, []int{15496, 995, 0}, ids, "GPT-2's ids of Hello, ' world', '!'")
	assert.Equal(t, "Hello world!", tk.Decode(ids))
}

// TestFitExact: head plus filler comes out at exactly n tokens for every n
// from the head's length to a few hundred.
func TestFitExact(t *testing.T) {
	tk := gpt2(t)
	f, err := NewFiller(tk, strings.Repeat(" The quarterly report lists revenue by region, the staffing plan, open risks.", 40))
	require.NoError(t, err)
	require.True(t, f.fast, "GPT-2's byte-level BPE passes the fast construction's check")
	head := "[run abc request 7] Summarize the following notes in three sentences."
	headN, err := tk.Count(head)
	require.NoError(t, err)
	for n := headN; n < headN+400; n += 7 {
		text, got, err := f.Fit(head, n)
		require.NoError(t, err, "n %d", n)
		assert.Equal(t, n, got)
		check, err := tk.Count(text)
		require.NoError(t, err)
		assert.Equal(t, n, check, "the text has the count Fit reports")
		assert.True(t, strings.HasPrefix(text, head))
	}
	for n := headN; n < headN+60; n++ {
		text, got, err := f.slowFit(head, n)
		require.NoError(t, err, "n %d", n)
		check, _ := tk.Count(text)
		assert.Equal(t, n, got)
		assert.Equal(t, n, check, "the slow way is exact too")
	}
	text, got, err := f.Fit(head, 3)
	require.NoError(t, err)
	assert.Equal(t, head, text, "a head longer than n is left as it is")
	assert.Equal(t, headN, got)
}

func TestConfigErrors(t *testing.T) {
	assert.NoError(t, Config{}.Validate("live.prompt.tokenizer"))
	assert.ErrorContains(t, Config{Path: "nope/tokenizer.json"}.Validate("live.prompt.tokenizer"), "live.prompt.tokenizer.path: stat nope/tokenizer.json: no such file or directory")
	_, err := Open(Config{Path: filepath.Join("testdata", "gpt2", "SOURCES.md")})
	assert.ErrorContains(t, err, "tokenizer testdata/gpt2/SOURCES.md:")
	tk, err := Open(Config{})
	assert.NoError(t, err)
	assert.Nil(t, tk)
}
