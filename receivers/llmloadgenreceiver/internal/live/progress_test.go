package live

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

func TestLiveProgressLine(t *testing.T) {
	var out bytes.Buffer
	start := time.Unix(1000, 0)
	var p liveProgress
	p.init(&out, start, config.ArrivalConfig{Type: config.ArrivalPoisson, Rate: 10, Stages: []config.StageConfig{{Duration: 10 * time.Second, Target: 30}}})
	p.sent.Store(60)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	for i := 0; i < 50; i++ {
		res := &liveResult{Scheduled: at(i * 10), FirstToken: at(i*10 + 40 + i), Gaps: []float64{0.010, 0.012}}
		p.add(res)
	}
	p.add(&liveResult{ErrorType: "rate_limit"})
	p.add(&liveResult{ErrorType: "rate_limit"})
	p.add(&liveResult{ErrorType: "timeout"})
	line := p.line(start.Add(5 * time.Second))
	// Offered: the mean of the 10 → 30 ramp over its first half; 60 sent and
	// 53 done in 5 s; 7 in flight; TTFT 40..89 ms (nearest rank); ITL 10 and 12 ms.
	assert.Equal(t, "     5s  offered 15.0/s  sent 12.0/s  done 10.6/s  in flight 7  TTFT p50 64.0 ms p95 87.0 ms  ITL p50 10.0 ms"+
		"  errors 3 (rate_limit 2, timeout 1)", line)

	// The next window starts empty; errors stay cumulative.
	next := p.line(start.Add(10 * time.Second))
	assert.Contains(t, next, "sent 0/s  done 0/s  in flight 7  TTFT p50 - p95 -  ITL p50 -  errors 3 (")
	assert.Contains(t, next, "offered 25.0/s")

	p.print("x")
	assert.Equal(t, "x\n", out.String())
	var quiet liveProgress
	quiet.init(nil, start, config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: 4})
	quiet.print("nothing")
	assert.NotContains(t, quiet.line(start.Add(time.Second)), "offered", "a closed loop has no offered rate")
}

func TestDescribeArrival(t *testing.T) {
	assert.Equal(t, "poisson 5.00 → 60.0 → 60.0 req/s over 1m0s, at most 1,500 requests", describeArrival(config.ArrivalConfig{Type: config.ArrivalPoisson, Rate: 5,
		Stages: []config.StageConfig{{Duration: 50 * time.Second, Target: 60}, {Duration: 10 * time.Second, Target: 60}}}, 1500, 0))
	assert.Equal(t, "concurrency 8.00 users, for 30s", describeArrival(config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: 8}, 0, 30*time.Second))
}

func TestProgressOutputValidation(t *testing.T) {
	cfg := config.Default()
	cfg.ProgressOutput = "tty"
	require.ErrorContains(t, cfg.Validate(), `progress_output: unknown value "tty"; allowed values: log, console`)
	cfg.ProgressOutput = config.ProgressConsole
	require.ErrorContains(t, cfg.Validate(), `progress_output: "console" needs mode "live"`)
}

// Live client spans carry the offered rate of the schedule at their
// scheduled time, which load_report draws as the target line.
func TestLiveSpansCarryTargetRate(t *testing.T) {
	srv := startMock(t, nil)
	cfg := liveConfig(srv.URL(), 6, 40)
	run := startLive(t, cfg)
	spans := run.spans(t, 6)
	run.stop(t)
	for _, sp := range spans {
		assert.InDelta(t, 40, attrF(sp, genai.AttrLoadgenTargetRate), 1e-9, "span %s", sp.Name())
	}
	assert.True(t, strings.HasPrefix(describeArrival(cfg.Arrival, cfg.Requests, 0), "constant 40.0 req/s"))
}
