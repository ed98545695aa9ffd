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
// sent (its last byte handed to the kernel: by the scheduler as it opened
// the row's gate, for a request staged ahead), dispatched (the row's
// goroutine past the gate, to read the response) and arrived (the mock's
// kernel received its last byte, from the mock's own record), p50 / p99 / max
// in µs, and the requests sent against the window's rows. The conversation
// trace sends up to 16 rows at one timestamp; the synthetic one has a
// timestamp per row.
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

// replayLateness is, per replayed row, how late each step came after the
// row's time (µs), and the sent times by timestamp.
type replayLateness struct {
	n                   int // rows replayed
	sent, disp, arrived []float64
	bursts              map[int64][]float64
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
	l := replayLateness{bursts: map[int64][]float64{}}
	for _, td := range run.traces.AllTraces() {
		eachSpan(td, func(sp ptrace.Span) { l.add(b, url, sp) })
	}
	if len(l.sent) != l.n || len(l.arrived) != l.n || len(l.disp) == 0 {
		b.Fatalf("%d requests, %d with their send stamped, %d with the mock's record", l.n, len(l.sent), len(l.arrived))
	}
	l.report(b, name, len(rows))
}

// add records the span of one replayed row.
func (l *replayLateness) add(b *testing.B, url string, sp ptrace.Span) {
	if _, ok := sp.Attributes().Get(attrLiveDatasetRow); !ok {
		return
	}
	l.n++
	start := sp.StartTimestamp().AsTime()
	for i := 0; i < sp.Events().Len(); i++ {
		us := float64(sp.Events().At(i).Timestamp().AsTime().Sub(start)) / 1e3
		switch sp.Events().At(i).Name() {
		case "llm_loadgen.dispatched":
			l.disp = append(l.disp, us)
		case "llm_loadgen.request_sent":
			l.sent = append(l.sent, us)
			l.bursts[start.UnixNano()] = append(l.bursts[start.UnixNano()], us)
		}
	}
	if id, ok := sp.Attributes().Get(attrResponseID); ok {
		tr, err := fetchTruth(url, id.Str())
		if err != nil {
			b.Fatal(err)
		}
		l.arrived = append(l.arrived, float64(tr.arrival().Sub(start))/1e3)
	}
}

func (l *replayLateness) report(b *testing.B, name string, rows int) {
	for _, s := range [][]float64{l.sent, l.disp, l.arrived} {
		slices.Sort(s)
	}
	// The first row of each timestamp shows the schedule's own timing; the
	// others of a burst leave one after another.
	var firsts, perRow []float64
	for _, ts := range l.bursts {
		slices.Sort(ts)
		firsts = append(firsts, ts[0])
		if len(ts) > 1 {
			perRow = append(perRow, (ts[len(ts)-1]-ts[0])/float64(len(ts)-1))
		}
	}
	slices.Sort(firsts)
	slices.Sort(perRow)
	for _, m := range []struct {
		name string
		v    []float64
	}{{"sent", l.sent}, {"dispatch", l.disp}, {"arrived", l.arrived}} {
		b.ReportMetric(pct(m.v, 0.5), m.name+"_p50_us")
		b.ReportMetric(pct(m.v, 0.99), m.name+"_p99_us")
		b.ReportMetric(m.v[len(m.v)-1], m.name+"_max_us")
	}
	b.ReportMetric(pct(firsts, 0.99), "first_of_timestamp_p99_us")
	b.ReportMetric(float64(len(l.sent)), "sent")
	b.ReportMetric(float64(rows), "rows")
	b.Logf("%s: %d rows at %d timestamps, %d sent; from each row's time: sent p50 %.0f µs p99 %.0f µs max %.0f µs (first of each timestamp p99 %.0f µs), dispatched p50 %.0f µs p99 %.0f µs, arrived at the mock p50 %.0f µs p99 %.0f µs max %.0f µs",
		name, rows, len(l.bursts), len(l.sent), pct(l.sent, 0.5), pct(l.sent, 0.99), l.sent[len(l.sent)-1], pct(firsts, 0.99),
		pct(l.disp, 0.5), pct(l.disp, 0.99), pct(l.arrived, 0.5), pct(l.arrived, 0.99), l.arrived[len(l.arrived)-1])
	if len(perRow) > 0 {
		b.ReportMetric(pct(perRow, 0.5), "burst_us_per_row")
		b.Logf("%s: in a burst, each row after the first was sent %.0f µs after the one before (median of %d bursts)", name, pct(perRow, 0.5), len(perRow))
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
