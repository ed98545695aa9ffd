package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cfgFor(path, format string) Config {
	return Config{Path: path, Format: format, MaxRecords: 100_000, Order: OrderSequential}
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func all(t *testing.T, ix *Index) []Record {
	t.Helper()
	var out []Record
	for range ix.Summary().Kept {
		r, err := ix.Next()
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// TestRealJSONL reads OpenAI's toy chat fine-tuning file: the prompt of a
// multi-turn record ends at its last user turn, the answer after it gives
// the output length, and a record without a user turn is skipped, counted.
func TestRealJSONL(t *testing.T) {
	ix, err := Open(cfgFor(filepath.Join("testdata", "real", "toy_chat_fine_tuning.head.jsonl"), FormatJSONL), 1)
	require.NoError(t, err)
	defer ix.Close()
	s := ix.Summary()
	assert.EqualValues(t, 4, s.Records)
	assert.Equal(t, 3, s.Kept)
	assert.Equal(t, map[string]int64{SkipNoUserTurn: 1}, s.Skipped)
	recs := all(t, ix)
	assert.EqualValues(t, []int64{1, 2, 3}, []int64{recs[0].Row, recs[1].Row, recs[2].Row})
	assert.Equal(t, []Message{
		{Role: "system", Content: "You are a happy assistant that puts a positive spin on everything."},
		{Role: "user", Content: "I fell off my bike today."},
	}, recs[0].Messages)
	assert.Equal(t, tokensOf("It's great that you're getting exercise outdoors!"), recs[0].OutputTokens)
	require.Len(t, recs[1].Messages, 8, "up to the last user turn")
	assert.Equal(t, "I don't even know how to play golf.", recs[1].Messages[7].Content)
	assert.Equal(t, tokensOf("It's easy to learn!"), recs[1].OutputTokens)
	assert.Equal(t, estimate(recs[1].Messages), recs[1].InputTokens)
}

// TestRealShareGPT reads a ShareGPT-format excerpt of the Glaive set: the
// first human turn is the prompt and the first gpt answer after it the
// output length; function_call and observation turns are passed over.
func TestRealShareGPT(t *testing.T) {
	ix, err := Open(cfgFor(filepath.Join("testdata", "real", "glaive_toolcall_en_demo.head.json"), FormatShareGPT), 1)
	require.NoError(t, err)
	defer ix.Close()
	recs := all(t, ix)
	require.Len(t, recs, 2)
	assert.Equal(t, []Message{{Role: "user", Content: `Write a definition of "photoshop".`}}, recs[0].Messages)
	assert.Greater(t, recs[0].OutputTokens, 100)
	assert.Equal(t, "I need to calculate the area of a rectangle. The length is 5 units and the breadth is 3 units.", recs[1].Messages[0].Content)
	assert.Equal(t, tokensOf("The area of the rectangle with length 5 units and breadth 3 units is 15 square units."), recs[1].OutputTokens)
	assert.EqualValues(t, 2, recs[1].Row)
	// The later human turns, each with the length of its first answer, for
	// multi-turn sessions.
	require.Len(t, recs[0].Turns, 1)
	assert.Equal(t, "Can you explain the difference between machine learning and deep learning?", recs[0].Turns[0].User)
	assert.Greater(t, recs[0].Turns[0].OutputTokens, 200)
	assert.Equal(t, []Turn{{User: "What about a circle with a radius of 4 units?",
		OutputTokens: tokensOf("The area of the circle with radius 4 units is approximately 50.24 square units.")}}, recs[1].Turns)
}

// TestShareGPTLaterTurns: a bad turn after the first answer ends the
// conversation early instead of refusing the record; answers after the
// first of a turn are not counted.
func TestShareGPTLaterTurns(t *testing.T) {
	rec, skip, err := decodeShareGPT([]byte(`{"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "a"},
		{"from": "gpt", "value": "bbbb"}, {"from": "gpt", "value": "ignored"}, {"from": "human", "value": "c"},
		{"from": "gpt", "value": "dddddddd"}, {"from": "human", "value": null}, {"from": "human", "value": "never"}]}`))
	require.NoError(t, err)
	assert.Empty(t, skip)
	assert.Equal(t, []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "a"}}, rec.Messages)
	assert.Equal(t, 1, rec.OutputTokens)
	assert.Equal(t, []Turn{{User: "c", OutputTokens: 2}}, rec.Turns)
}

// TestBadInputNamesFileLineAndField: every malformed record is an error
// naming the file, its line and the field, or with skip_invalid a counted
// skip.
func TestBadInputNamesFileLineAndField(t *testing.T) {
	for _, tc := range []struct {
		name, format, body, want string
	}{
		{"bad json", FormatJSONL, `{"prompt": "a"}` + "\n" + `{"messages": [` + "\n", "x.jsonl:2: invalid JSON"},
		{"content type", FormatJSONL, "\n\n" + `{"messages": [{"role": "user", "content": 7}]}`, "x.jsonl:3: messages[0].content: must be a string or a list of text parts, got 7"},
		{"image part", FormatJSONL, `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}`, `x.jsonl:1: messages[0].content[0].type: "image_url" parts`},
		{"no role", FormatJSONL, `{"messages": [{"content": "hi"}]}`, "x.jsonl:1: messages[0].role: must be a non-empty string"},
		{"max_tokens", FormatJSONL, `{"prompt": "hi", "max_tokens": -3}`, "x.jsonl:1: max_tokens: must be a whole number from 1 to 16777216, got -3"},
		{"neither", FormatJSONL, `{"text": "hi"}`, "x.jsonl:1: messages: missing"},
		{"not an object", FormatJSONL, `["hi"]`, "x.jsonl:1: a record is a JSON object"},
		{"not an array", FormatShareGPT, `{"conversations": []}`, "x.json:1: a ShareGPT file is a JSON array"},
		{"value type", FormatShareGPT, "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]},\n {\"conversations\": [{\"from\": \"human\", \"value\": null}]}\n]", "x.json:3 (conversation 2): conversations[0].value: must be a string"},
		{"truncated", FormatShareGPT, "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]},\n {\"conversations\": [", "x.json:3 (conversation 2): invalid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "x.jsonl"
			if tc.format == FormatShareGPT {
				name = "x.json"
			}
			p := writeTemp(t, name, tc.body)
			_, err := Open(cfgFor(p, tc.format), 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSkipInvalidCounts(t *testing.T) {
	p := writeTemp(t, "x.jsonl", "{\"prompt\": \"one\"}\n{\"prompt\": 5}\nnot json\n{\"prompt\": \"two\", \"output_tokens\": 9}\n")
	cfg := cfgFor(p, FormatJSONL)
	cfg.SkipInvalid = true
	ix, err := Open(cfg, 1)
	require.NoError(t, err)
	defer ix.Close()
	assert.Equal(t, map[string]int64{SkipInvalid: 2}, ix.Summary().Skipped)
	recs := all(t, ix)
	assert.Equal(t, "two", recs[1].Messages[0].Content)
	assert.Equal(t, 9, recs[1].OutputTokens)
	assert.EqualValues(t, 4, recs[1].Row)
}

// TestFiltersAndReservoir: length filters count what they skip; a file with
// more usable records than max_records keeps a seeded sample of exactly
// that many, the same for the same seed.
func TestFiltersAndReservoir(t *testing.T) {
	var sb strings.Builder
	for i := 1; i <= 1000; i++ { // prompts of 4 + i estimated tokens
		fmt.Fprintf(&sb, "{\"prompt\": %q}\n", strings.Repeat("w", i*4))
	}
	p := writeTemp(t, "x.jsonl", sb.String())
	cfg := cfgFor(p, FormatJSONL)
	cfg.MinInputTokens, cfg.MaxInputTokens, cfg.MaxRecords = 105, 904, 50
	sample := func(seed uint64) []int64 {
		ix, err := Open(cfg, seed)
		require.NoError(t, err)
		defer ix.Close()
		s := ix.Summary()
		assert.EqualValues(t, 1000, s.Records)
		assert.Equal(t, 50, s.Kept)
		assert.EqualValues(t, 100, s.Skipped[SkipTooShort])
		assert.EqualValues(t, 100, s.Skipped[SkipTooLong])
		assert.EqualValues(t, 750, s.Skipped[SkipReservoir])
		var rows []int64
		for _, r := range all(t, ix) {
			assert.GreaterOrEqual(t, r.InputTokens, 105)
			assert.LessOrEqual(t, r.InputTokens, 904)
			rows = append(rows, r.Row)
		}
		return rows
	}
	a, b, c := sample(7), sample(7), sample(8)
	assert.Equal(t, a, b, "same seed, same sample")
	assert.NotEqual(t, a, c)
	assert.IsIncreasing(t, a, "sequential order follows the file")
}

func TestRandomOrderIsSeeded(t *testing.T) {
	p := writeTemp(t, "x.jsonl", "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\"}\n")
	draw := func(seed uint64) string {
		cfg := cfgFor(p, FormatJSONL)
		cfg.Order = OrderRandom
		ix, err := Open(cfg, seed)
		require.NoError(t, err)
		defer ix.Close()
		var sb strings.Builder
		for range 30 {
			r, err := ix.Next()
			require.NoError(t, err)
			sb.WriteString(r.Messages[0].Content)
		}
		return sb.String()
	}
	assert.Equal(t, draw(3), draw(3))
	for _, s := range []string{"a", "b", "c"} {
		assert.Contains(t, draw(3), s)
	}
}

func TestNoUsableRecord(t *testing.T) {
	p := writeTemp(t, "x.jsonl", `{"messages": [{"role": "assistant", "content": "hi"}]}`)
	_, err := Open(cfgFor(p, FormatJSONL), 1)
	require.ErrorContains(t, err, "no usable record among 1 (skipped: map[no_user_turn:1])")
	_, err = Open(cfgFor(filepath.Join(t.TempDir(), "missing.jsonl"), FormatJSONL), 1)
	require.ErrorContains(t, err, "missing.jsonl")
}

func TestConfigValidate(t *testing.T) {
	c := Config{Path: "x", Format: "csv", Order: "shuffled", MinInputTokens: 10, MaxInputTokens: 5}
	err := c.Validate("live.dataset")
	require.Error(t, err)
	for _, want := range []string{`live.dataset.format: "csv"`, `"sharegpt"`, `live.dataset.order: "shuffled"`, "live.dataset.min_input_tokens: 10 is above max_input_tokens 5", "live.dataset.max_records: must be >= 1"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoError(t, (&Config{}).Validate("live.dataset"), "no path, no dataset")
}

// TestRealShareGPTV3 reads an entry of ShareGPT_V3_unfiltered_cleaned_split
// (the file vLLM's and the other benchmarks' sharegpt datasets name): the
// first human turn is the prompt, its answer's length the output target,
// and the two later human turns wait for a multi-turn session.
func TestRealShareGPTV3(t *testing.T) {
	ix, err := Open(cfgFor(filepath.Join("testdata", "real", "ShareGPT_V3_dsOTKpn_0.json"), FormatShareGPT), 1)
	require.NoError(t, err)
	defer ix.Close()
	recs := all(t, ix)
	require.Len(t, recs, 1)
	assert.Equal(t, []Message{{Role: "user", Content: "Why does `dir` command in DOS see the \"<.<\" argument as \"\\*.\\*\"?"}}, recs[0].Messages)
	assert.Equal(t, 225, recs[0].OutputTokens, "898 bytes of answer")
	require.Len(t, recs[0].Turns, 2)
	assert.Equal(t, (655+3)/4, recs[0].Turns[0].OutputTokens)
	assert.Equal(t, (736+3)/4, recs[0].Turns[1].OutputTokens)
}
