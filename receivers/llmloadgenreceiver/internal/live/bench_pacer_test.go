package live

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// BenchmarkPacer is the open-loop scheduler's timing alone: arrivals at a
// constant rate, each waited for as runOpen waits (pacer.wait), asleep on
// the runtime's timer or a timerfd until spin before it. It reports the lag
// after each arrival's time (p50, p99, max, in µs) and the CPU the waiting
// took per arrival.
//
//	go test -run '^$' -bench Pacer -benchtime 1x ./receivers/llmloadgenreceiver/
func BenchmarkPacer(b *testing.B) {
	for _, clock := range []string{config.PacerRuntime, config.PacerTimerfd} {
		for _, rate := range []int{1000, 10000} {
			for _, spin := range []time.Duration{0, 20 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond} {
				b.Run(fmt.Sprintf("clock=%s/rate=%d/spin=%v", clock, rate, spin), func(b *testing.B) {
					benchPacer(b, clock, rate, spin)
				})
			}
		}
	}
}

func benchPacer(b *testing.B, clock string, rate int, spin time.Duration) {
	pc := &pacer{timer: time.NewTimer(time.Hour), spin: spin}
	if clock == config.PacerTimerfd {
		tf, err := newTimerfd()
		if err != nil {
			b.Skip(err)
		}
		pc.tf = tf
	}
	defer pc.close()
	n := 2 * rate // two seconds of arrivals
	gap := time.Second / time.Duration(rate)
	lags := make([]float64, 0, n*b.N)
	cpu0 := cpuSelf()
	for range b.N {
		start := time.Now().Add(10 * time.Millisecond)
		for i := range n {
			sched := start.Add(time.Duration(i) * gap)
			pc.wait(context.Background(), sched)
			lags = append(lags, float64(time.Since(sched))/1e3)
		}
	}
	cpu := cpuSelf() - cpu0
	slices.Sort(lags)
	q := func(p float64) float64 { return lags[int(p*float64(len(lags)-1))] }
	b.ReportMetric(q(0.5), "p50-lag-µs")
	b.ReportMetric(q(0.99), "p99-lag-µs")
	b.ReportMetric(lags[len(lags)-1], "max-lag-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lags)), "cpu-µs/arrival")
}

// BenchmarkOpenLoopRate is the pacer inside a whole live run: open loop at
// a constant rate against mockllm in its own process (short streams, so
// the server is not the limit), for 12 s. From the spans it reports the
// achieved send rate in each 1 s window of the middle 10 s against the
// target (the worst window's error, in %, and the 10 s window's), the
// dispatch lag (send − scheduled time, which is the pacer's lag plus the
// start of the request's goroutine: p50, p99, in µs), and the requests
// scheduled but never sent.
//
//	go test -run '^$' -bench OpenLoopRate -benchtime 1x ./receivers/llmloadgenreceiver/internal/live/
func BenchmarkOpenLoopRate(b *testing.B) {
	url := startMockProcess(b, "-ttft", "2ms", "-itl", "1ms", "-output-tokens", "2", "-output-jitter", "0", "-jitter", "0")
	for _, rate := range []float64{1000, 10000} {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			for range b.N {
				benchOpenLoopRate(b, url, rate)
			}
		})
	}
}

func benchOpenLoopRate(b *testing.B, url string, rate float64) {
	const seconds = 12
	cfg := liveConfig(url, 0, rate)
	cfg.Duration = seconds * time.Second
	cfg.BatchSize = 2000
	cfg.Live.MaxConcurrency, cfg.Live.MaxTokens = 0, 2
	cfg.Live.Prompt.InputTokens = config.Distribution{Type: config.DistConstant, Value: 16}
	cfg.Live.ChunkEvents = config.ChunkEventsNone
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	run := startLive(b, cfg)
	run.runDone(b, seconds*time.Second+time.Minute)
	run.stop(b)
	var sched, lags []float64
	for _, td := range run.traces.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			ss := rss.At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				spans := ss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					at := float64(sp.StartTimestamp()) / 1e9
					q, _ := sp.Attributes().Get(attrLiveQueueTime)
					sched = append(sched, at+q.Double())
					lags = append(lags, q.Double()*1e6)
				}
			}
		}
	}
	if len(sched) == 0 {
		b.Fatal("no spans")
	}
	slices.Sort(sched)
	begin := sched[0]
	worst, sent10 := 0.0, 0
	for w := 1; w <= 10; w++ {
		lo, hi := begin+float64(w), begin+float64(w+1)
		n := 0
		for _, t := range sched {
			if t >= lo && t < hi {
				n++
			}
		}
		sent10 += n
		worst = max(worst, math.Abs(float64(n)-rate)/rate*100)
	}
	slices.Sort(lags)
	q := func(p float64) float64 { return lags[int(p*float64(len(lags)-1))] }
	b.ReportMetric(worst, "worst-1s-rate-err-%")
	b.ReportMetric(math.Abs(float64(sent10)-10*rate)/(10*rate)*100, "10s-rate-err-%")
	b.ReportMetric(q(0.5), "p50-dispatch-lag-µs")
	b.ReportMetric(q(0.99), "p99-dispatch-lag-µs")
	b.ReportMetric(float64(int(rate)*seconds-len(sched)), "not-sent")
}
