package live

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// startMock runs a mockllm server on loopback for one test.
func startMock(t testing.TB, mutate func(*mockllm.Config)) *mockllm.Server {
	t.Helper()
	c := mockllm.DefaultConfig()
	c.TTFT, c.ITL, c.Jitter, c.OutputTokens, c.OutputJitter = 40*time.Millisecond, 8*time.Millisecond, 0.25, 16, 0
	c.StallDuration, c.SlowHeaders = 3*time.Second, 2*time.Second
	c.Seed = 7
	if mutate != nil {
		mutate(&c)
	}
	s, err := mockllm.New(c)
	require.NoError(t, err)
	require.NoError(t, s.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// liveConfig returns a live config against url issuing n requests at rate/s.
func liveConfig(url string, n int64, rate float64) *config.Config {
	cfg := config.Default()
	cfg.Mode = config.ModeLive
	cfg.Requests = n
	cfg.Arrival = config.ArrivalConfig{Type: config.ArrivalConstant, Rate: rate}
	cfg.FlushInterval = 50 * time.Millisecond
	cfg.Metrics.Interval = time.Hour // the final flush emits the metrics
	cfg.Live.Client.Endpoint = url + "/v1"
	cfg.Live.MaxTokens = 64
	cfg.Live.Prompt.InputTokens = config.Distribution{Type: config.DistConstant, Value: 100}
	cfg.Live.Timeouts = config.LiveTimeoutsConfig{Connect: 2 * time.Second, TTFT: 2 * time.Second, Idle: time.Second, Total: 20 * time.Second}
	cfg.Live.DrainTimeout = 5 * time.Second
	return cfg
}

type liveRun struct {
	traces  *consumertest.TracesSink
	metrics *consumertest.MetricsSink
	r       *Runner
}

func startLive(t testing.TB, cfg *config.Config) *liveRun {
	t.Helper()
	require.NoError(t, cfg.Validate())
	run := &liveRun{traces: new(consumertest.TracesSink), metrics: new(consumertest.MetricsSink)}
	r, err := New(&loadgen.Run{Config: cfg, Settings: receivertest.NewNopSettings(metadata.Type), Traces: run.traces, Metrics: run.metrics})
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	run.r = r
	return run
}

func (r *liveRun) stop(t testing.TB) {
	require.NoError(t, r.r.Shutdown(context.Background()))
}

// spans waits (bounded) until n client spans arrived and returns them.
func (r *liveRun) spans(t *testing.T, n int) []ptrace.Span {
	t.Helper()
	require.Eventually(t, func() bool { return r.traces.SpanCount() >= n }, 30*time.Second, 20*time.Millisecond,
		"want %d spans", n)
	var out []ptrace.Span
	for _, td := range r.traces.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					out = append(out, ss.At(j).Spans().At(k))
				}
			}
		}
	}
	return out
}

// runDone returns the live run's runner once its results are all out (the
// schedule, a sweep included, is over), failing after within.
func (r *liveRun) runDone(t testing.TB, within time.Duration) *Runner {
	t.Helper()
	select {
	case <-r.r.outDone:
	case <-time.After(within):
		t.Fatalf("the live run did not end within %v", within)
	}
	return r.r
}

func attrStr(sp ptrace.Span, k string) string {
	v, ok := sp.Attributes().Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

func attrF(sp ptrace.Span, k string) float64 {
	v, ok := sp.Attributes().Get(k)
	if !ok {
		return math.NaN()
	}
	return v.Double()
}

// The measured TTFT and ITL of every request match the ground truth the mock
// recorded, within a stated tolerance: the client measures from the
// scheduled send time and the server from the moment its handler began, so
// the client's TTFT is later by the connection, request write and loopback
// transfer (plus scheduling noise on a busy machine); gaps are measured
// between the same two chunks on both sides.
//
// It runs on both transports: on the raw one every event is timed by its
// kernel receive time and the span carries the client's own delay.
func TestLiveTimingsMatchGroundTruth(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) { testTimingsMatchGroundTruth(t, tr) })
	}
}

// transports are the live.transport values a request can go out on.
var transports = []string{config.TransportRaw, config.TransportNetHTTP}

