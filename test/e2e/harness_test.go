//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// repoRoot is the root of the repository, two levels above this package.
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

// atExit is what TestMain runs after the last test: stopping the servers
// that tests share (started once, on first use, e.g. SharedJaeger).
var atExit struct {
	mu  sync.Mutex
	fns []func()
}

// onExit has fn run after the last test of this run, in reverse order of
// registration.
func onExit(fn func()) {
	atExit.mu.Lock()
	defer atExit.mu.Unlock()
	atExit.fns = append(atExit.fns, fn)
}

func TestMain(m *testing.M) {
	code := m.Run()
	atExit.mu.Lock()
	fns := atExit.fns
	atExit.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	os.Exit(code)
}

// binary returns the path of the otelcol-llm binary under test.
func binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_LLM_BINARY")
	if bin == "" {
		t.Fatal("OTELCOL_LLM_BINARY is not set: run the end-to-end tests with `make e2e`, which builds the binary first")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("OTELCOL_LLM_BINARY: %v", err)
	}
	return bin
}

// runBinary runs the binary to completion (bounded by timeout) and returns its
// combined output and exit code.
func runBinary(t testing.TB, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "%v did not finish within %v", args, timeout)
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		require.True(t, ok, "running %v: %v", args, err)
		code = exitErr.ExitCode()
	}
	return string(out), code
}

// Ports handed to child processes (the collector's listeners, Prometheus,
// sinks that must come back on a known address) come from below the
// kernel's ephemeral range, never from it: a port of that range that was
// free a moment ago (what listening on 127.0.0.1:0 and closing returns) can
// be taken by any outgoing connection of any process before the child binds
// it. Below the range only an explicit bind takes a port, and those of this
// process are kept apart by the set of ports already handed out; another
// test process (go test runs packages in parallel) starts its walk through
// the window at its own offset, derived from its pid and the time.
//
// A server the test runs in its own process binds 127.0.0.1:0 itself and
// reports its address (StartOTLPSink, mockllm): that has no race at all.
const (
	// portFloor is where the window below the ephemeral range starts.
	portFloor = 20000
	// portAttempts bounds how many candidates one freePort call tries.
	portAttempts = 500
)

// wellKnownPorts are the defaults of the shipped configurations and of the
// tools next to them; a test never takes one, so that a collector or a
// Prometheus started by hand on the same machine does not collide with it.
var wellKnownPorts = map[int]bool{4317: true, 4318: true, 8000: true, 8888: true, 9090: true, 9464: true, 13133: true, 18000: true}

// ephemeralPortRange is the kernel's range for automatically chosen local
// ports, from /proc (32768–60999, Linux's default, when it cannot be read).
func ephemeralPortRange() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l < 1 || h < l || h > 65535 {
		return lo, hi
	}
	return l, h
}

// portWindow is the range freePort allocates from: portFloor up to the
// ephemeral range, or, where the kernel's range starts too low to leave room
// below it, the ports above the range or, failing that, everything from 1024
// up (the bind check then does what it can).
func portWindow() (lo, hi int) {
	elo, ehi := ephemeralPortRange()
	const room = 1000
	for _, w := range [][2]int{{portFloor, elo - 1}, {ehi + 1, 65535}, {1024, elo - 1}} {
		if w[1]-w[0]+1 >= room {
			return w[0], w[1]
		}
	}
	return 1024, 65535
}

// ports is this process's allocator.
var ports = func() *portAllocator {
	lo, hi := portWindow()
	seed := uint64(os.Getpid())*0x9e3779b97f4a7c15 ^ uint64(time.Now().UnixNano())
	return &portAllocator{lo: lo, hi: hi, next: lo + int(seed%uint64(hi-lo+1)), handed: map[int]bool{}}
}()

// portAllocator walks its window from a per-process offset, one port after
// the other, and hands each port out once.
type portAllocator struct {
	mu     sync.Mutex
	lo, hi int
	next   int
	handed map[int]bool
}

// take returns the next port that is neither handed out, well known nor
// bound by anyone now (checked by binding it on 127.0.0.1 and closing).
func (a *portAllocator) take() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := 0; i < portAttempts; i++ {
		p := a.next
		if a.next++; a.next > a.hi {
			a.next = a.lo
		}
		if a.handed[p] || wellKnownPorts[p] {
			continue
		}
		a.handed[p] = true // taken or not, it is not tried again
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			continue
		}
		return p, nil
	}
	elo, ehi := ephemeralPortRange()
	return 0, fmt.Errorf("no free port in %d-%d (the ephemeral range is %d-%d) after %d candidates; %d handed out so far",
		a.lo, a.hi, elo, ehi, portAttempts, len(a.handed))
}

