package dataset

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchFileMiB sizes the benchmark's dataset file (DATASET_BENCH_MIB,
// default 256; 1024 for the 1 GB case).
func benchFileMiB(b *testing.B) int {
	if v, err := strconv.Atoi(os.Getenv("DATASET_BENCH_MIB")); err == nil && v > 0 {
		return v
	}
	return 256
}

// writeBenchJSONL writes a JSONL chat file of about mib MiB: records of one
// system and one user message of varying length, with an answer.
func writeBenchJSONL(b *testing.B, mib int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "bench.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	words := strings.Repeat("the model streams tokens over server-sent events ", 64)
	var written int
	for i := 0; written < mib<<20; i++ {
		n := 200 + (i*7919)%2800
		line := fmt.Sprintf(`{"messages": [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": %q}, {"role": "assistant", "content": %q}]}`+"\n",
			words[:n], words[:100+(i*31)%900])
		written += len(line)
		if _, err := w.WriteString(line); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkOpenJSONL reads a large JSONL file once, as a run's start does:
// MB/s, and the heap the index holds afterwards (bounded by max_records,
// not by the file).
func BenchmarkOpenJSONL(b *testing.B) {
	mib := benchFileMiB(b)
	p := writeBenchJSONL(b, mib)
	cfg := Config{Path: p, Format: FormatJSONL, MaxRecords: 100_000, Order: OrderRandom}
	var heap uint64
	b.SetBytes(int64(mib) << 20)
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix, err := Open(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = max(heap, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))
		b.ReportMetric(float64(ix.Summary().Records), "records")
		ix.Close()
	}
	b.ReportMetric(float64(heap)/(1<<20), "index-heap-MiB")
}

// BenchmarkNext is the cost of one request's record: a read by offset and
// one record's decoding.
func BenchmarkNext(b *testing.B) {
	p := writeBenchJSONL(b, 16)
	ix, err := Open(Config{Path: p, Format: FormatJSONL, MaxRecords: 100_000, Order: OrderRandom}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := ix.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
