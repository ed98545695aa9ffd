//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Memory settings of the backpressure pipeline. memory_limiter refuses
// once the Go heap reaches limit - spike (96 MiB) and forces a collection at
// the limit; the RSS bound adds the same allowance for the runtime and the
// mapped binary as the explosion test.
const (
	backpressureLimitMiB      = 128
	backpressureSpikeMiB      = 32
	backpressureRSSBoundBytes = (backpressureLimitMiB + rssAllowanceMiB) * mib
)

// backpressureConfig: llm_loadgen generates as fast as it can into
// memory_limiter and an OTLP exporter whose in-memory queue has room for
// far more than the heap limit, drained by one consumer, toward a sink the
// test slows down. What holds the generator back is memory_limiter alone.
var backpressureConfig = fmt.Sprintf(`
extensions:
  health_check:
    endpoint: 127.0.0.1:${env:OTELCOL_LLM_HEALTH_PORT}
receivers:
  llm_loadgen:
    mode: synthetic
    timing: as_fast_as_possible
    seed: 21
    requests: ${env:RELIABILITY_REQUESTS}
    arrival: {type: constant, rate: 1000}
    scenarios:
      - {type: chat, weight: 1}
      - {type: agent, weight: 1}
    progress_interval: 0s
    backpressure: {initial_backoff: 10ms, max_backoff: 500ms}
processors:
  memory_limiter:
    check_interval: 250ms
    limit_mib: %d
    spike_limit_mib: %d
exporters:
  otlp_grpc:
    endpoint: ${env:RELIABILITY_SINK}
    tls: {insecure: true}
    timeout: 10s
    sending_queue: {queue_size: 1000000, num_consumers: 1}
service:
  extensions: [health_check]
  telemetry:
    logs: {level: info}
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:OTELCOL_LLM_METRICS_PORT}
  pipelines:
    traces:
      receivers: [llm_loadgen]
      processors: [memory_limiter]
      exporters: [otlp_grpc]
`, backpressureLimitMiB, backpressureSpikeMiB)

// The offered load of the backpressure test: a first run of
// backpressureRequests requests, grown backpressureGrowth times per step
// while a run ends, or comes too close to its end, before memory_limiter
// refuses, at most backpressureSteps runs.
const (
	backpressureRequests = 20000
	backpressureGrowth   = 3
	backpressureSteps    = 3
)

// backpressureRun is one collector on backpressureConfig with its sink (at
// 500 ms per export) and RSS sampler.
type backpressureRun struct {
	requests int
	sink     *CountingSink
	col      *Collector
	rss      *RSSSampler
	start    time.Time // when the collector was healthy
}

func startBackpressureRun(t *testing.T, requests int) *backpressureRun {
	t.Helper()
	r := &backpressureRun{requests: requests, sink: StartCountingSink(t, "", 500*time.Millisecond)}
	t.Setenv("RELIABILITY_SINK", r.sink.Addr())
	t.Setenv("RELIABILITY_REQUESTS", fmt.Sprint(requests))
	// The Go runtime's soft limit just above memory_limiter's (limit plus
	// spike), as a deployment pairs them: without it, the relief burst of a
	// large run (the backlog draining while the generator runs flat out)
	// left garbage between collections that took RSS to 501 MiB although
	// memory_limiter held the live heap; at 0.8 of the bound (the Helm
	// chart's ratio) a 180,000-request run peaked at 379 of 384 MiB.
	t.Setenv("GOMEMLIMIT", fmt.Sprintf("%dMiB", backpressureLimitMiB+backpressureSpikeMiB))
	r.col = StartCollector(t, "--config", "file:"+writeFile(t, "backpressure.yaml", backpressureConfig))
	r.col.WaitHealthy(t, time.Minute)
	// Bounded by the test's own deadlines, which are generous.
	r.rss = SampleRSS(t, r.col, 100*time.Millisecond, 30*time.Minute)
	r.start = time.Now()
	return r
}