func testTimingsMatchGroundTruth(t *testing.T, transport string) {
	// Client TTFT − server TTFT must lie in [−1 ms, ttftTolMax]; each
	// |client gap − server gap| must be within itlTolerance. The race
	// detector slows both sides several-fold, so it gets wider bounds; the
	// benchmark reports the errors of an uninstrumented build.
	n, ttftTolMax, itlTolerance := 30, 50*time.Millisecond, 20*time.Millisecond
	if raceEnabled {
		n, ttftTolMax, itlTolerance = 15, 400*time.Millisecond, 150*time.Millisecond
	}
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), int64(n), 50)
	cfg.Live.ChunkEvents = config.ChunkEventsAll
	cfg.Live.Tracestate = "llmloadgen=test"
	cfg.Live.Transport = transport
	run := startLive(t, cfg)
	spans := run.spans(t, n)
	run.stop(t)
	require.Len(t, spans, n)

	var ttftErrs, itlErrs []float64
	reused := 0
	for _, sp := range spans {
		if sp.Attributes().AsRaw()[attrLiveReused] == true {
			reused++
		}
		require.Equal(t, ptrace.StatusCodeUnset, sp.Status().Code(), attrStr(sp, genai.AttrErrorType)+" "+attrStr(sp, attrLiveErrorDetail))
		assert.Equal(t, ptrace.SpanKindClient, sp.Kind())
		assert.Equal(t, "chat mock-llm", sp.Name())
		id := attrStr(sp, attrLiveRequestID)
		require.NotEmpty(t, id)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rec, ok := mock.Record(ctx, id)
		cancel()
		require.True(t, ok, id)

		// The traceparent the server received names this span.
		want := fmt.Sprintf("00-%s-%s-01", sp.TraceID(), sp.SpanID())
		assert.Equal(t, want, rec.Traceparent)
		assert.Equal(t, "llmloadgen=test", rec.Tracestate)

		if testing.Verbose() {
			t.Logf("%s %v server-ttft=%v headers-server=%v", id, sp.Attributes().AsRaw(), rec.TTFT(), rec.HeadersAt.Sub(rec.Received))
		}
		clientTTFT := time.Duration(attrF(sp, genai.AttrTimeToFirstChunk) * float64(time.Second))
		diff := clientTTFT - rec.TTFT()
		ttftErrs = append(ttftErrs, diff.Seconds())
		assert.GreaterOrEqual(t, diff, -time.Millisecond, "request %s: client TTFT %v < server TTFT %v", id, clientTTFT, rec.TTFT())
		assert.LessOrEqual(t, diff, ttftTolMax, "request %s: client TTFT %v, server TTFT %v", id, clientTTFT, rec.TTFT())

		// One chunk event per content chunk; their gaps match the server's.
		var chunkTimes []pcommon.Timestamp
		for i := 0; i < sp.Events().Len(); i++ {
			if e := sp.Events().At(i); e.Name() == genai.EventLoadgenLiveChunk {
				chunkTimes = append(chunkTimes, e.Timestamp())
			}
		}
		serverGaps := rec.ITLs()
		require.Len(t, chunkTimes, rec.SentChunks-2-1, "content chunks") // minus role, finish and usage chunks
		require.Len(t, serverGaps, len(chunkTimes)-1)
		for i, g := range serverGaps {
			cg := time.Duration(chunkTimes[i+1] - chunkTimes[i])
			itlErrs = append(itlErrs, math.Abs((cg - g).Seconds()))
			assert.InDelta(t, g.Seconds(), cg.Seconds(), itlTolerance.Seconds(), "request %s gap %d", id, i)
		}
		assert.EqualValues(t, 16, sp.Attributes().AsRaw()[genai.AttrUsageOutputTokens])
		assert.Equal(t, true, sp.Attributes().AsRaw()[attrLiveDone])
		checkClock(t, sp, transport, ttftTolMax)
	}
	// Finished streams return their connection to the pool: with ~9
	// requests in flight, most of the later ones reuse one.
	assert.GreaterOrEqual(t, reused, n/3, "connections reused")
	sort.Float64s(ttftErrs)
	sort.Float64s(itlErrs)
	t.Logf("TTFT error (client − server): p50 %.2f ms, max %.2f ms; |ITL error|: p50 %.3f ms, max %.3f ms over %d gaps",
		1e3*ttftErrs[len(ttftErrs)/2], 1e3*ttftErrs[len(ttftErrs)-1], 1e3*itlErrs[len(itlErrs)/2], 1e3*itlErrs[len(itlErrs)-1], len(itlErrs))

	// The GenAI metrics describe the same requests.
	require.NotEmpty(t, run.metrics.AllMetrics())
	md := run.metrics.AllMetrics()[len(run.metrics.AllMetrics())-1]
	got := metricCounts(md)
	assert.EqualValues(t, n, got["gen_ai.client.operation.duration"])
	assert.EqualValues(t, n, got["gen_ai.client.operation.time_to_first_chunk"])
	assert.EqualValues(t, n*15, got["gen_ai.client.operation.time_per_output_chunk"])
	assert.EqualValues(t, 2*n, got["gen_ai.client.token.usage"])
	assert.EqualValues(t, n, got["llm_loadgen.client.requests"])
}

