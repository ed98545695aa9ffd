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
	"strconv"
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

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
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
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
	err    error

	// Ports of the shipped configurations' listeners, chosen free per test.
	OTLPGRPCPort, OTLPHTTPPort, HealthPort, MetricsPort int
	// PromPort is the Prometheus exporter's port of the configurations that
	// expose GenAI metrics (OTELCOL_LLM_PROM_PORT, unless the test set it).
	PromPort int
	// StorageDir is the file_storage folder (OTELCOL_LLM_STORAGE_DIR, unless
	// the test set it).
	StorageDir string
}

// StartCollector starts the binary with args (typically --config flags) and
// free loopback ports for every listener of the default configuration. The
// process is stopped with SIGTERM when the test ends.
func StartCollector(t testing.TB, args ...string) *Collector {
	t.Helper()
	c := &Collector{
		output:       &syncBuffer{},
		done:         make(chan struct{}),
		OTLPGRPCPort: freePort(t),
		OTLPHTTPPort: freePort(t),
		HealthPort:   freePort(t),
		MetricsPort:  freePort(t),
	}
	c.cmd = exec.Command(binary(t), args...)
	c.cmd.Dir = repoRoot
	c.cmd.Stdout = c.output
	c.cmd.Stderr = c.output
	c.cmd.Env = append(os.Environ(),
		"OTELCOL_LLM_LISTEN_HOST=127.0.0.1",
		"OTELCOL_LLM_OTLP_GRPC_PORT="+strconv.Itoa(c.OTLPGRPCPort),
		"OTELCOL_LLM_OTLP_HTTP_PORT="+strconv.Itoa(c.OTLPHTTPPort),
		"OTELCOL_LLM_HEALTH_PORT="+strconv.Itoa(c.HealthPort),
		"OTELCOL_LLM_METRICS_PORT="+strconv.Itoa(c.MetricsPort),
	)
	if v := os.Getenv("OTELCOL_LLM_PROM_PORT"); v != "" {
		c.PromPort, _ = strconv.Atoi(v)
	} else {
		c.PromPort = freePort(t)
		c.cmd.Env = append(c.cmd.Env, "OTELCOL_LLM_PROM_PORT="+strconv.Itoa(c.PromPort))
	}
	if c.StorageDir = os.Getenv("OTELCOL_LLM_STORAGE_DIR"); c.StorageDir == "" {
		c.StorageDir = t.TempDir()
		c.cmd.Env = append(c.cmd.Env, "OTELCOL_LLM_STORAGE_DIR="+c.StorageDir)
	}
	require.NoError(t, c.cmd.Start())
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
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
// the collector ready.
func (c *Collector) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/", c.HealthPort)
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		if c.Exited() {
			t.Fatalf("collector exited before becoming healthy: %v\n%s", c.err, c.Output())
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
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
