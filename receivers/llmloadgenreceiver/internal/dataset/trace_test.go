package dataset

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func traceCfg(path string) TraceConfig {
	return TraceConfig{Path: path, Format: TraceFormatMooncake, Speed: 1, BlockTokens: 512}
}

func readAll(t *testing.T, cfg TraceConfig, limit int) []TraceRow {
	t.Helper()
	tr, err := OpenTrace(cfg)
	require.NoError(t, err)
	defer tr.Close()
	var rows []TraceRow
	for len(rows) < limit {
		r, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		rows = append(rows, r)
	}
	return rows
}

// TestRealMooncakeTraces reads both real excerpts whole: every row, in
// time order, at its timestamp.
func TestRealMooncakeTraces(t *testing.T) {
	for _, name := range []string{"mooncake-conversation-first400.jsonl", "mooncake-synthetic-first400.jsonl"} {
		rows := readAll(t, traceCfg(filepath.Join("testdata", "real", name)), 1000)
		require.Len(t, rows, 400, name)
		for i, r := range rows {
			assert.EqualValues(t, i+1, r.Line)
			assert.Equal(t, (r.InputTokens+511)/512, len(r.HashIDs), "%s:%d one id per 512-token block", name, r.Line)
			if i > 0 {
				assert.GreaterOrEqual(t, r.At, rows[i-1].At)
			}
		}
	}
	rows := readAll(t, traceCfg(filepath.Join("testdata", "real", "mooncake-conversation-first400.jsonl")), 1000)
	assert.Equal(t, 141*time.Second, rows[399].At)
	assert.Equal(t, 6758, rows[0].InputTokens)
	assert.Equal(t, 500, rows[0].OutputTokens)
}

// TestTraceWindowSpeedLoop: offset and length cut a window, speed scales
// it, loop replays it with each pass after the last.
func TestTraceWindowSpeedLoop(t *testing.T) {
	p := writeTemp(t, "t.jsonl", strings.Join([]string{
		`{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}`,
		`{"timestamp": 1000, "input_length": 10, "output_length": 2, "hash_ids": [2]}`,
		`{"timestamp": 2500, "input_length": 10, "output_length": 3, "hash_ids": [3]}`,
		`{"timestamp": 4000, "input_length": 10, "output_length": 4, "hash_ids": [4]}`,
	}, "\n"))
	cfg := traceCfg(p)
	cfg.Offset, cfg.Length, cfg.Speed = time.Second, 2*time.Second, 2
	rows := readAll(t, cfg, 10)
	require.Len(t, rows, 2)
	assert.Equal(t, []time.Duration{0, 750 * time.Millisecond}, []time.Duration{rows[0].At, rows[1].At})
	cfg.Loop = true
	rows = readAll(t, cfg, 5)
	var at []time.Duration
	var out []int
	for _, r := range rows {
		at, out = append(at, r.At), append(out, r.OutputTokens)
	}
	assert.Equal(t, []time.Duration{0, 750 * time.Millisecond, time.Second, 1750 * time.Millisecond, 2 * time.Second}, at)
	assert.Equal(t, []int{2, 3, 2, 3, 2}, out)

	cfg.Offset, cfg.Length = 5*time.Second, time.Second // past the last row
	assertTraceError(t, cfg, "no request in the window offset 5s, length 1s")
}

// assertTraceError reads up to three rows of cfg's trace and checks that
// reading stops with an error containing want.
func assertTraceError(t *testing.T, cfg TraceConfig, want string) {
	t.Helper()
	tr, err := OpenTrace(cfg)
	require.NoError(t, err)
	defer tr.Close()
	var rerr error
	for range 3 {
		if _, rerr = tr.Next(); rerr != nil {
			break
		}
	}
	require.Error(t, rerr, want)
	assert.Contains(t, rerr.Error(), want)
}

