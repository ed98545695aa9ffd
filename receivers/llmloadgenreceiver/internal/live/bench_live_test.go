package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// The live-mode benchmarks run mockllm as its own process, so the CPU time
// of this process is the load generator's alone.

var (
	mockBinOnce sync.Once
	mockBin     string
	mockBinErr  error
)

func buildMock(b *testing.B) string {
	mockBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mockllm-bench")
		if err != nil {
			mockBinErr = err
			return
		}
		mockBin = filepath.Join(dir, "mockllm")
		out, err := exec.Command("go", "build", "-o", mockBin, "github.com/otelcol-llm/otelcol-llm/cmd/mockllm").CombinedOutput()
		if err != nil {
			mockBinErr = fmt.Errorf("go build cmd/mockllm: %v\n%s", err, out)
		}
	})
	if mockBinErr != nil {
		b.Fatal(mockBinErr)
	}
	return mockBin
}

// startMockProcess runs cmd/mockllm on a free loopback port and returns its URL.
func startMockProcess(b *testing.B, args ...string) string {
	return startMockOn(b, -1, args...)
}

// startMockOn is startMockProcess with the mock pinned to one CPU (taskset),
// or on any when cpu < 0.
func startMockOn(b *testing.B, cpu int, args ...string) string {
	argv := append([]string{buildMock(b), "-addr", "127.0.0.1:0", "-history", "500000", "-seed", "3"}, args...)
	if cpu >= 0 {
		argv = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				urlc <- strings.Fields(rest)[0]
			}
		}
	}()
	select {
	case u := <-urlc:
		return u
	case <-time.After(30 * time.Second):
		b.Fatal("mockllm did not start")
	}
	return ""
}

type mockTruth struct {
	TTFT     float64   `json:"ttft_s"`
	WireTTFT float64   `json:"wire_ttft_s"` // from the kernel's receipt of the request
	ITL      []float64 `json:"itl_s"`
	Received time.Time // the mock had read the request's body
	Arrived  time.Time // the kernel received its last byte (zero: unknown)
}

// arrival is when the request reached the mock: the kernel's receipt of its
// last byte where known, else when the mock had read it.
func (t mockTruth) arrival() time.Time {
	if t.Arrived.IsZero() {
		return t.Received
	}
	return t.Arrived
}

// ttft is the truth a client's TTFT is compared with: the wire TTFT, from
// the kernel's receipt of the request to the first content chunk's write,
// which leaves out the mock's own delay in reading the request (its
// runtime's scheduling, a collection) that a client sees and must count.
func (t mockTruth) ttft() float64 {
	if t.WireTTFT > 0 {
		return t.WireTTFT
	}
	return t.TTFT
}

func fetchTruth(url, id string) (mockTruth, error) {
	var t mockTruth
	resp, err := http.Get(url + "/mock/requests/" + id + "?wait=5s")
	if err != nil {
		return t, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return t, fmt.Errorf("ground truth of %s: HTTP %d", id, resp.StatusCode)
	}
	return t, json.NewDecoder(resp.Body).Decode(&t)
}