// abandon ends a run whose load was too small: the collector is killed (its
// queue would take minutes to drain into the slow sink) and the sink stops.
func (r *backpressureRun) abandon(t *testing.T) {
	t.Helper()
	r.rss.Stop()
	_ = r.col.cmd.Process.Kill()
	select {
	case <-r.col.done:
	case <-time.After(30 * time.Second):
		t.Fatal("collector did not die of SIGKILL")
	}
	r.sink.Stop()
}

// TestReliabilityBackpressure holds a sink at 500 ms per export while
// llm_loadgen generates as fast as it can: the exporter's queue fills the
// heap, memory_limiter refuses, llm_loadgen counts the refusals, backs off
// and stays far from done, and the collector's RSS stays under a bound
// derived from memory_limiter's limit. Then the sink speeds up: the
// generator finishes, and every span it generated arrives exactly once,
// each refusal having been retried.
//
// The scenario goes by what the collector's own metrics show, not by how
// fast this machine is: the test waits for the first refusal as long as the
// generator makes progress, and a run that ends, or passes half its
// requests, without one had too little load to fill the heap here (the sink
// drained too much of it meanwhile): the next run offers
// backpressureGrowth times as many requests.
func TestReliabilityBackpressure(t *testing.T) {
	var (
		run   *backpressureRun
		first generatorState // at the first refusal
	)
	for step, requests := 1, backpressureRequests; ; step, requests = step+1, requests*backpressureGrowth {
		run = startBackpressureRun(t, requests)
		g, err := waitProgress(5*time.Minute, time.Minute, func() generatorState { return readGenerator(t, run.col) },
			func(g generatorState) bool { return g.refused > 0 || g.finished })
		require.NoError(t, err, "memory_limiter never refused (run %d, %d requests; heap %.1f MiB):\n%s",
			step, requests, heapMiB(t, run.col), run.col.Output())
		if g.refused > 0 && !g.finished && g.requests <= float64(requests)/2 {
			first = g
			t.Logf("run %d: %d requests; memory_limiter first refused after %.0f of them", step, requests, g.requests)
			break
		}
		t.Logf("run %d: %d requests were too few to fill the heap on this machine before the run's second half (%+v; heap %.1f MiB)",
			step, requests, g, heapMiB(t, run.col))
		require.Less(t, step, backpressureSteps, "memory_limiter did not refuse in the first half of any run, the largest of %d requests", requests)
		run.abandon(t)
	}
	col, sink, rss, start, requests := run.col, run.sink, run.rss, run.start, run.requests
	firstRefusal := time.Since(start)

	// Under pressure: refusals rise on both sides and the generator backs off.
	// Two looks at the generator and the backend, 3 s and 9 s after the
	// first refusal.
	type look struct {
		at                        time.Duration
		emitted, requests         float64
		delivered                 int
		refused, limiter, backoff float64
	}
	lookAt := func(after time.Duration) look {
		time.Sleep(time.Until(start.Add(firstRefusal + after)))
		m := selfMetrics(t, col)
		return look{
			at:        time.Since(start),
			emitted:   sumSeriesOrZero(m, "otelcol_llm_loadgen_emitted", `signal="traces"`),
			requests:  sumSeriesOrZero(m, "otelcol_llm_loadgen_requests"),
			delivered: sink.Counts().Unique,
			refused:   sumSeriesOrZero(m, "otelcol_llm_loadgen_refused", `signal="traces"`),
			limiter:   sumSeriesOrZero(m, "otelcol_processor_memory_limiter_refused_spans"),
			backoff:   sumSeriesOrZero(m, "otelcol_llm_loadgen_backoff"),
		}
	}
	l1 := lookAt(3 * time.Second)
	l2 := lookAt(9 * time.Second)
	underPressure := rss.SamplesSince(start.Add(firstRefusal))
	freeRate := first.emitted / firstRefusal.Seconds()
	pressedRate := (l2.emitted - l1.emitted) / (l2.at - l1.at).Seconds()
	drainRate := float64(l2.delivered-l1.delivered) / (l2.at - l1.at).Seconds()
	backlog1, backlog2 := l1.emitted-float64(l1.delivered), l2.emitted-float64(l2.delivered)
	// The backlog (accepted, not yet delivered) lives in the exporter's
	// queue; what bounds it is the heap limit, checked through RSS below.
	t.Logf("unconstrained: %.0f spans/s until the first refusal at %v; under pressure: %.0f spans/s accepted, %.0f spans/s delivered; backlog %.0f then %.0f spans; %.0f of %d requests emitted; %.0f refused by memory_limiter, %.0f refusals at llm_loadgen, %.1f s backing off; RSS peak %.1f MiB (bound %d MiB)",
		freeRate, firstRefusal.Round(time.Millisecond), pressedRate, drainRate, backlog1, backlog2, l2.requests, requests,
		l2.limiter, l2.refused, l2.backoff, float64(rss.Peak())/mib, backpressureRSSBoundBytes/mib)
	assert.Positive(t, l2.limiter-l1.limiter, "memory_limiter kept refusing")
	assert.Equal(t, l2.limiter, l2.refused, "every refusal memory_limiter made, llm_loadgen counted")
	assert.Positive(t, l2.backoff-l1.backoff, "llm_loadgen kept backing off")
	assert.Less(t, pressedRate, freeRate/4, "the generator slowed down")
	assert.Less(t, l2.requests, float64(requests))
	assert.False(t, strings.Contains(col.Output(), "llm_loadgen finished"))
	assert.Less(t, rss.Peak(), int64(backpressureRSSBoundBytes), "RSS under pressure")
	// No growth while the pressure lasts: of the samples since the first
	// refusal, the last third peaks not far above the middle third.
	third := len(underPressure) / 3
	require.Greater(t, third, 10)
	peakOf := func(xs []int64) (p int64) {
		for _, x := range xs {
			p = max(p, x)
		}
		return p
	}
	midPeak, lastPeak := peakOf(underPressure[third:2*third]), peakOf(underPressure[2*third:])
	t.Logf("RSS peak under pressure: middle third %.1f MiB, last third %.1f MiB", float64(midPeak)/mib, float64(lastPeak)/mib)
	assert.Less(t, float64(lastPeak), 1.25*float64(midPeak), "RSS keeps growing under sustained pressure")

	// Relief: the backend speeds up, the generator finishes, all arrives.
	// The rest of the run takes what this machine takes: the test waits as
	// long as the generator makes progress.
	sink.SetDelay(0)
	_, err := waitProgress(10*time.Minute, time.Minute, func() generatorState { return readGenerator(t, col) },
		func(g generatorState) bool { return g.finished })
	require.NoError(t, err, "the generator did not finish after the pressure ended")
	var l spanLedger
	var c sinkCounts
	_, settled := waitSettled(3*time.Minute, time.Second, func() string {
		l, c = readLedger(selfMetrics(t, col)), sink.Counts()
		return fmt.Sprint(l, c)
	}, func(string) bool {
		return l.generated > 0 && l.inQueue == 0 && float64(c.Spans) == l.exported
	})
	rss.Stop()
	t.Logf("done in %v: %s; sink %+v; RSS peak %.1f MiB", time.Since(start).Round(time.Millisecond), l, c, float64(rss.Peak())/mib)
	require.True(t, settled, "pipeline did not settle")
	assert.Equal(t, l.generated, float64(c.Unique), "every span generated arrived")
	assert.Zero(t, c.Duplicates)
	assert.Equal(t, l.loadgenRefused, l.limiterRefused, "refusals: llm_loadgen = memory_limiter")
	assert.Zero(t, l.loadgenDropped, "nothing given up")
	assert.Zero(t, l.exportFailed+l.enqueueFailed)
	assert.Equal(t, float64(requests), sumSeries(t, selfMetrics(t, col), "otelcol_llm_loadgen_requests"))
	assert.Less(t, rss.Peak(), int64(backpressureRSSBoundBytes))
	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}

// heapMiB is the collector's Go heap as its own metrics report it (for
// messages: how near memory_limiter's threshold the run came).
func heapMiB(t *testing.T, col *Collector) float64 {
	t.Helper()
	if col.Exited() {
		return 0
	}
	return sumSeriesOrZero(selfMetrics(t, col), "otelcol_process_runtime_heap_alloc_bytes") / mib
}