func TestTraceBadLines(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"timestamp": 5, "input_length": 10, "output_length": 1}` + "\n" + `{"timestamp": 4, "input_length": 1, "output_length": 1}`, "t.jsonl:2: timestamp: -1ms from the first line is before the previous line's 0s"},
		{`{"timestamp": 0, "input_length": "ten", "output_length": 1}`, "t.jsonl:1: input_length: must be a number"},
		{`{"timestamp": 0, "output_length": 1}`, "t.jsonl:1: input_length: missing"},
		{`{"timestamp": 0, "input_length": 10, "output_length": 0}`, "t.jsonl:1: output_length: must be a whole number >= 1, got 0"},
		{`{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1, 2]}`, "t.jsonl:1: hash_ids: 2 ids for 10 tokens"},
		{"\n\n{\"timestamp\": 0,", "t.jsonl:3: invalid JSON"},
		{`{"timestamp": 1.5, "input_length": 10, "output_length": 1}`, "t.jsonl:1: timestamp: must be a whole number"},
	} {
		assertTraceError(t, traceCfg(writeTemp(t, "t.jsonl", tc.body)), tc.want)
	}
}

// TestPromptForSharesPrefixes: rows of the real conversation trace that
// share leading hash ids send byte-identical prefixes of exactly that many
// blocks, and each prompt has the row's length under the estimate.
func TestPromptForSharesPrefixes(t *testing.T) {
	rows := readAll(t, traceCfg(filepath.Join("testdata", "real", "mooncake-conversation-first400.jsonl")), 60)
	const block = 512 * BytesPerToken
	prompts := make([]string, len(rows))
	for i, r := range rows {
		prompts[i] = PromptFor(r, 512)
		assert.Equal(t, r.InputTokens, estimate([]Message{{Role: "user", Content: prompts[i]}}), "line %d", r.Line)
	}
	checked := 0
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			shared := 0
			for shared < min(len(rows[i].HashIDs), len(rows[j].HashIDs)) && rows[i].HashIDs[shared] == rows[j].HashIDs[shared] {
				shared++
			}
			common := 0
			for common < min(len(prompts[i]), len(prompts[j])) && prompts[i][common] == prompts[j][common] {
				common++
			}
			full := min(shared*block, len(prompts[i]), len(prompts[j]))
			assert.GreaterOrEqual(t, common, full, "lines %d and %d share %d blocks", rows[i].Line, rows[j].Line, shared)
			if shared*block < min(len(prompts[i]), len(prompts[j])) {
				assert.Less(t, common, shared*block+block, "lines %d and %d differ after their shared blocks", rows[i].Line, rows[j].Line)
			}
			if shared > 0 {
				checked++
			}
		}
	}
	assert.Positive(t, checked, "the excerpt has shared prefixes")
}

func TestTraceConfigValidate(t *testing.T) {
	c := TraceConfig{Format: "alibaba", Speed: 0, Offset: -1, BlockTokens: 0, Loop: true}
	err := c.Validate("live.trace")
	require.Error(t, err)
	for _, want := range []string{"live.trace.path: a trace file is required", `live.trace.format: "alibaba" is not one of "mooncake", "azure", "burstgpt"`, "live.trace.speed: must be > 0", "live.trace.offset, length: must be >= 0", "live.trace.block_tokens: must be >= 1", "live.trace.loop: needs live.trace.length"} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestRealAzureTrace reads the Azure conversation trace excerpt: times
// from the first row's date-time, lengths from its two token columns.
func TestRealAzureTrace(t *testing.T) {
	cfg := traceCfg(filepath.Join("testdata", "real", "AzureLLMInferenceTrace_conv.head.csv"))
	cfg.Format = TraceFormatAzure
	rows := readAll(t, cfg, 100)
	require.Len(t, rows, 40)
	assert.Equal(t, TraceRow{Line: 2, At: 0, InputTokens: 374, OutputTokens: 44}, rows[0])
	assert.Equal(t, 4314579*time.Microsecond, rows[1].At)
	assert.EqualValues(t, 41, rows[39].Line)
	assert.Equal(t, 24146296*time.Microsecond, rows[39].At)
	assert.Equal(t, 28, rows[39].InputTokens)
	for _, r := range rows {
		assert.Empty(t, r.HashIDs, "no prefix information: every prompt its own")
	}
	p0, p1 := PromptFor(rows[3], 512), PromptFor(rows[4], 512)
	assert.Equal(t, len(p0), len(p1), "rows 4 and 5 ask for the same length")
	assert.NotEqual(t, p0[:16], p1[:16], "and share no prefix")
}

func TestAzureBadLines(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"timestamp,in,out\n", `t.csv:1: an Azure trace's header names the columns TIMESTAMP, ContextTokens, GeneratedTokens; "TIMESTAMP" is missing from "timestamp,in,out"`},
		{azureHeader + "\n2023-11-16 18:15:46,10\n", "t.csv:2: a row has the header's 3 fields, got 2"},
		{azureHeader + "\nyesterday,10,5\n", `t.csv:2: TIMESTAMP: "yesterday" is not a date-time`},
		{azureHeader + "\n2023-11-16 18:15:46.5,10,-5\n", `t.csv:2: GeneratedTokens: must be a whole number >= 0, got "-5"`},
		{azureHeader + "\n2023-11-16 18:15:46.5,10,5\n2023-11-16 18:15:45.5,10,5\n", "t.csv:3: TIMESTAMP: -1s from the first line is before the previous line's 0s"},
	} {
		cfg := traceCfg(writeTemp(t, "t.csv", tc.body))
		cfg.Format = TraceFormatAzure
		assertTraceError(t, cfg, tc.want)
	}
}