// checkClock checks which clock timed a span's events: the kernel's on the
// raw transport, with the client's delay after it (never negative, and
// within tol on this lightly loaded run), the parser's on net/http.
func checkClock(t *testing.T, sp ptrace.Span, transport string, tol time.Duration) {
	t.Helper()
	if transport == config.TransportNetHTTP {
		assert.Equal(t, genai.TimestampsUser, attrStr(sp, genai.AttrLoadgenTimestamps))
		_, ok := sp.Attributes().Get(genai.AttrLoadgenClientDelayMean)
		assert.False(t, ok, "no client delay without kernel times")
		return
	}
	require.Equal(t, genai.TimestampsKernel, attrStr(sp, genai.AttrLoadgenTimestamps))
	mean, most, first := attrF(sp, genai.AttrLoadgenClientDelayMean), attrF(sp, genai.AttrLoadgenClientDelayMax), attrF(sp, genai.AttrLoadgenClientDelayFirst)
	for _, v := range []float64{mean, most, first} {
		assert.False(t, math.IsNaN(v), "client delay attributes present")
		assert.GreaterOrEqual(t, v, 0.0)
	}
	assert.LessOrEqual(t, mean, most)
	assert.LessOrEqual(t, first, most)
	assert.Less(t, most, tol.Seconds())
}

// metricCounts sums histogram counts and sum values per metric name.
func metricCounts(md pmetric.Metrics) map[string]int64 {
	out := map[string]int64{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				switch m.Type() {
				case pmetric.MetricTypeHistogram:
					for p := 0; p < m.Histogram().DataPoints().Len(); p++ {
						out[m.Name()] += int64(m.Histogram().DataPoints().At(p).Count())
					}
				case pmetric.MetricTypeSum:
					for p := 0; p < m.Sum().DataPoints().Len(); p++ {
						out[m.Name()] += m.Sum().DataPoints().At(p).IntValue()
					}
				}
			}
		}
	}
	return out
}

// Every fault shape of the mock is classified as its own error.type.
func TestLiveFaultClassification(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) { c.StallDuration, c.SlowHeaders = 3*time.Second, 2*time.Second })
	for _, tc := range []struct {
		fault, want string
		mutate      func(*config.Config)
	}{
		{fault: mockllm.FaultRateLimit, want: "429"},
		{fault: mockllm.FaultOverloaded, want: "503"},
		{fault: mockllm.FaultContextLength, want: "400"},
		{fault: mockllm.FaultErrorEvent, want: errTypeStreamError},
		{fault: mockllm.FaultStall, want: errTypeIdleTimeout, mutate: func(c *config.Config) { c.Live.Timeouts.Idle = 300 * time.Millisecond }},
		{fault: mockllm.FaultDrop, want: errTypeReset},
		{fault: mockllm.FaultMalformed, want: errTypeMalformed},
		{fault: mockllm.FaultSlowHeaders, want: errTypeTTFTTimeout, mutate: func(c *config.Config) { c.Live.Timeouts.TTFT = 300 * time.Millisecond }},
		{fault: mockllm.FaultMissingDone, want: errTypeIncomplete},
		{fault: mockllm.FaultCutEvent, want: errTypeIncomplete},
		{fault: mockllm.FaultStall, want: errTypeDeadline, mutate: func(c *config.Config) {
			c.Live.Timeouts.Total = 500 * time.Millisecond
		}},
	} {
		for _, tr := range transports {
			t.Run(tr+"/"+tc.fault+"/"+tc.want, func(t *testing.T) {
				cfg := liveConfig(mock.URL(), 2, 20)
				cfg.Live.Transport = tr
				cfg.Live.Client.Headers = configopaque.MapList{}
				cfg.Live.Client.Headers.Set(mockllm.HeaderFault, configopaque.String(tc.fault))
				cfg.Live.Client.Headers.Set(mockllm.HeaderFaultAfter, "3")
				if tc.mutate != nil {
					tc.mutate(cfg)
				}
				run := startLive(t, cfg)
				spans := run.spans(t, 2)
				run.stop(t)
				for _, sp := range spans {
					assert.Equal(t, tc.want, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
					assert.Equal(t, ptrace.StatusCodeError, sp.Status().Code())
				}
			})
		}
	}
}

