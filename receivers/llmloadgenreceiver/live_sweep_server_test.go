package llmloadgenreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
)

func watchOf(cfg SweepServerConfig, pts ...serverPoint) *serverWatch {
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
	cfg := defaultSweepServer()
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
	v, _ = watchOf(defaultSweepServer(), full[:1]...).verdict()
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
	cfg.Live.Sweep = LiveSweepConfig{StepDuration: 2 * time.Second, StartRate: 20, StepRate: 100, MaxRate: 120,
		TTFT: 10 * time.Second, MinGoodRatio: 0.5, SaturationRatio: 0.1, Server: defaultSweepServer()}
	cfg.Live.Sweep.Server.MetricsURL = mock.URL() + "/metrics"
	cfg.Live.Sweep.Server.Interval, cfg.Live.Sweep.Server.Sustained = 100*time.Millisecond, 300*time.Millisecond
	cfg.Live.Timeouts.TTFT, cfg.Live.Timeouts.Total = 20*time.Second, time.Minute
	run := startLive(t, cfg)
	lr := run.tr.(*handle).l.runner.(*liveRunner)
	require.Eventually(t, func() bool {
		select {
		case <-lr.outDone:
			return true
		default:
			return false
		}
	}, 60*time.Second, 50*time.Millisecond)
	run.stop(t)
	assert.Contains(t, []string{sweepKVCacheFull, sweepPreemptions}, lr.sweepStoppedBy)
	assert.InDelta(t, 20.0, lr.sweepKnee, 1e-9, "the calm step passed")
	assert.Positive(t, mock.Stats().Preemptions)
}