// TestBurstGPT reads the published file's first rows, and the later
// release's header with two more columns inserted: columns go by name,
// times from the first row, rows without tokens are sent for one.
func TestBurstGPT(t *testing.T) {
	rows := readAll(t, TraceConfig{Path: filepath.Join("testdata", "real", "BurstGPT_1.head.csv"), Format: TraceFormatBurstGPT, Speed: 1, BlockTokens: 512}, 10)
	require.Len(t, rows, 3)
	assert.Equal(t, []time.Duration{0, 40 * time.Second, 113 * time.Second}, []time.Duration{rows[0].At, rows[1].At, rows[2].At})
	assert.Equal(t, 1087, rows[1].InputTokens)
	assert.Equal(t, 230, rows[1].OutputTokens)

	v3 := writeTemp(t, "v3.csv", "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"+
		"5270414.5,3f2c,1.2,ChatGPT,100,0,100,Conversation log\n5270415,,0.4,GPT-4,0,7,7,API log\n")
	rows = readAll(t, TraceConfig{Path: v3, Format: TraceFormatBurstGPT, Speed: 1, BlockTokens: 512}, 10)
	require.Len(t, rows, 2)
	assert.Equal(t, 500*time.Millisecond, rows[1].At, "times from the first row")
	assert.Equal(t, 1, rows[0].OutputTokens, "a failed request's row asks for one token")
	assert.Equal(t, 1, rows[1].InputTokens)

	for _, tc := range []struct{ body, want string }{
		{"Timestamp,Model,Response tokens\n1,x,2\n", `"Request tokens" is missing`},
		{"Timestamp,Model,Request tokens,Response tokens\n1,x,2\n", "trace.csv:2: a row has the header's 4 fields, got 3"},
		{"Timestamp,Model,Request tokens,Response tokens\nsoon,x,2,3\n", `trace.csv:2: Timestamp: must be seconds >= 0, got "soon"`},
		{"Timestamp,Model,Request tokens,Response tokens\n1,x,-2,3\n", `trace.csv:2: Request tokens: must be a whole number >= 0, got "-2"`},
		{"Timestamp,Model,Request tokens,Response tokens\n9,x,2,3\n3,x,2,3\n", "trace.csv:3: Timestamp: -6s from the first line is before the previous line's 0s"},
	} {
		_, err := readAllErr(TraceConfig{Path: writeTemp(t, "trace.csv", tc.body), Format: TraceFormatBurstGPT, Speed: 1, BlockTokens: 512})
		assert.ErrorContains(t, err, tc.want)
	}
}