// refusedAddr returns a loopback address nothing listens on: a port below
// the kernel's ephemeral range, where neither an outgoing connection nor a
// listener on port 0 (every other test's servers) lands, checked free by
// binding it and closing. A port that listening on 127.0.0.1:0 returned
// would be in that range, free for any other test to bind meanwhile.
func refusedAddr(t *testing.T) string {
	t.Helper()
	const floor = 20000
	low := 32768 // Linux's default start of the ephemeral range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > floor+1000 {
				low = v
			}
		}
	}
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	for i := 0; i < 100; i++ {
		addr := fmt.Sprintf("127.0.0.1:%d", floor+r.IntN(low-floor))
		if ln, err := net.Listen("tcp", addr); err == nil {
			require.NoError(t, ln.Close())
			return addr
		}
	}
	t.Fatalf("no free loopback port in %d-%d after 100 tries", floor, low-1)
	return ""
}

func TestLiveConnectionRefused(t *testing.T) {
	addr := refusedAddr(t)
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			cfg := liveConfig("http://"+addr, 1, 10)
			cfg.Live.Transport = tr
			run := startLive(t, cfg)
			spans := run.spans(t, 1)
			run.stop(t)
			assert.Equal(t, errTypeConnect, attrStr(spans[0], genai.AttrErrorType), attrStr(spans[0], attrLiveErrorDetail))
		})
	}
}

// Shutdown in the middle of a run cancels the requests in flight after the
// drain timeout, counts them as cancelled, and leaves no goroutine behind
// (TestMain runs goleak).
func TestLiveShutdownMidRun(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) { c.ITL, c.OutputTokens = 100*time.Millisecond, 200 })
	cfg := liveConfig(mock.URL(), 0, 20)
	cfg.Live.DrainTimeout = 100 * time.Millisecond
	run := startLive(t, cfg)
	require.Eventually(t, func() bool { return mock.Stats().ActiveStreams >= 3 }, 10*time.Second, 10*time.Millisecond)
	run.stop(t)
	spans := run.spans(t, 3)
	cancelled := 0
	for _, sp := range spans {
		if attrStr(sp, genai.AttrErrorType) == errTypeCancelled {
			cancelled++
		}
	}
	assert.GreaterOrEqual(t, cancelled, 3)
}

// A concurrency cap turns waiting into measured queue time: with one slot
// and requests due every 20 ms that each take ~100 ms, later requests wait,
// and their TTFT (from the scheduled time) includes the wait.
func TestLiveQueueTimeCountsInLatency(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) {
		c.TTFT, c.ITL, c.OutputTokens, c.Jitter = 50*time.Millisecond, 5*time.Millisecond, 10, 0
	})
	cfg := liveConfig(mock.URL(), 5, 50)
	cfg.Live.MaxConcurrency = 1
	run := startLive(t, cfg)
	spans := run.spans(t, 5)
	run.stop(t)
	sort.Slice(spans, func(i, j int) bool { return spans[i].StartTimestamp() < spans[j].StartTimestamp() })
	last := spans[4]
	q := attrF(last, attrLiveQueueTime)
	assert.Greater(t, q, 0.2, "the fifth request waited for four before it")
	assert.Greater(t, attrF(last, genai.AttrTimeToFirstChunk), q+0.04)
}

func TestLiveClosedLoop(t *testing.T) {
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), 12, 0)
	cfg.Arrival = config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: 3}
	run := startLive(t, cfg)
	spans := run.spans(t, 12)
	run.stop(t)
	assert.Len(t, spans, 12)
	assert.LessOrEqual(t, mock.Stats().MaxStreams, int64(3))
	for _, sp := range spans {
		assert.EqualValues(t, 3, sp.Attributes().AsRaw()[genai.AttrLoadgenConcurrencyCap], "the virtual users are the bound")
	}
}

