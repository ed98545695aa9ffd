package tokenize

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func encoding(t *testing.T, name string) *Tokenizer {
	t.Helper()
	tk, err := Open(Config{Encoding: name})
	require.NoError(t, err)
	return tk
}

// TestTiktokenKnownIDs: the ids tiktoken's own tests give (openai/tiktoken
// tests/test_simple_public.py: r50k_base is GPT-2's "gpt2" encoding).
func TestTiktokenKnownIDs(t *testing.T) {
	for name, want := range map[string][]int{"cl100k_base": {15339, 1917}, "r50k_base": {31373, 995}} {
		tk := encoding(t, name)
		assert.Equal(t, "tiktoken/"+name, tk.Name())
		ids, err := tk.Encode("hello world")
		require.NoError(t, err)
		assert.Equal(t, want, ids, name)
		assert.Equal(t, "hello world", tk.Decode(ids), name)
	}
	tk := encoding(t, "o200k_base")
	ids, err := tk.Encode("hello <|endoftext|>")
	require.NoError(t, err)
	assert.Equal(t, "hello <|endoftext|>", tk.Decode(ids), "special-token text is plain prompt text")
	assert.Greater(t, len(ids), 2)
}

// TestTiktokenAgreesWithTheGPT2TokenizerJSON: OpenAI's r50k_base ranks and
// Hugging Face's GPT-2 tokenizer.json are two publications of one
// tokenizer, read by two libraries. On every line of a real text (this
// package's source and the GPT-2 file's SOURCES.md, written for neither)
// they give the same ids, but where the text repeats one character three
// times or more: there the tokenizer.json library merges the wrong one of
// two equal pairs (" 1000" becomes " 10" "00", where GPT-2's own merges,
// "0 0" then "00 0" then "Ġ1 000", give " 1000", id 8576 in the same
// file's vocab, as tiktoken does).
func TestTiktokenAgreesWithTheGPT2TokenizerJSON(t *testing.T) {
	hf, tk := gpt2(t), encoding(t, "r50k_base")
	lines, differ := 0, 0
	for _, f := range []string{"tokenize.go", filepath.Join("testdata", "gpt2", "SOURCES.md")} {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			lines++
			a, err := hf.Encode(line)
			require.NoError(t, err)
			b, err := tk.Encode(line)
			require.NoError(t, err)
			assert.Equal(t, line, tk.Decode(b))
			if !slices.Equal(a, b) {
				differ++
				assert.True(t, repeatsARune(line, 3), "%s: %q differs without a repeated character", f, line)
			}
		}
	}
	t.Logf("%d lines, %d with different ids", lines, differ)
	assert.Greater(t, lines, 100)
	assert.LessOrEqual(t, differ, lines/20)
	ids, err := hf.Encode(" 1000")
	require.NoError(t, err)
	assert.Equal(t, []int{838, 405}, ids, "the tokenizer.json library's known divergence")
	ids, err = tk.Encode(" 1000")
	require.NoError(t, err)
	assert.Equal(t, []int{8576}, ids, "GPT-2's merges give one token")
}

// repeatsARune reports whether s has one rune n or more times in a row.
func repeatsARune(s string, n int) bool {
	run, last := 0, rune(-1)
	for _, r := range s {
		if r == last {
			run++
		} else {
			run, last = 1, r
		}
		if run >= n {
			return true
		}
	}
	return false
}

// TestFitExactUnderTiktoken: the filler reaches exact counts under OpenAI's
// encodings as under a tokenizer.json.
func TestFitExactUnderTiktoken(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tk := encoding(t, name)
		f, err := NewFiller(tk, strings.Repeat(" The quarterly report lists revenue by region, the staffing plan, open risks.", 40))
		require.NoError(t, err)
		head := "[run abc request 7] Summarize the following notes in three sentences."
		headN, err := tk.Count(head)
		require.NoError(t, err)
		for n := headN; n < headN+300; n += 11 {
			text, got, err := f.Fit(head, n)
			require.NoError(t, err, "%s n %d", name, n)
			check, err := tk.Count(text)
			require.NoError(t, err)
			assert.Equal(t, n, got, name)
			assert.Equal(t, n, check, "%s: the text has the count Fit reports", name)
		}
	}
}

func TestEncodingConfigErrors(t *testing.T) {
	assert.ErrorContains(t, Config{Encoding: "gpt5_base"}.Validate("live.prompt.tokenizer"),
		`live.prompt.tokenizer.encoding: unknown value "gpt5_base"; allowed values: o200k_base, cl100k_base, p50k_base, r50k_base`)
	assert.ErrorContains(t, Config{Encoding: "o200k_base", Path: "x"}.Validate("live.prompt.tokenizer"), "not both")
	assert.NoError(t, Config{Encoding: "p50k_base"}.Validate("x"))
}
