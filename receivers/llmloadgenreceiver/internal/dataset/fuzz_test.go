package dataset

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzOpen feeds arbitrary bytes to both readers: no panic; an error names
// the file; an open index accounts for every record (kept + skipped), and
// every record it kept reads back.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"toy_chat_fine_tuning.head.jsonl", "glaive_toolcall_en_demo.head.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "real", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"prompt": "a", "max_tokens": 3}` + "\n" + `{"messages": [{"role": "user", "content": [{"type": "text", "text": "b"}]}]}`))
	f.Add([]byte(`[{"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "h"}, {"from": "gpt", "value": "g"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{FormatJSONL, FormatShareGPT} {
			for _, skip := range []bool{false, true} {
				cfg := Config{Path: p, Format: format, MaxRecords: 3, Order: OrderSequential, SkipInvalid: skip}
				ix, err := Open(cfg, 1)
				if err != nil {
					if len(err.Error()) < len("dataset "+p) {
						t.Fatalf("error does not name the file: %v", err)
					}
					continue
				}
				s := ix.Summary()
				var skipped int64
				for _, n := range s.Skipped {
					skipped += n
				}
				if int64(s.Kept)+skipped != s.Records {
					t.Fatalf("%s: %d records, %d kept + %d skipped %v", format, s.Records, s.Kept, skipped, s.Skipped)
				}
				for range s.Kept {
					if _, err := ix.Next(); err != nil {
						t.Fatalf("%s: a kept record does not read back: %v", format, err)
					}
				}
				ix.Close()
			}
		}
	})
}

// FuzzTrace feeds arbitrary bytes to the trace reader: no panic, rows in
// time order with one prompt of the row's length each, errors that name
// the file and line.
func FuzzTrace(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "real", "mooncake-synthetic-first400.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:2000])
	f.Add([]byte(`{"timestamp": 3, "input_length": 700, "output_length": 2, "hash_ids": [7, 8]}`))
	azure, err := os.ReadFile(filepath.Join("testdata", "real", "AzureLLMInferenceTrace_conv.head.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(azure[:600])
	for _, name := range []string{"BurstGPT_1.head.csv", "BurstGPT_3.head.csv", "AzureLMMInferenceTrace_multimodal.head5-tail5.csv", "AzureLLMInferenceTrace_code_1week.head5-tail5.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", "real", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "trace")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{TraceFormatMooncake, TraceFormatAzure, TraceFormatBurstGPT} {
			fuzzTraceRows(t, TraceConfig{Path: p, Format: format, Speed: 1, BlockTokens: 16})
		}
	})
}

func fuzzTraceRows(t *testing.T, cfg TraceConfig) {
	t.Helper()
	tr, err := OpenTrace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var last time.Duration
	for range 50 {
		row, err := tr.Next()
		if err != nil {
			if err != io.EOF && !strings.Contains(err.Error(), cfg.Path+":") {
				t.Fatalf("%s: error without file:line: %v", cfg.Format, err)
			}
			return
		}
		if row.At < last {
			t.Fatalf("%s: line %d at %v, before %v", cfg.Format, row.Line, row.At, last)
		}
		last = row.At
		if row.InputTokens <= 1<<16 {
			if got := estimate([]Message{{Content: PromptFor(row, 16)}}); got != max(row.InputTokens, MessageOverhead+1) {
				t.Fatalf("%s: line %d: prompt of %d tokens, want %d", cfg.Format, row.Line, got, row.InputTokens)
			}
		}
	}
}
