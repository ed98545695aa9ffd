package tokenize

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkFit is the cost of one exact 1,000-token prompt under the real
// GPT-2 tokenizer.json and Gemma 2's SentencePiece tokenizer.model:
//
//	go test -run '^$' -bench Fit ./receivers/llmloadgenreceiver/internal/tokenize/
func BenchmarkFit(b *testing.B) {
	for name, path := range map[string]string{"gpt2_json": "testdata/gpt2/tokenizer.json", "gemma2_model": "testdata/gemma2/tokenizer.model"} {
		b.Run(name, func(b *testing.B) { benchmarkFit(b, path) })
	}
}

func benchmarkFit(b *testing.B, path string) {
	tk, err := Open(Config{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	f, err := NewFiller(tk, strings.Repeat(" The quarterly report lists revenue by region, the staffing plan, open risks.", 400))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, n, err := f.Fit("[run x request "+strconv.Itoa(i)+"] Summarize the notes.", 1000); err != nil || n != 1000 {
			b.Fatal(n, err)
		}
	}
}
