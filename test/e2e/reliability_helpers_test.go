//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// summarySpanName is the name of the span span_guard adds to every trace it
// changed; it carries no span of the input and is counted apart.
const summarySpanName = "span_guard.summary"

// spanKey identifies a span across traces: trace id then span id.
type spanKey [24]byte

func keyOf(sp ptrace.Span) spanKey {
	var k spanKey
	tid, sid := sp.TraceID(), sp.SpanID()
	copy(k[:16], tid[:])
	copy(k[16:], sid[:])
	return k
}

// CountingSink is an OTLP/gRPC server that keeps only what the reliability
// tests reconcile: how often each span (by trace and span id) arrived, the
// summary spans span_guard added (whole copies), and how many data points
// and log records arrived. Unlike OTLPSink it can hold millions of spans,
// can be stopped and started again on the same address (a backend outage),
// and can delay every export (a slow backend).
type CountingSink struct {
	addr  string
	delay atomic.Int64 // nanoseconds each trace export waits

	mu        sync.Mutex
	seen      map[spanKey]int
	spans     int // every span that arrived, duplicates included
	summaries []ptrace.Span
	requests  int
	points    int
	records   int
	srv       *grpc.Server
	running   bool
}

// StartCountingSink serves on a free loopback address (addr "") or on addr,
// delaying each trace export by delay; it stops when the test ends. The
// address stays the sink's across Stop and Start, so a free one comes from
// freePort (outside the ephemeral range, where no outgoing connection takes
// it while the sink is down); should another process bind it first, the
// sink takes another.
func StartCountingSink(t *testing.T, addr string, delay time.Duration) *CountingSink {
	t.Helper()
	s := &CountingSink{addr: addr, seen: map[spanKey]int{}}
	s.delay.Store(int64(delay))
	var l net.Listener
	var err error
	if addr != "" {
		l, err = net.Listen("tcp", addr)
	} else {
		for try := 0; try < 3; try++ {
			s.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
			if l, err = net.Listen("tcp", s.addr); err == nil {
				break
			}
		}
	}
	require.NoError(t, err, "sink cannot listen on %s", s.addr)
	s.serve(l)
	t.Cleanup(s.Stop)
	return s
}

// SetDelay changes how long each later trace export waits.
func (s *CountingSink) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Addr is the sink's host:port.
func (s *CountingSink) Addr() string { return s.addr }

// Start listens again on the sink's address (after Stop); it retries for up
// to 10 s while the port is still held by the previous listener.
func (s *CountingSink) Start(t *testing.T) {
	t.Helper()
	var l net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		if l, err = net.Listen("tcp", s.addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err, "sink cannot listen on %s again", s.addr)
	s.serve(l)
}

// serve answers OTLP on l until Stop.
func (s *CountingSink) serve(l net.Listener) {
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxRecvMsgSize))
	ptraceotlp.RegisterGRPCServer(srv, &countingTraces{s: s})
	pmetricotlp.RegisterGRPCServer(srv, &countingMetrics{s: s})
	plogotlp.RegisterGRPCServer(srv, &countingLogs{s: s})
	s.mu.Lock()
	s.srv, s.running = srv, true
	s.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// Stop closes the listener and every connection at once, as a crashed
// backend would; requests in progress fail.
func (s *CountingSink) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv, s.running = nil, false
	s.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
}

type countingTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *CountingSink
}

func (h *countingTraces) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	if d := time.Duration(h.s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ptraceotlp.NewExportResponse(), status.Error(codes.DeadlineExceeded, "sink: client gave up during the delay")
		}
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if !h.s.running {
		return ptraceotlp.NewExportResponse(), status.Error(codes.Unavailable, "sink stopped")
	}
	h.s.requests++
	rss := req.Traces().ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				h.s.spans++
				if sp.Name() == summarySpanName {
					c := ptrace.NewSpan()
					sp.CopyTo(c)
					h.s.summaries = append(h.s.summaries, c)
					continue
				}
				h.s.seen[keyOf(sp)]++
			}
		}
	}
	return ptraceotlp.NewExportResponse(), nil
}

type countingMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *CountingSink
}

func (h *countingMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.points += req.Metrics().DataPointCount()
	return pmetricotlp.NewExportResponse(), nil
}

type countingLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *CountingSink
}

func (h *countingLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.records += req.Logs().LogRecordCount()
	return plogotlp.NewExportResponse(), nil
}

// sinkCounts is a snapshot of a CountingSink.
type sinkCounts struct {
	Unique     int // distinct span ids, summaries excluded
	Duplicates int // arrivals beyond the first, summaries excluded
	Spans      int // every span, summaries and duplicates included
	Summaries  int
	Requests   int
}

// Counts returns what arrived so far.
func (s *CountingSink) Counts() sinkCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := sinkCounts{Unique: len(s.seen), Spans: s.spans, Summaries: len(s.summaries), Requests: s.requests}
	for _, n := range s.seen {
		c.Duplicates += n - 1
	}
	return c
}

