package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

func watchOf(cfg config.SweepServerConfig, pts ...serverPoint) *serverWatch {
	cfg.MetricsURL = "http://127.0.0.1:1/metrics"
	w := newServerWatch(cfg, nil, zap.NewNop())
	w.points = pts
	return w
}

func point(at time.Duration, kv, waiting, preempt float64) serverPoint {
	return serverPoint{at: time.Unix(0, 0).Add(at), s: servermetrics.Sample{Server: "vllm",
		Gauges:   map[string]float64{servermetrics.KVCache: kv, servermetrics.Waiting: waiting},
		Counters: map[string]float64{servermetrics.Preemptions: preempt}}}
}

func TestServerWatchVerdicts(t *testing.T) {
	cfg := config.Default().Live.Sweep.Server
	cfg.Sustained = 2 * time.Second
	var calm, full, briefly, grows, reset []serverPoint
	for i := 0; i < 10; i++ {
		at := time.Duration(i) * time.Second
		calm = append(calm, point(at, 0.4, float64(i%2), 3))
		full = append(full, point(at, 0.97, 0, 3))
		kv := 0.3
		if i%2 == 0 {
			kv = 0.99 // full at every other scrape only
		}
		briefly = append(briefly, point(at, kv, 0, 3))
		grows = append(grows, point(at, 0.5, float64(2*i), 3))
		reset = append(reset, point(at, 0.5, 0, map[bool]float64{true: 40, false: 2}[i < 5]))
	}
	v, _ := watchOf(cfg, calm...).verdict()
	assert.Empty(t, v, "no signal below capacity")
	v, why := watchOf(cfg, full...).verdict()
	assert.Equal(t, sweepKVCacheFull, v)
	assert.Contains(t, why, "at or above 95 % for 2s")
	v, _ = watchOf(cfg, briefly...).verdict()
	assert.Empty(t, v, "full for less than sustained at a time")
	v, why = watchOf(cfg, grows...).verdict()
	assert.Equal(t, sweepQueueGrows, v)
	assert.Contains(t, why, "to 18")
	v, why = watchOf(cfg, reset...).verdict()
	assert.Equal(t, sweepPreemptions, v, "a counter that went back (server restart) counts from zero")
	assert.Contains(t, why, "preempted 2 requests")
	cfg.Preemptions, cfg.QueueGrowth, cfg.KVCacheUsage = false, false, 0
	v, _ = watchOf(cfg, full...).verdict()
	assert.Empty(t, v, "every check off")
	v, _ = watchOf(config.Default().Live.Sweep.Server, full[:1]...).verdict()
	assert.Empty(t, v, "one scrape says nothing")
}

// TestLiveSweepStopsOnServerSaturation: a KV cache of 8,192 tokens holds
// about 50 requests of 164 tokens. At 20 req/s (~11 in flight) the server
// is calm; at 120 req/s (~66) it fills and preempts while the client's
// lenient SLO still passes, and the watch of its /metrics stops the sweep.
func TestLiveSweepStopsOnServerSaturation(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) {
		c.OutputTokens, c.Jitter, c.KVCacheTokens = 64, 0, 8192
	})
	cfg := liveConfig(mock.URL(), 0, 1)
	cfg.Live.Sweep = config.LiveSweepConfig{StepDuration: 2 * time.Second, StartRate: 20, StepRate: 100, MaxRate: 120,
		TTFT: 10 * time.Second, MinGoodRatio: 0.5, SaturationRatio: 0.1, Server: config.Default().Live.Sweep.Server}
	cfg.Live.Sweep.Server.MetricsURL = mock.URL() + "/metrics"
	cfg.Live.Sweep.Server.Interval, cfg.Live.Sweep.Server.Sustained = 100*time.Millisecond, 300*time.Millisecond
	cfg.Live.Timeouts.TTFT, cfg.Live.Timeouts.Total = 20*time.Second, time.Minute
	run := startLive(t, cfg)
	lr := run.runDone(t, 60*time.Second)
	run.stop(t)
	assert.Contains(t, []string{sweepKVCacheFull, sweepPreemptions}, lr.sweepStoppedBy)
	assert.InDelta(t, 20.0, lr.sweepKnee, 1e-9, "the calm step passed")
	assert.Positive(t, mock.Stats().Preemptions)
}

func TestSweepPlanBisects(t *testing.T) {
	// The largest passing rate is 37 between 10 and 100, to within 2.
	p := newSweepPlan(config.LiveSweepConfig{Search: config.SweepBisect, StartRate: 10, MaxRate: 100, Tolerance: 2}, 0)
	var offered []float64
	for i := 0; i < 20; i++ {
		r, ok := p.rate()
		if !ok {
			break
		}
		offered = append(offered, r)
		p.result(r <= 37, 0)
	}
	assert.Equal(t, []float64{10, 100, 55, 32.5, 43.75, 38.125, 35.3125, 36.71875}, offered)
	assert.InDelta(t, 36.71875, p.lo, 1e-9)
	assert.InDelta(t, 38.125, p.hi, 1e-9)
	assert.LessOrEqual(t, p.hi-p.lo, 2.0)

	p = newSweepPlan(config.LiveSweepConfig{Search: config.SweepBisect, StartRate: 10, MaxRate: 100, Tolerance: 2}, 0)
	r, _ := p.rate()
	p.result(false, 0)
	_, ok := p.rate()
	assert.False(t, ok, "start_rate failed: nothing lower to try (rate %v)", r)

	p = newSweepPlan(config.LiveSweepConfig{StartRate: 2, StepRate: 3, MaxRate: 9}, 0)
	var steps []float64
	for r, ok := p.rate(); ok; r, ok = p.rate() {
		steps = append(steps, r)
		p.result(true, 0)
	}
	assert.Equal(t, []float64{2, 5, 8}, steps, "steps until max_rate")
}

// A range search measures one user, then the throughput users, then offers
// the rates evenly between the two measured rates, each whatever the
// verdict of the one before.
func TestSweepPlanRange(t *testing.T) {
	p := newSweepPlan(config.LiveSweepConfig{Search: config.SweepRange, Rates: 3}, 64)
	var specs []sweepSpec
	for i := 0; i < 20; i++ {
		s, ok := p.nextStep()
		if !ok {
			break
		}
		specs = append(specs, s)
		completed := map[int]float64{1: 4, 64: 20}[s.users]
		p.result(s.rate < 12, completed)
	}
	assert.Equal(t, []sweepSpec{{users: 1}, {users: 64}, {rate: 8}, {rate: 12}, {rate: 16}}, specs)

	p = newSweepPlan(config.LiveSweepConfig{Search: config.SweepRange, Rates: 3, ThroughputUsers: 8}, 64)
	s, _ := p.nextStep()
	p.result(true, 5)
	s, _ = p.nextStep()
	assert.Equal(t, 8, s.users, "throughput_users over max_concurrency")
	p.result(true, 4.5) // more users went no faster
	_, ok := p.nextStep()
	assert.False(t, ok, "no rates between a throughput below the synchronous rate")
}