func TestLiveNonStreaming(t *testing.T) {
	mock := startMock(t, nil)
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			cfg := liveConfig(mock.URL(), 2, 20)
			cfg.Live.Stream, cfg.Live.IncludeUsage = false, false
			cfg.Live.Operation = config.LiveOpText
			cfg.Live.Transport = tr
			run := startLive(t, cfg)
			spans := run.spans(t, 2)
			run.stop(t)
			for _, sp := range spans {
				assert.Equal(t, "text_completion mock-llm", sp.Name())
				assert.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
				assert.EqualValues(t, 16, sp.Attributes().AsRaw()[genai.AttrUsageOutputTokens])
			}
		})
	}
}

func TestLiveSweepFindsKnee(t *testing.T) {
	// Each request takes ~140 ms; with one slot the endpoint completes at
	// most ~7 requests/s, so the sweep saturates above that.
	mock := startMock(t, func(c *mockllm.Config) {
		c.TTFT, c.ITL, c.OutputTokens, c.Jitter = 60*time.Millisecond, 5*time.Millisecond, 16, 0
	})
	cfg := liveConfig(mock.URL(), 0, 1)
	cfg.Live.MaxConcurrency = 1
	cfg.Live.Sweep = config.LiveSweepConfig{StepDuration: time.Second, StartRate: 2, StepRate: 8, MaxRate: 26, TTFT: time.Second,
		MinGoodRatio: 0.9, SaturationRatio: 0.9}
	run := startLive(t, cfg)
	lr := run.runDone(t, 30*time.Second)
	run.stop(t)
	// Step 2/s passes; 10/s exceeds what one slot completes.
	assert.InDelta(t, 2.0, lr.sweepKnee, 1e-9)
	assert.Equal(t, "saturated", lr.sweepStoppedBy)
}

// TestLiveSweepRange: a range search runs one user, then the throughput
// users, then open-loop rates evenly between the two completed rates it
// measured; each step's spans say how it was loaded.
func TestLiveSweepRange(t *testing.T) {
	// Each request takes ~140 ms: one user completes ~7 requests/s, four
	// about four times that.
	mock := startMock(t, func(c *mockllm.Config) {
		c.TTFT, c.ITL, c.OutputTokens, c.Jitter = 60*time.Millisecond, 5*time.Millisecond, 16, 0
	})
	cfg := liveConfig(mock.URL(), 0, 1)
	cfg.Live.MaxConcurrency = 16
	cfg.Live.Sweep = config.LiveSweepConfig{StepDuration: time.Second, Search: config.SweepRange, Rates: 2, ThroughputUsers: 4,
		TTFT: 5 * time.Second, MinGoodRatio: 0.9, SaturationRatio: 0.5}
	run := startLive(t, cfg)
	lr := run.runDone(t, 60*time.Second)
	spans := run.spans(t, 1)
	run.stop(t)
	byCap := map[int64]int{}
	var rates []float64
	for _, sp := range spans {
		a := sp.Attributes().AsRaw()
		if r, ok := a[genai.AttrLoadgenTargetRate].(float64); ok {
			if len(rates) == 0 || rates[len(rates)-1] != r {
				rates = append(rates, r)
			}
			continue
		}
		byCap[a[genai.AttrLoadgenConcurrencyCap].(int64)]++
	}
	assert.Positive(t, byCap[1], "the synchronous step")
	assert.Greater(t, byCap[4], byCap[1], "four users complete more than one")
	sort.Float64s(rates)
	rates = slices.Compact(rates)
	require.Len(t, rates, 2, "two rates between the synchronous and the throughput rate: %v", rates)
	assert.Less(t, rates[0], rates[1])
	sync := float64(byCap[1]) // ~1 s step: its completed requests per second, roughly
	assert.Greater(t, rates[0], sync*0.5)
	assert.Less(t, rates[1], float64(byCap[4])*1.5)
	assert.Equal(t, "range_done", lr.sweepStoppedBy)
	assert.InDelta(t, rates[1], lr.sweepKnee, 1e-9, "both rates pass: the knee is the larger")
}

