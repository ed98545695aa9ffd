package tokenize

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentencePieceTokenizerJSON checks a SentencePiece-style
// tokenizer.json (Metaspace "▁" normalizer, BPE with byte fallback, 32,000
// tokens) against the ids that transformers.js' tokenizers gave for the same
// lines (testdata/llama2/SOURCES.md): real chat-dataset messages and
// inference-server log lines, multilingual text and emoji included.
func TestSentencePieceTokenizerJSON(t *testing.T) {
	tk, err := Open(Config{Path: filepath.Join("testdata", "llama2", "tokenizer.json")})
	require.NoError(t, err)
	lines, differ, tokens, countOff := 0, 0, 0, 0
	for _, ref := range readReference(t, filepath.Join("testdata", "llama2", "reference.jsonl")) {
		lines++
		tokens += len(ref.IDs)
		ids, err := tk.Encode(ref.Text)
		require.NoError(t, err)
		if !slices.Equal(ids, ref.IDs) {
			// The library breaks ties between equal merges of a run of one
			// character in heap order, not leftmost first as Hugging Face
			// does (GPT-2's " 1000" in TestTiktokenAgreesWithTheGPT2TokenizerJSON
			// is the same fault): only such runs may differ.
			differ++
			countOff += max(len(ids)-len(ref.IDs), len(ref.IDs)-len(ids))
			assert.True(t, repeatsARune(ref.Text, 8), "%q differs without a run of one character", ref.Text)
		}
		assert.Equal(t, ref.Text, tk.Decode(ids), "decoding gives the text back")
	}
	t.Logf("%d lines, %d tokens, %d with different ids, token counts off by %d in all", lines, tokens, differ, countOff)
	require.Greater(t, lines, 300)
	assert.LessOrEqual(t, differ, lines/15)
	assert.LessOrEqual(t, countOff, tokens/50)
	// Characters outside the vocabulary become their bytes (byte_fallback),
	// not the unknown token: a tab is <0x09>.
	ids, err := tk.Encode("a\tb")
	require.NoError(t, err)
	assert.NotContains(t, ids, 0, "no <unk>")
	assert.Contains(t, ids, 12, "<0x09>")
	assert.Equal(t, "a\tb", tk.Decode(ids))
}

// Prompts come out at exact token counts under the SentencePiece-style
// tokenizer too, with a head that needs byte fallback.
func TestFitExactUnderSentencePiece(t *testing.T) {
	tk, err := Open(Config{Path: filepath.Join("testdata", "llama2", "tokenizer.json")})
	require.NoError(t, err)
	checkFitExact(t, tk, 11)
}

// checkFitExact fits a head that needs byte fallback under some tokenizers
// to many counts and checks each text's count, returning the filler.
func checkFitExact(t *testing.T, tk *Tokenizer, step int) *Filler {
	f, err := NewFiller(tk, strings.Repeat(" The quarterly report lists revenue by region, the staffing plan, open risks.", 40))
	require.NoError(t, err)
	head := "[run abc request 7]\tSummarize the following notes in three sentences."
	headN, err := tk.Count(head)
	require.NoError(t, err)
	for n := headN; n < headN+300; n += step {
		text, got, err := f.Fit(head, n)
		require.NoError(t, err, "n %d", n)
		assert.Equal(t, n, got)
		check, err := tk.Count(text)
		require.NoError(t, err)
		assert.Equal(t, n, check, "the text has the count Fit reports")
		assert.True(t, strings.HasPrefix(text, head))
	}
	return f
}