func mockCompleted(b *testing.B, url string) int64 {
	resp, err := http.Get(url + "/mock/stats")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Completed  int64 `json:"completed_streams"`
		MaxStreams int64 `json:"max_concurrent_streams"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		b.Fatal(err)
	}
	return st.Completed
}

func cpuSelf() time.Duration {
	c := costSelf()
	return c.user + c.sys
}

// procCost is the CPU time and the number of read system calls of this
// process so far.
type procCost struct {
	user, sys time.Duration
	reads     int64
}

func costSelf() procCost {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	c := procCost{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
	if io, err := os.ReadFile("/proc/self/io"); err == nil {
		for _, line := range strings.Split(string(io), "\n") {
			if v, ok := strings.CutPrefix(line, "syscr: "); ok {
				c.reads, _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return c
}

func (c procCost) sub(o procCost) procCost {
	return procCost{user: c.user - o.user, sys: c.sys - o.sys, reads: c.reads - o.reads}
}

// measured is one request as a load generator reported it.
type measured struct {
	id     string
	ttft   float64   // seconds
	chunks []float64 // content chunk times, seconds since the first
	// sent is when the request was written, seconds after its scheduled
	// time; reused tells whether it went out on a kept-alive connection.
	sent   float64
	reused bool
	// delay is the client's delay at the first token, known with kernel
	// receive timestamps.
	delay      float64
	delayKnown bool
}

// runLoadgenClosed runs the live receiver with users virtual users for d
// and returns what it measured.
func runLoadgenClosed(b *testing.B, url string, users int, d time.Duration, chunkEvents, transport string) []measured {
	return runLoadgen(b, closedConfig(url, users, d, chunkEvents, transport), d)
}

// runLoadgen runs the live receiver on cfg, which ends after d, and returns
// what it measured of the requests that succeeded.
func runLoadgen(b *testing.B, cfg *config.Config, d time.Duration) []measured {
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	set := receivertest.NewNopSettings(metadata.Type)
	lr, err := New(&loadgen.Run{Config: cfg, Settings: set, Traces: sink})
	if err != nil {
		b.Fatal(err)
	}
	if err := lr.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	select {
	case <-lr.outDone:
	case <-time.After(d + 2*time.Minute):
		b.Fatal("live run did not end")
	}
	if err := lr.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	var out []measured
	for _, td := range sink.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				for k := 0; k < sss.At(j).Spans().Len(); k++ {
					sp := sss.At(j).Spans().At(k)
					if _, failed := sp.Attributes().Get(genai.AttrErrorType); failed {
						continue
					}
					out = append(out, spanMeasured(sp))
				}
			}
		}
	}
	return out
}

// closedConfig is a closed-loop live run of users virtual users for d on
// the given transport.
func closedConfig(url string, users int, d time.Duration, chunkEvents, transport string) *config.Config {
	cfg := config.Default()
	cfg.Mode = config.ModeLive
	cfg.Duration = d
	cfg.Arrival = config.ArrivalConfig{Type: config.ArrivalConcurrency, Concurrency: users}
	cfg.Metrics.Interval = time.Hour
	cfg.BatchSize = 1000
	cfg.Live.Client.Endpoint = url + "/v1"
	cfg.Live.MaxConcurrency = users
	cfg.Live.ChunkEvents = chunkEvents
	cfg.Live.Prompt.InputTokens = config.Distribution{Type: config.DistConstant, Value: 30}
	cfg.Live.Transport = transport
	return cfg
}

func spanMeasured(sp ptrace.Span) measured {
	m := measured{}
	if v, ok := sp.Attributes().Get(attrLiveRequestID); ok {
		m.id = v.Str()
	}
	if v, ok := sp.Attributes().Get(genai.AttrTimeToFirstChunk); ok {
		m.ttft = v.Double()
	}
	for i := 0; i < sp.Events().Len(); i++ {
		if e := sp.Events().At(i); e.Name() == "llm_loadgen.request_sent" {
			m.sent = float64(e.Timestamp()-sp.StartTimestamp()) / 1e9
		}
	}
	if v, ok := sp.Attributes().Get(genai.AttrLoadgenClientDelayFirst); ok {
		m.delay, m.delayKnown = v.Double(), true
	}
	if v, ok := sp.Attributes().Get(attrLiveReused); ok {
		m.reused = v.Bool()
	}
	var first int64
	for i := 0; i < sp.Events().Len(); i++ {
		e := sp.Events().At(i)
		if e.Name() != genai.EventLoadgenLiveChunk {
			continue
		}
		if first == 0 {
			first = int64(e.Timestamp())
		}
		m.chunks = append(m.chunks, float64(int64(e.Timestamp())-first)/1e9)
	}
	return m
}

// errorStats compares up to limit measurements with the mock's ground
// truth: TTFT error (client − the mock's wire TTFT) and per-gap ITL error.
type errorStats struct {
	ttft, itl, delay []float64
	// ttftSent is the TTFT error (absolute) counted from when the request was written,
	// which leaves out the generator's delay in sending it; ttftReused is
	// that error for requests on kept-alive connections only (no connection
	// setup, and none of the opening burst of new connections, on either
	// side).
	ttftSent, ttftReused []float64
	// firstShared counts requests whose first content event carries the
	// second's kernel time (read after the second had arrived).
	firstShared int
}

func compareTruth(b *testing.B, url string, ms []measured, limit int) errorStats {
	var st errorStats
	step := max(1, len(ms)/limit)
	for i := 0; i < len(ms); i += step {
		m := ms[i]
		if m.id == "" {
			continue
		}
		t, err := fetchTruth(url, m.id)
		if err != nil {
			b.Fatal(err)
		}
		st.ttft = append(st.ttft, m.ttft-t.ttft())
		st.ttftSent = append(st.ttftSent, math.Abs(m.ttft-m.sent-t.ttft()))
		if m.reused {
			st.ttftReused = append(st.ttftReused, math.Abs(m.ttft-m.sent-t.ttft()))
		}
		if len(m.chunks) > 1 && m.chunks[1] == 0 {
			st.firstShared++
		}
		if m.delayKnown {
			st.delay = append(st.delay, m.delay)
		}
		if len(m.chunks) == len(t.ITL)+1 {
			for g := range t.ITL {
				st.itl = append(st.itl, math.Abs((m.chunks[g+1]-m.chunks[g])-t.ITL[g]))
			}
		}
	}
	sort.Float64s(st.ttft)
	sort.Float64s(st.itl)
	sort.Float64s(st.delay)
	sort.Float64s(st.ttftSent)
	sort.Float64s(st.ttftReused)
	return st
}

func pct(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// BenchmarkLiveVsLocust runs Locust (Debian's python3-locust, the locustfile
// in testdata/locust, which streams and times each SSE event) and the live
// receiver one after the other against the same mockllm process (its own
// process, so neither generator is charged for it), for the same duration
// and with no think time: Locust with 64 users (its highest throughput on
// the 2-core machine: more users lower it), llm_loadgen with the same 64
// users and with 256 (its highest throughput against the mock, which
// becomes the bottleneck), and, on Linux, the floor client (the least a
// client can do to time every event) with 64 and 256 users. Requests are
// counted by the mock (completed streams), CPU time is the generator's own
// (Locust: its process less the interpreter's start-up; llm_loadgen and the
// floor: this process), and TTFT error is client TTFT − the mock's ground
// truth per request.
func BenchmarkLiveVsLocust(b *testing.B) {
	locust, err := exec.LookPath("locust")
	if err != nil {
		b.Skip("locust is not installed (apt-get install python3-locust); the anchor cannot run")
	}
	const users, maxUsers = 64, 256
	run := 10 * time.Second
	for i := 0; i < b.N; i++ {
		url := startMockProcess(b, vsLocustMock...)

		b.Logf("mockllm at %s; running Locust", url)
		// Locust.
		results := filepath.Join(b.TempDir(), "locust.csv")
		before := mockCompleted(b, url)
		cmd := exec.Command(locust, "-f", filepath.Join("testdata", "locust", "locustfile.py"), "--headless",
			"-u", strconv.Itoa(users), "-r", strconv.Itoa(users), "-t", fmt.Sprintf("%ds", int(run.Seconds())),
			"--stop-timeout", "5", "--host", url, "--only-summary", "--loglevel", "WARNING")
		cmd.Env = append(os.Environ(), "LOCUST_RESULTS="+results)
		if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 1 {
			// Locust exits 1 when any request failed; that is reported below.
			b.Fatalf("locust: %v\n%s", err, out)
		}
		locustCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		locustSys := cmd.ProcessState.SystemTime()
		locustDone := mockCompleted(b, url) - before
		startup := exec.Command("/usr/bin/python3", "-c", "import locust.main")
		_ = startup.Run()
		locustCPU -= startup.ProcessState.UserTime() + startup.ProcessState.SystemTime()
		locustSys -= startup.ProcessState.SystemTime()
		locustMs := readLocustResults(b, results)
		le := compareTruth(b, url, locustMs, 500)
		lPerCPU := float64(locustDone) / locustCPU.Seconds()
		b.ReportMetric(float64(locustDone)/run.Seconds(), "locust_req/s")
		b.ReportMetric(1e3*locustCPU.Seconds()/float64(locustDone), "locust_cpu_ms/req")
		b.ReportMetric(1e3*locustSys.Seconds()/float64(locustDone), "locust_sys_ms/req")
		b.ReportMetric(locustCPU.Seconds()/run.Seconds(), "locust_cores")
		b.ReportMetric(1e3*pct(le.ttft, 0.5), "locust_ttft_err_p50_ms")
		b.ReportMetric(1e3*pct(le.ttft, 0.99), "locust_ttft_err_p99_ms")
		b.Logf("Locust: %d requests, %v CPU; running llm_loadgen", locustDone, locustCPU)

		// llm_loadgen, same users and duration on each transport, then at
		// its maximum.
		for _, g := range []struct {
			name, transport string
			users           int
		}{{"loadgen", config.TransportRaw, users}, {"loadgen_nethttp", config.TransportNetHTTP, users}, {fmt.Sprintf("loadgen%d", maxUsers), config.TransportRaw, maxUsers}} {
			name := g.name
			before = mockCompleted(b, url)
			c0 := costSelf()
			ours := runLoadgenClosed(b, url, g.users, run, config.ChunkEventsFirst, g.transport)
			oc := costSelf().sub(c0)
			oursCPU := oc.user + oc.sys
			oursDone := mockCompleted(b, url) - before
			oe := compareTruth(b, url, ours, 500)
			oPerCPU := float64(oursDone) / oursCPU.Seconds()
			b.ReportMetric(float64(oursDone)/run.Seconds(), name+"_req/s")
			b.ReportMetric(1e3*oursCPU.Seconds()/float64(oursDone), name+"_cpu_ms/req")
			b.ReportMetric(1e3*oc.sys.Seconds()/float64(oursDone), name+"_sys_ms/req")
			b.ReportMetric(oursCPU.Seconds()/run.Seconds(), name+"_cores")
			b.ReportMetric(float64(oc.reads)/float64(oursDone), name+"_reads/req")
			b.ReportMetric(oPerCPU/lPerCPU, name+"_req_per_cpu_s_ratio")
			b.ReportMetric(1e3*pct(oe.ttft, 0.5), name+"_ttft_err_p50_ms")
			b.ReportMetric(1e3*pct(oe.ttft, 0.99), name+"_ttft_err_p99_ms")
		}
		for _, u := range []int{users, maxUsers} {
			if floorClient == nil {
				break
			}
			name := "floor"
			if u != users {
				name = fmt.Sprintf("floor%d", u)
			}
			before = mockCompleted(b, url)
			c0 := costSelf()
			floorClient(b, url, u, run)
			fc := costSelf().sub(c0)
			done := mockCompleted(b, url) - before
			b.ReportMetric(float64(done)/run.Seconds(), name+"_req/s")
			b.ReportMetric(1e3*(fc.user+fc.sys).Seconds()/float64(done), name+"_cpu_ms/req")
			b.ReportMetric(1e3*fc.sys.Seconds()/float64(done), name+"_sys_ms/req")
			b.ReportMetric(float64(done)/(fc.user+fc.sys).Seconds()/lPerCPU, name+"_req_per_cpu_s_ratio")
		}
	}
}

// floorClient, where the platform has one (Linux), is the least a client
// can do to time every event as it arrives (bench_floor_linux_test.go):
// BenchmarkLiveVsLocust runs it beside Locust and llm_loadgen as the floor
// of CPU per request.
var floorClient func(b *testing.B, url string, users int, d time.Duration)

// vsLocustMock is the mock's latency model for the comparison with Locust:
// TTFT 20 ms ± 20 %, 32 tokens 2 ms apart, one token per chunk (36 events
// per request with the role, finish, usage and [DONE] events).
var vsLocustMock = []string{"-ttft", "20ms", "-itl", "2ms", "-output-tokens", "32", "-output-jitter", "0", "-jitter", "0.2"}

// BenchmarkLiveStreamCPU runs only the live receiver against a mockllm
// process with the latency model of BenchmarkLiveVsLocust, for 64, 256 and 1,024
// closed-loop users, and reports the generator's CPU time per request (user
// and system), its read system calls per request and its TTFT error.
func BenchmarkLiveStreamCPU(b *testing.B) {
	for _, tc := range benchTransportUsers([]int{64, 256, 1024}) {
		transport, users := tc.transport, tc.users
		b.Run(fmt.Sprintf("transport=%s/users=%d", transport, users), func(b *testing.B) {
			url := startMockProcess(b, vsLocustMock...)
			run := 5 * time.Second
			for i := 0; i < b.N; i++ {
				before := mockCompleted(b, url)
				c0 := costSelf()
				ms := runLoadgenClosed(b, url, users, run, config.ChunkEventsFirst, transport)
				c := costSelf().sub(c0)
				done := mockCompleted(b, url) - before
				if done == 0 || len(ms) == 0 {
					b.Fatal("no request completed")
				}
				b.ReportMetric(float64(done)/run.Seconds(), "req/s")
				b.ReportMetric(1e3*(c.user+c.sys).Seconds()/float64(done), "cpu_ms/req")
				b.ReportMetric(1e3*c.sys.Seconds()/float64(done), "sys_ms/req")
				b.ReportMetric(float64(c.reads)/float64(done), "reads/req")
				st := compareTruth(b, url, ms, 300)
				b.ReportMetric(1e3*pct(st.ttft, 0.5), "ttft_err_p50_ms")
				b.ReportMetric(1e3*pct(st.ttft, 0.99), "ttft_err_p99_ms")
			}
		})
	}
}

func readLocustResults(b *testing.B, path string) []measured {
	f, err := os.Open(path)
	if err != nil {
		b.Fatalf("locust wrote no results: %v", err)
	}
	defer f.Close()
	var out []measured
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ",")
		if len(parts) != 3 {
			continue
		}
		ttft, err := strconv.ParseFloat(parts[1], 64)
		if err != nil {
			continue
		}
		out = append(out, measured{id: parts[0], ttft: ttft})
	}
	return out
}

// benchTransport is one transport and user count of a benchmark.
type benchTransport struct {
	transport string
	users     int
}

// benchTransportUsers is every user count on each transport.
func benchTransportUsers(users []int) []benchTransport {
	var out []benchTransport
	for _, tr := range []string{config.TransportRaw, config.TransportNetHTTP} {
		for _, u := range users {
			out = append(out, benchTransport{tr, u})
		}
	}
	return out
}

// BenchmarkLiveErrorAt1000Streams holds about 1,000 streams open (1,000
// virtual users, 40 tokens 50 ms apart after a 200 ms TTFT) on each
// transport and reports how far the measured TTFT and every ITL gap are
// from the mock's ground truth, and, with kernel receive times, the
// client's own delay at the first token that the TTFT no longer includes.
func BenchmarkLiveErrorAt1000Streams(b *testing.B) {
	for _, tr := range []string{config.TransportRaw, config.TransportNetHTTP} {
		b.Run("transport="+tr, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				url := startMockProcess(b, "-ttft", "200ms", "-itl", "50ms", "-output-tokens", "40", "-output-jitter", "0", "-jitter", "0.2")
				c0 := costSelf()
				ms := runLoadgenClosed(b, url, 1000, 8*time.Second, config.ChunkEventsAll, tr)
				c := costSelf().sub(c0)
				reportErrors(b, compareTruth(b, url, ms, 1000), len(ms), c)
			}
		})
	}
}

// reportErrors reports n requests' CPU cost c and their errors against the
// ground truth: TTFT, ITL and, with kernel times, the client delay.
func reportErrors(b *testing.B, st errorStats, n int, c procCost) {
	b.ReportMetric(float64(n), "requests")
	b.ReportMetric(1e3*(c.user+c.sys).Seconds()/float64(n), "cpu_ms/req")
	b.ReportMetric(1e3*pct(st.ttft, 0.5), "ttft_err_p50_ms")
	b.ReportMetric(1e3*pct(st.ttft, 0.99), "ttft_err_p99_ms")
	b.ReportMetric(1e3*pct(st.itl, 0.5), "itl_err_p50_ms")
	b.ReportMetric(1e3*pct(st.itl, 0.99), "itl_err_p99_ms")
	b.ReportMetric(float64(st.firstShared), "first_stamp_shared")
	if len(st.delay) > 0 {
		b.ReportMetric(1e3*pct(st.delay, 0.5), "client_delay_p50_ms")
		b.ReportMetric(1e3*pct(st.delay, 0.99), "client_delay_p99_ms")
	}
}

// BenchmarkLiveMemoryPerStream holds 1,400 and then 10,000 streams open on
// each transport (closed loop, one virtual user per stream, against a
// mockllm process whose streams last 20 s: 40 tokens 500 ms apart) and
// reports this process's memory once every stream is open, less what it
// held before the run: the Go heap and stacks in use, and the resident set
// (pages an earlier sub-benchmark left resident count in its baseline, so
// run one sub-benchmark per process for the resident set of each). With
// LIVE_MEMPROFILE set it writes the heap profile at that moment there.
func BenchmarkLiveMemoryPerStream(b *testing.B) {
	for _, tc := range benchTransportUsers([]int{1400, 10000}) {
		b.Run(fmt.Sprintf("transport=%s/streams=%d", tc.transport, tc.users), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				url := startMockProcess(b, "-ttft", "100ms", "-itl", "500ms", "-output-tokens", "40", "-output-jitter", "0", "-jitter", "0")
				m0 := memSelf()
				cfg := closedConfig(url, tc.users, time.Minute, config.ChunkEventsFirst, tc.transport)
				cfg.Live.DrainTimeout = 100 * time.Millisecond
				lr, err := New(&loadgen.Run{Config: cfg, Settings: receivertest.NewNopSettings(metadata.Type), Traces: consumertest.NewNop()})
				if err != nil {
					b.Fatal(err)
				}
				if err := lr.Start(context.Background(), componenttest.NewNopHost()); err != nil {
					b.Fatal(err)
				}
				open := waitStreams(b, url, int64(tc.users)*98/100, 15*time.Second)
				m := memSelf()
				if path := os.Getenv("LIVE_MEMPROFILE"); path != "" {
					writeHeapProfile(b, path)
				}
				if err := lr.Shutdown(context.Background()); err != nil {
					b.Fatal(err)
				}
				per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(open) / 1024 }
				b.ReportMetric(float64(open), "streams_open")
				b.ReportMetric(per(m.heap, m0.heap), "heap_KB/stream")
				b.ReportMetric(per(m.stack, m0.stack), "stack_KB/stream")
				b.ReportMetric(per(m.rss, m0.rss), "rss_KB/stream")
				b.ReportMetric(float64(m.rss)/(1<<20), "rss_MB")
			}
		})
	}
}

// memUse is this process's memory: the Go heap and goroutine stacks in
// use, and the resident set, in bytes.
type memUse struct{ heap, stack, rss uint64 }

// memSelf returns this process's memory after a collection.
func memSelf() memUse {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memUse{heap: ms.HeapInuse, stack: ms.StackInuse}
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.rss = kb * 1024
			}
		}
	}
	return m
}

// writeHeapProfile writes the heap profile (in-use memory at this moment)
// to path.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// waitStreams waits until the mock holds at least n streams open, or within
// has passed, and returns how many it holds.
func waitStreams(b *testing.B, url string, n int64, within time.Duration) int64 {
	deadline := time.Now().Add(within)
	var active int64
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/mock/stats")
		if err != nil {
			b.Fatal(err)
		}
		var st struct {
			Active int64 `json:"active_streams"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		if active = st.Active; active >= n {
			return active
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatalf("%d of %d streams open after %v", active, n, within)
	return active
}
