package live

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
)

// BenchmarkTraceReplayTiming replays the first 40 s of each real Mooncake
// excerpt at 1× against mockllm in its own process (TTFT 20 ms, ITL 5 ms,
// each row's output length exactly, its prompt from its hash ids) and
// reports how late each request left the client against its row's time:
// dispatched (its goroutine past the gate, slot and connection taken),
// written (the write of its last byte returned: a staged request's one
// byte, the whole request otherwise) and arrived (the mock had read its
// body to the end, from the mock's own record), p50 / p99 / max in µs, and
// the requests sent against the window's rows. The conversation trace
// sends up to 16 rows at one timestamp; the synthetic one has a timestamp
// per row.
//
//	go test -run '^$' -bench TraceReplayTiming -benchtime 1x ./receivers/llmloadgenreceiver/internal/live/
func BenchmarkTraceReplayTiming(b *testing.B) {
	url := startMockProcess(b, "-ttft", "20ms", "-itl", "5ms", "-context-window", "4194304", "-jitter", "0")
	for _, name := range []string{"conversation", "synthetic"} {
		b.Run("trace="+name, func(b *testing.B) {
			for range b.N {
				benchTraceReplay(b, url, name)
			}
		})
	}
}

func benchTraceReplay(b *testing.B, url, name string) {
	const window = 40 * time.Second
	cfg := liveConfig(url, 0, 1)
	cfg.Live.IgnoreEOS = true
	cfg.Live.MaxConcurrency = 0
	cfg.Live.Trace = dataset.TraceConfig{
		Path:   filepath.Join("..", "dataset", "testdata", "real", "mooncake-"+name+"-first400.jsonl"),
		Format: dataset.TraceFormatMooncake, Speed: 1, Length: window, BlockTokens: 512,
	}
	cfg.Live.Timeouts.Total = time.Minute
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	rows := readTraceRows(b, cfg.Live.Trace)
	run := startLive(b, cfg)
	run.runDone(b, window+2*time.Minute)
	run.stop(b)
	var disp, sent, arrived []float64
	bursts := map[int64][]float64{} // dispatch lateness by scheduled time
	for _, td := range run.traces.AllTraces() {
		eachSpan(td, func(sp ptrace.Span) {
			if _, ok := sp.Attributes().Get(attrLiveDatasetRow); !ok {
				return
			}
			start := sp.StartTimestamp().AsTime()
			d, w := 0.0, -1.0
			for i := 0; i < sp.Events().Len(); i++ {
				switch ev := sp.Events().At(i); ev.Name() {
				case "llm_loadgen.dispatched":
					d = float64(ev.Timestamp().AsTime().Sub(start)) / 1e3
				case "llm_loadgen.request_sent":
					w = float64(ev.Timestamp().AsTime().Sub(start)) / 1e3
				}
			}
			disp = append(disp, d)
			if id, ok := sp.Attributes().Get(attrResponseID); ok {
				if tr, err := fetchTruth(url, id.Str()); err == nil && !tr.Received.IsZero() {
					arrived = append(arrived, float64(tr.Received.Sub(start))/1e3)
				}
			}
			bursts[start.UnixNano()] = append(bursts[start.UnixNano()], d)
			if w >= 0 {
				sent = append(sent, w)
			}
		})
	}
	if len(sent) == 0 {
		b.Fatal("no request written")
	}
	if len(arrived) != len(disp) {
		b.Fatalf("the mock has records of %d of %d requests", len(arrived), len(disp))
	}
	slices.Sort(disp)
	slices.Sort(sent)
	slices.Sort(arrived)
	// The first row of each timestamp shows the schedule's own timing; the
	// others of a burst leave one after another behind the writes ahead.
	var firsts, perRow []float64
	for _, ds := range bursts {
		slices.Sort(ds)
		firsts = append(firsts, ds[0])
		if len(ds) > 1 {
			perRow = append(perRow, (ds[len(ds)-1]-ds[0])/float64(len(ds)-1))
		}
	}
	slices.Sort(firsts)
	slices.Sort(perRow)
	b.ReportMetric(pct(firsts, 0.99), "first_of_timestamp_p99_us")
	if len(perRow) > 0 {
		b.ReportMetric(pct(perRow, 0.5), "burst_us_per_row")
	}
	b.ReportMetric(pct(disp, 0.5), "dispatch_p50_us")
	b.ReportMetric(pct(disp, 0.99), "dispatch_p99_us")
	b.ReportMetric(disp[len(disp)-1], "dispatch_max_us")
	b.ReportMetric(pct(sent, 0.5), "written_p50_us")
	b.ReportMetric(pct(sent, 0.99), "written_p99_us")
	b.ReportMetric(sent[len(sent)-1], "written_max_us")
	b.ReportMetric(pct(arrived, 0.5), "arrived_p50_us")
	b.ReportMetric(pct(arrived, 0.99), "arrived_p99_us")
	b.ReportMetric(arrived[len(arrived)-1], "arrived_max_us")
	b.ReportMetric(float64(len(sent)), "written")
	b.ReportMetric(float64(len(rows)), "rows")
	b.Logf("%s: %d rows at %d timestamps, %d written; from each row's time: dispatched p50 %.0f µs p99 %.0f µs max %.0f µs (first of each timestamp p50 %.0f µs p99 %.0f µs), written p50 %.0f µs p99 %.0f µs max %.0f µs, arrived at the mock p50 %.0f µs p99 %.0f µs max %.0f µs",
		name, len(rows), len(bursts), len(sent), pct(disp, 0.5), pct(disp, 0.99), disp[len(disp)-1], pct(firsts, 0.5), pct(firsts, 0.99),
		pct(sent, 0.5), pct(sent, 0.99), sent[len(sent)-1], pct(arrived, 0.5), pct(arrived, 0.99), arrived[len(arrived)-1])
	if len(perRow) > 0 {
		b.Logf("%s: in a burst, each row after the first left %.0f µs after the one before (median of %d bursts)", name, pct(perRow, 0.5), len(perRow))
	}
}

// eachSpan calls f for every span of td.
func eachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				f(sss.At(j).Spans().At(k))
			}
		}
	}
}
