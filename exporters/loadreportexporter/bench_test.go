package loadreportexporter

import (
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// benchBatch is 1,000 streamed chat requests over 100 s: four targets/models,
// 1 % errors, chunk events on every tenth request.
func benchBatch(offset time.Duration) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 1000; i++ {
		r := req{at: offset + time.Duration(i)*100*time.Millisecond, dur: time.Duration(800+i%700) * time.Millisecond,
			ttft: time.Duration(80+i%300) * time.Millisecond, out: int64(50 + i%200), in: 300,
			target: []string{"vllm-a", "vllm-b"}[i%2], model: []string{"llama", "qwen"}[i/2%2], scenario: "chat", rate: 10}
		if i%100 == 99 {
			r.errType = "503"
		}
		if i%10 == 0 {
			r.chunks = []time.Duration{r.ttft, r.ttft + 20*time.Millisecond, r.ttft + 45*time.Millisecond, r.ttft + 70*time.Millisecond}
		}
		addReq(ss, r)
	}
	return td
}

// BenchmarkConsumeTraces measures ingest cost per span (model-call spans).
func BenchmarkConsumeTraces(b *testing.B) {
	cfg := createDefaultConfig()
	st := newState(cfg, time.Now, newJoiner(cfg.Join))
	batches := make([]ptrace.Traces, 16)
	for i := range batches {
		batches[i] = benchBatch(time.Duration(i) * 100 * time.Second)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.consumeTraces(batches[i%len(batches)])
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkHourLongRunMemory feeds one hour of requests at 1,000 req/s
// (3.6 M spans) and reports the heap the state holds: it must stay bounded
// (sketch bins, timeline points), not grow with the request count.
func BenchmarkHourLongRunMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cfg := createDefaultConfig()
		st := newState(cfg, time.Now, newJoiner(cfg.Join))
		batch := benchBatch(0)
		spans := batch.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for sec := 0; sec < 3600; sec++ {
			// Shift the same 1,000 requests to second `sec` of the hour.
			shift := time.Duration(sec) * time.Second
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				start := t0.Add(shift + time.Duration(k)*time.Millisecond)
				d := sp.EndTimestamp().AsTime().Sub(sp.StartTimestamp().AsTime())
				sp.SetStartTimestamp(ptsOf(start))
				sp.SetEndTimestamp(ptsOf(start.Add(d)))
			}
			st.consumeTraces(batch)
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse)-float64(before.HeapInuse), "state-heap-bytes")
		b.ReportMetric(float64(len(st.timeline.points)), "timeline-points")
		runtime.KeepAlive(st)
	}
}

// BenchmarkWriteReport measures building and rendering the three formats
// after an hour-long run at 10 req/s.
func BenchmarkWriteReport(b *testing.B) {
	cfg := createDefaultConfig()
	cfg.Directory = b.TempDir()
	st := newState(cfg, time.Now, newJoiner(cfg.Join))
	for i := 0; i < 36; i++ {
		st.consumeTraces(benchBatch(time.Duration(i) * 100 * time.Second))
	}
	rd, err := newRenderer(cfg.CancelledErrorTypes)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := st.build(true)
		for _, f := range []string{FormatJSON, FormatMarkdown, FormatHTML} { // csv is appended, not rendered
			if _, err := rd.render(f, r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkJoin100k joins 100,000 requests whose server spans arrive in
// another order and other batches, 1 % never, and reports the cost per
// request (both spans consumed) and the peak heap the join holds above the
// start; the unjoined count must be exact.
func BenchmarkJoin100k(b *testing.B) {
	const n = 100_000
	rs, perm, missing := joinLoad(n)
	var peak uint64
	for i := 0; i < b.N; i++ {
		jr := &joinRun{now: t0}
		cfg := createDefaultConfig()
		jr.st = newState(cfg, func() time.Time { return jr.now }, newJoiner(cfg.Join))
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		for start := 0; start < n; start += 10_000 {
			jr.feed(rs[start:start+10_000], localPerm(perm, start, 10_000))
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
		}
		ss := jr.report(true)
		if got := ss.UnjoinedClient[unjoinedTimeout] + ss.UnjoinedClient[unjoinedRunEnd]; ss.Joined != int64(n-missing) || got != int64(missing) {
			b.Fatalf("joined %d unjoined %d, want %d and %d", ss.Joined, got, n-missing, missing)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/request")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// localPerm is perm's window [start, start+n) shifted to 0..n−1, kept
// inside the window (a server span stays within its 10,000 requests).
func localPerm(perm []int, start, n int) []int {
	out := make([]int, 0, n)
	seen := make([]bool, n)
	for _, k := range perm[start : start+n] {
		if k >= start && k < start+n && !seen[k-start] {
			out = append(out, k-start)
			seen[k-start] = true
		}
	}
	for k := range seen {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}