// Has reports how many times the span arrived.
func (s *CountingSink) Has(k spanKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[k]
}

// Summaries returns copies of the summary spans received so far.
func (s *CountingSink) Summaries() []ptrace.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ptrace.Span(nil), s.summaries...)
}

// Keys returns every distinct span key received (summaries excluded).
func (s *CountingSink) Keys() map[spanKey]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[spanKey]int, len(s.seen))
	for k, v := range s.seen {
		out[k] = v
	}
	return out
}

// rssBytes reads the resident set size of pid from /proc/<pid>/status.
func rssBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "VmRSS:") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			break
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// RSSSampler samples a process's resident set size every interval until
// stopped; the samples keep their order and the time they were taken.
type RSSSampler struct {
	mu      sync.Mutex
	samples []int64
	times   []time.Time
	stop    chan struct{}
	done    chan struct{}
}

// SampleRSS starts sampling the collector's RSS every interval, for at most
// limit (a bound on the loop); it stops when the test ends at the latest.
func SampleRSS(t testing.TB, c *Collector, interval, limit time.Duration) *RSSSampler {
	t.Helper()
	return SampleRSSOf(t, c.cmd.Process.Pid, interval, limit)
}

// SampleRSSOf samples the RSS of the process pid as SampleRSS does.
func SampleRSSOf(t testing.TB, pid int, interval, limit time.Duration) *RSSSampler {
	t.Helper()
	r := &RSSSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		deadline := time.After(limit)
		for {
			if v, err := rssBytes(pid); err == nil {
				r.mu.Lock()
				r.samples = append(r.samples, v)
				r.times = append(r.times, time.Now())
				r.mu.Unlock()
			}
			select {
			case <-r.stop:
				return
			case <-deadline:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(r.Stop)
	return r
}

// Stop ends the sampling (idempotent).
func (r *RSSSampler) Stop() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}

// Samples returns the samples so far.
func (r *RSSSampler) Samples() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.samples...)
}

// SamplesSince returns the samples taken at or after since.
func (r *RSSSampler) SamplesSince(since time.Time) []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.times), func(i int) bool { return !r.times[i].Before(since) })
	return append([]int64(nil), r.samples[i:]...)
}

// At is the last sample taken at or before at (the first sample when none
// was).
func (r *RSSSampler) At(at time.Time) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.samples) == 0 {
		return 0
	}
	i := sort.Search(len(r.times), func(i int) bool { return r.times[i].After(at) })
	return r.samples[max(i-1, 0)]
}

// Peak is the largest sample.
func (r *RSSSampler) Peak() int64 {
	var p int64
	for _, v := range r.Samples() {
		p = max(p, v)
	}
	return p
}

const mib = 1 << 20

// selfMetrics scrapes the collector's own Prometheus endpoint.
func selfMetrics(t testing.TB, c *Collector) string {
	t.Helper()
	return scrape(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", c.MetricsPort))
}

// waitFor polls cond every 100 ms until it holds or timeout passes; it
// reports whether it held.
func waitFor(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitProgress polls state every 250 ms until done(state) holds. It gives
// up when state has not changed for stall (nothing moves; waiting longer
// would not help) or when timeout passes (the loop's bound, set generously:
// a slow machine gets there slowly, not never), and then says which.
func waitProgress[S comparable](timeout, stall time.Duration, state func() S, done func(S) bool) (S, error) {
	start := time.Now()
	cur := state()
	last, since := cur, start
	for {
		if done(cur) {
			return cur, nil
		}
		switch {
		case time.Since(since) >= stall:
			return cur, fmt.Errorf("no progress for %v (after %v): %v", stall, time.Since(start).Round(time.Second), cur)
		case time.Since(start) >= timeout:
			return cur, fmt.Errorf("not done within %v, although still progressing: %v", timeout, cur)
		}
		time.Sleep(250 * time.Millisecond)
		if cur = state(); cur != last {
			last, since = cur, time.Now()
		}
	}
}

// waitSettled polls state every 100 ms until ok(state) holds and state has
// not changed for quiet (span_guard's summary spans sit in an open batch for
// up to its flush_timeout and are not in its held counts, so a state that
// holds for a moment is not yet final), or until timeout. It returns the last
// state and whether it settled.
func waitSettled[S comparable](timeout, quiet time.Duration, state func() S, ok func(S) bool) (S, bool) {
	var last S
	var since time.Time
	for deadline := time.Now().Add(timeout); ; {
		cur := state()
		switch {
		case !ok(cur):
			since = time.Time{}
		case since.IsZero() || cur != last:
			since = time.Now()
		case time.Since(since) >= quiet:
			return cur, true
		}
		last = cur
		if time.Now().After(deadline) {
			return cur, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
