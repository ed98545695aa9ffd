package live

import (
	"context"
	"fmt"
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
