package dataset

import (
	"os"
	"path/filepath"
	"testing"
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