// readAllErr reads the trace to its end and returns the first error.
func readAllErr(cfg TraceConfig) ([]TraceRow, error) {
	tr, err := OpenTrace(cfg)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	var rows []TraceRow
	for {
		r, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
}

// TestRealTraceReleases reads the excerpts of the other releases of each
// trace: Azure's 2023 coding trace, its 2024 week-long trace (zone offsets,
// 6 fractional digits) and 2025 multimodal trace (ISO times, a NumImages
// column), BurstGPT's v2.0 file (columns inserted, float seconds from
// 19440110) and a Mooncake slice that starts in the middle of its trace.
// The times count from each file's first row.
func TestRealTraceReleases(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		rows         int
		second, last TraceRow // Line, At, InputTokens, OutputTokens
	}{
		{"AzureLLMInferenceTrace_code.head.csv", TraceFormatAzure, 50,
			TraceRow{Line: 3, At: 52 * time.Millisecond, InputTokens: 3180, OutputTokens: 8},
			TraceRow{Line: 51, At: 36649398 * time.Microsecond, InputTokens: 2025, OutputTokens: 9}},
		{"AzureLLMInferenceTrace_code_1week.head5-tail5.csv", TraceFormatAzure, 10,
			TraceRow{Line: 3, At: 7405 * time.Microsecond, InputTokens: 2399, OutputTokens: 6},
			TraceRow{Line: 11, At: 604799919571 * time.Microsecond, InputTokens: 4725, OutputTokens: 8}},
		{"AzureLMMInferenceTrace_multimodal.head5-tail5.csv", TraceFormatAzure, 10,
			TraceRow{Line: 3, At: 5550 * time.Millisecond, InputTokens: 949, OutputTokens: 126},
			TraceRow{Line: 11, At: 604799695 * time.Millisecond, InputTokens: 841, OutputTokens: 63}},
		{"BurstGPT_3.head.csv", TraceFormatBurstGPT, 4,
			TraceRow{Line: 3, At: 51 * time.Second, InputTokens: 36, OutputTokens: 29},
			TraceRow{Line: 5, At: 144 * time.Second, InputTokens: 935, OutputTokens: 178}},
		{"mooncake-arxiv-midtrace-30.jsonl", TraceFormatMooncake, 30,
			TraceRow{Line: 2, At: 0, InputTokens: 9456, OutputTokens: 560},
			TraceRow{Line: 30, At: 3053 * time.Millisecond, InputTokens: 1302, OutputTokens: 355}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cfg := traceCfg(filepath.Join("testdata", "real", tc.file))
			cfg.Format = tc.format
			rows := readAll(t, cfg, 1000)
			require.Len(t, rows, tc.rows)
			assert.Zero(t, rows[0].At, "the first row is sent at once")
			for _, got := range []TraceRow{rows[1], rows[len(rows)-1]} {
				got.HashIDs = nil
				want := tc.second
				if got.Line != want.Line {
					want = tc.last
				}
				assert.Equal(t, want, got)
			}
		})
	}
}

// A CSV trace saved by a spreadsheet tool: a byte-order mark before the
// header and CRLF line ends.
func TestCSVTraceBOMAndCRLF(t *testing.T) {
	p := writeTemp(t, "t.csv", "\uFEFFTIMESTAMP,ContextTokens,GeneratedTokens\r\n2024-05-12 00:00:00+00:00,10,2\r\n2024-05-12 00:00:00.5+00:00,20,3\r\n")
	cfg := traceCfg(p)
	cfg.Format = TraceFormatAzure
	rows := readAll(t, cfg, 10)
	require.Len(t, rows, 2)
	assert.Equal(t, TraceRow{Line: 3, At: 500 * time.Millisecond, InputTokens: 20, OutputTokens: 3}, rows[1])
}