// TestLiveReasoningModel: a reasoning model's thinking (Ollama's
// delta.reasoning) is generated output: TTFT is its first token and it
// counts in the output tokens; the time to the first answer token is
// reported as well.
func TestLiveReasoningModel(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) {
		c.ReasoningTokens, c.ReasoningField, c.Jitter, c.TTFT, c.ITL = 4, "reasoning", 0, 30*time.Millisecond, 10*time.Millisecond
	})
	run := startLive(t, liveConfig(mock.URL(), 2, 20))
	spans := run.spans(t, 2)
	run.stop(t)
	for _, sp := range spans {
		a := sp.Attributes().AsRaw()
		require.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
		assert.EqualValues(t, 16, a[genai.AttrUsageOutputTokens], "thinking tokens are output tokens")
		assert.EqualValues(t, 4, a[attrLiveReasoning])
		ttft, ttfa := a[attrLiveTTFT].(float64), a[attrLiveTTFA].(float64)
		// Lower bounds only: a busy machine delays the client, never the
		// server's schedule.
		assert.GreaterOrEqual(t, ttft, 0.030*0.9, "TTFT is at least the server's time to first token")
		assert.GreaterOrEqual(t, ttfa-ttft, 4*0.010*0.9, "TTFT is the first thinking token: the answer starts four gaps later")
	}
}

// TestLiveITLPerToken: a server that sends 1, 2 or 4 tokens per chunk with
// the usage on every chunk. The chunk gaps are k times the per-token gap;
// each chunk event says its tokens, and the per-token mean is the mock's
// inter-token latency whatever k is.
func TestLiveITLPerToken(t *testing.T) {
	for _, k := range []int{1, 2, 4} {
		mock := startMock(t, func(c *mockllm.Config) {
			c.TokensPerChunk, c.OutputTokens, c.Jitter, c.ITL = k, 16, 0, 10*time.Millisecond
		})
		cfg := liveConfig(mock.URL(), 2, 20)
		cfg.Live.ContinuousUsage, cfg.Live.ChunkEvents = true, config.ChunkEventsAll
		run := startLive(t, cfg)
		spans := run.spans(t, 2)
		run.stop(t)
		for _, sp := range spans {
			require.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
			assert.EqualValues(t, 16, sp.Attributes().AsRaw()[genai.AttrUsageOutputTokens])
			perToken := attrF(sp, genai.AttrLoadgenITLPerToken)
			chunkGap := attrF(sp, attrLiveITLMean)
			assert.InDelta(t, 0.010, perToken, 0.004, "k=%d: per token", k)
			assert.InDelta(t, float64(k)*0.010, chunkGap, 0.004*float64(k), "k=%d: per chunk", k)
			tokens := int64(0)
			evs := sp.Events()
			for i := 0; i < evs.Len(); i++ {
				if evs.At(i).Name() == genai.EventLoadgenLiveChunk {
					v, ok := evs.At(i).Attributes().Get(genai.AttrLoadgenChunkTokens)
					require.True(t, ok, "k=%d: every chunk event says its tokens", k)
					tokens += v.Int()
				}
			}
			assert.EqualValues(t, 16, tokens, "k=%d", k)
		}
	}
}

// TestLiveSweepBisects: one slot that completes at most ~7 requests/s;
// bisecting 2 to 26 req/s to within 2 brackets the largest rate it keeps up
// with.
func TestLiveSweepBisects(t *testing.T) {
	mock := startMock(t, func(c *mockllm.Config) {
		c.TTFT, c.ITL, c.OutputTokens, c.Jitter = 60*time.Millisecond, 5*time.Millisecond, 16, 0
	})
	cfg := liveConfig(mock.URL(), 0, 1)
	cfg.Live.MaxConcurrency = 1
	cfg.Live.Sweep = config.LiveSweepConfig{StepDuration: time.Second, StartRate: 2, StepRate: 1, MaxRate: 26, TTFT: time.Second,
		MinGoodRatio: 0.9, SaturationRatio: 0.9, Search: config.SweepBisect, Tolerance: 2}
	run := startLive(t, cfg)
	lr := run.runDone(t, 60*time.Second)
	run.stop(t)
	assert.GreaterOrEqual(t, lr.sweepKnee, 2.0)
	assert.Less(t, lr.sweepKnee, 10.0, "one slot cannot keep up with 10 req/s")
	assert.Greater(t, lr.sweepUpper, lr.sweepKnee)
	assert.LessOrEqual(t, lr.sweepUpper-lr.sweepKnee, 2.0, "bracketed to within the tolerance")
}