// freePort returns a loopback TCP port for a child process or a server that
// must listen on a known address: outside the ephemeral range, free when
// checked, and handed out to no one else in this process.
func freePort(t testing.TB) int {
	t.Helper()
	p, err := ports.take()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuffer is a bytes.Buffer safe for the process's writers and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Collector is a running otelcol-llm process.
type Collector struct {
	// The process of the latest start: WaitHealthy starts it again when a
	// start lost one of its ports to another process.
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
	err    error // how the process ended, once done is closed

	args    []string // the binary's arguments
	env     []string // the environment of every start, listener ports aside
	setProm bool     // the harness chooses PromPort (the test did not)
	starts  int      // how many times the process was started
	healthy bool     // WaitHealthy has seen it ready once

	// Ports of the shipped configurations' listeners, chosen free per start.
	OTLPGRPCPort, OTLPHTTPPort, HealthPort, MetricsPort int
	// PromPort is the Prometheus exporter's port of the configurations that
	// expose GenAI metrics (OTELCOL_LLM_PROM_PORT, unless the test set it).
	PromPort int
	// StorageDir is the file_storage folder (OTELCOL_LLM_STORAGE_DIR, unless
	// the test set it).
	StorageDir string
}

// collectorStarts bounds how often WaitHealthy starts a collector whose
// listener lost its port to another process before the collector bound it.
const collectorStarts = 3

// StartCollector starts the binary with args (typically --config flags) and
// free loopback ports for every listener of the default configuration. The
// process is stopped with SIGTERM when the test ends. The environment is the
// test's at this call; a start that WaitHealthy repeats uses the same one.
func StartCollector(t testing.TB, args ...string) *Collector {
	t.Helper()
	c := &Collector{args: args, env: os.Environ()}
	if v := os.Getenv("OTELCOL_LLM_PROM_PORT"); v != "" {
		c.PromPort, _ = strconv.Atoi(v)
	} else {
		c.setProm = true
	}
	if c.StorageDir = os.Getenv("OTELCOL_LLM_STORAGE_DIR"); c.StorageDir == "" {
		c.StorageDir = t.TempDir()
		c.env = append(c.env, "OTELCOL_LLM_STORAGE_DIR="+c.StorageDir)
	}
	c.start(t)
	t.Cleanup(func() {
		if c.Exited() {
			return
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", c.Output())
		}
	})
	return c
}

// start runs the process once more, on new ports.
func (c *Collector) start(t testing.TB) {
	t.Helper()
	c.OTLPGRPCPort, c.OTLPHTTPPort, c.HealthPort, c.MetricsPort = freePort(t), freePort(t), freePort(t), freePort(t)
	env := append(slices.Clip(c.env),
		"OTELCOL_LLM_LISTEN_HOST=127.0.0.1",
		"OTELCOL_LLM_OTLP_GRPC_PORT="+strconv.Itoa(c.OTLPGRPCPort),
		"OTELCOL_LLM_OTLP_HTTP_PORT="+strconv.Itoa(c.OTLPHTTPPort),
		"OTELCOL_LLM_HEALTH_PORT="+strconv.Itoa(c.HealthPort),
		"OTELCOL_LLM_METRICS_PORT="+strconv.Itoa(c.MetricsPort),
	)
	if c.setProm {
		c.PromPort = freePort(t)
		env = append(env, "OTELCOL_LLM_PROM_PORT="+strconv.Itoa(c.PromPort))
	}
	cmd := exec.Command(binary(t), c.args...)
	cmd.Dir = repoRoot
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr, cmd.Env = out, out, env
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	c.cmd, c.output, c.done = cmd, out, done
	c.starts++
	go func() {
		err := cmd.Wait()
		c.err = err // read only after done is closed
		close(done)
	}()
}

// portConflict is the line of a collector's output that says one of its
// listeners could not bind its port, or "" when there is none.
func portConflict(output string) string {
	for _, line := range strings.Split(output, "\n") {
		if strings.Contains(line, "address already in use") {
			return line
		}
	}
	return ""
}

// Output is everything the process has written so far.
func (c *Collector) Output() string { return c.output.String() }

// Exited reports whether the process has ended.
func (c *Collector) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// WaitHealthy waits, up to timeout, until the health_check extension reports
// the collector ready. A collector that exits before it was ever ready
// because a listener's port was taken (another process bound it between
// freePort's check and the collector's bind) is started again on new ports,
// with a new timeout, up to collectorStarts starts in all; the ports the
// test reads after WaitHealthy are those of the running process.
func (c *Collector) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/", c.HealthPort)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		if c.Exited() {
			line := portConflict(c.Output())
			if c.healthy {
				t.Fatalf("collector exited: %v\n%s", c.err, c.Output())
			}
			if line == "" || c.starts >= collectorStarts {
				t.Fatalf("collector exited before becoming healthy (start %d of at most %d): %v\n%s", c.starts, collectorStarts, c.err, c.Output())
			}
			t.Logf("collector start %d lost a port to another process; starting it again on new ports: %s", c.starts, strings.TrimSpace(line))
			c.start(t)
			url = fmt.Sprintf("http://127.0.0.1:%d/", c.HealthPort)
			deadline = time.Now().Add(timeout)
			continue
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				c.healthy = true
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("collector not healthy at %s within %v\n%s", url, timeout, c.Output())
}

// Stop sends SIGTERM and waits up to timeout for the process to exit. It
// returns the exit error (nil on a clean exit).
func (c *Collector) Stop(t testing.TB, timeout time.Duration) error {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		t.Fatalf("collector did not exit within %v of SIGTERM\n%s", timeout, c.Output())
		return nil
	}
}

// writeFile writes content to name under a per-test temporary folder and
// returns its path.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// TestFreePortOutsideEphemeralRange checks the allocator itself: distinct
// ports, inside its window, outside the kernel's ephemeral range (where the
// kernel's range leaves room below it) and never a well-known one.
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	elo, ehi := ephemeralPortRange()
	lo, hi := portWindow()
	seen := map[int]bool{}
	for i := 0; i < 50; i++ {
		p := freePort(t)
		require.False(t, seen[p], "port %d handed out twice", p)
		seen[p] = true
		require.True(t, p >= lo && p <= hi, "port %d outside the window %d-%d", p, lo, hi)
		require.False(t, wellKnownPorts[p], "well-known port %d", p)
		if elo-portFloor >= 1000 {
			require.True(t, p < elo || p > ehi, "port %d inside the ephemeral range %d-%d", p, elo, ehi)
		}
	}
}
