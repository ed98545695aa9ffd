//go:build e2e

package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Jaeger is a Jaeger v2 process (the binary in $JAEGER, which `make e2e`
// builds into .tools/) run with testdata/jaeger.yaml: an OTLP/gRPC receiver,
// the in-memory trace store and the query service, all on loopback ports
// from freePort's window.
type Jaeger struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
	err    error // how the process ended, once done is closed

	// OTLPAddr is the host:port of its OTLP/gRPC receiver.
	OTLPAddr string
	// QueryURL is the base URL of its query service: the HTTP API
	// (/api/v3/traces, /api/traces/{id}) and the UI.
	QueryURL string
	// MetricsURL is its own Prometheus metrics endpoint.
	MetricsURL string
	healthURL  string
}

// jaegerStarts bounds how often a Jaeger that lost a port to another
// process before binding it is started again.
const jaegerStarts = 3

// jaegerConfig is the configuration every Jaeger here runs with.
var jaegerConfig = filepath.Join(repoRoot, "test", "e2e", "testdata", "jaeger.yaml")

// launchJaeger starts Jaeger with an in-memory store of at most maxTraces
// traces and waits up to timeout for its health check; a start that lost a
// port is repeated on new ports. The caller stops it.
func launchJaeger(maxTraces int, timeout time.Duration) (*Jaeger, error) {
	bin := os.Getenv("JAEGER")
	if bin == "" {
		return nil, errors.New("JAEGER is not set: run the end-to-end tests with `make e2e`, which builds Jaeger into .tools/ and sets it")
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("JAEGER: %w", err)
	}
	for start := 1; ; start++ {
		j, err := startJaegerProcess(bin, maxTraces)
		if err != nil {
			return nil, err
		}
		err = j.waitHealthy(timeout)
		if err == nil {
			return j, nil
		}
		j.Stop()
		if portConflict(j.Output()) == "" || start >= jaegerStarts {
			return nil, fmt.Errorf("jaeger (start %d of at most %d): %w\n%s", start, jaegerStarts, err, j.Output())
		}
	}
}

func startJaegerProcess(bin string, maxTraces int) (*Jaeger, error) {
	var p [5]int
	for i := range p {
		var err error
		if p[i], err = ports.take(); err != nil {
			return nil, err
		}
	}
	j := &Jaeger{
		OTLPAddr:   fmt.Sprintf("127.0.0.1:%d", p[0]),
		QueryURL:   fmt.Sprintf("http://127.0.0.1:%d", p[1]),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", p[3]),
		healthURL:  fmt.Sprintf("http://127.0.0.1:%d/status", p[4]),
		output:     &syncBuffer{},
		done:       make(chan struct{}),
	}
	cmd := exec.Command(bin, "--config", jaegerConfig)
	cmd.Env = append(os.Environ(),
		"JAEGER_OTLP_GRPC_ENDPOINT="+j.OTLPAddr,
		fmt.Sprintf("JAEGER_QUERY_HTTP_ENDPOINT=127.0.0.1:%d", p[1]),
		fmt.Sprintf("JAEGER_QUERY_GRPC_ENDPOINT=127.0.0.1:%d", p[2]),
		fmt.Sprintf("JAEGER_METRICS_PORT=%d", p[3]),
		fmt.Sprintf("JAEGER_HEALTH_ENDPOINT=127.0.0.1:%d", p[4]),
		"JAEGER_MAX_TRACES="+strconv.Itoa(maxTraces),
	)
	cmd.Stdout, cmd.Stderr = j.output, j.output
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting jaeger: %w", err)
	}
	j.cmd = cmd
	go func() {
		j.err = cmd.Wait() // read only after done is closed
		close(j.done)
	}()
	return j, nil
}

// waitHealthy polls the health check until it answers 200, the process
// exits or timeout passes.
func (j *Jaeger) waitHealthy(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		if j.Exited() {
			return fmt.Errorf("exited before becoming healthy: %v", j.err)
		}
		if resp, err := client.Get(j.healthURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not healthy at %s within %v", j.healthURL, timeout)
}

// Pid is the process id, for RSS sampling.
func (j *Jaeger) Pid() int { return j.cmd.Process.Pid }

// Output is everything the process has written so far.
func (j *Jaeger) Output() string { return j.output.String() }

// Exited reports whether the process has ended.
func (j *Jaeger) Exited() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and waits up to 15 s before killing the process.
func (j *Jaeger) Stop() {
	if j.Exited() {
		return
	}
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-j.done:
	case <-time.After(15 * time.Second):
		_ = j.cmd.Process.Kill()
		<-j.done
	}
}

// logOnFailure logs the end of Jaeger's output when t fails.
func (j *Jaeger) logOnFailure(t testing.TB) {
	t.Cleanup(func() {
		if t.Failed() {
			out := j.Output()
			if len(out) > 16<<10 {
				out = "…" + out[len(out)-16<<10:]
			}
			t.Logf("jaeger output:\n%s", out)
		}
	})
}

// sharedJaeger is the Jaeger of SharedJaeger.
var sharedJaeger struct {
	once sync.Once
	j    *Jaeger
	err  error
}

// SharedJaeger returns the Jaeger that the tests of this run share (an
// in-memory store of 100,000 traces, Jaeger's own example setting),
// starting it on first use; TestMain stops it after the last test. Tests
// keep their data apart by service name and trace id.
func SharedJaeger(t testing.TB) *Jaeger {
	t.Helper()
	sharedJaeger.once.Do(func() {
		sharedJaeger.j, sharedJaeger.err = launchJaeger(100_000, 2*time.Minute)
		if sharedJaeger.j != nil {
			onExit(sharedJaeger.j.Stop)
		}
	})
	require.NoError(t, sharedJaeger.err)
	j := sharedJaeger.j
	require.False(t, j.Exited(), "the shared jaeger exited: %v\n%s", j.err, j.Output())
	j.logOnFailure(t)
	return j
}

// StartJaeger starts a Jaeger of the test's own, stopped when the test ends.
func StartJaeger(t testing.TB, maxTraces int) *Jaeger {
	t.Helper()
	j, err := launchJaeger(maxTraces, 2*time.Minute)
	require.NoError(t, err)
	t.Cleanup(j.Stop)
	j.logOnFailure(t)
	return j
}

// jaegerFetch is one answer of the query API: its status, body and how long
// the whole response took to arrive.
type jaegerFetch struct {
	Status  int
	Body    []byte
	Elapsed time.Duration
}

// get fetches path (with query q) from the query service, giving up after
// timeout.
func (j *Jaeger) get(path string, q url.Values, timeout time.Duration) (jaegerFetch, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	u := j.QueryURL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return jaegerFetch{}, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return jaegerFetch{Elapsed: time.Since(start)}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return jaegerFetch{Status: resp.StatusCode, Body: body, Elapsed: time.Since(start)}, err
}

// getOK fetches path as get does and fails unless Jaeger answered 200.
func (j *Jaeger) getOK(path string, timeout time.Duration) (jaegerFetch, error) {
	f, err := j.get(path, nil, timeout)
	if err == nil && f.Status != http.StatusOK {
		err = fmt.Errorf("GET %s: HTTP %d: %.500s", path, f.Status, f.Body)
	}
	return f, err
}

// traceIDHex is a trace id as Jaeger's API takes it.
func traceIDHex(id pcommon.TraceID) string { return hex.EncodeToString(id[:]) }

// decodeV3 reads an /api/v3 answer: OTLP JSON under "result".
func decodeV3(body []byte) (ptrace.Traces, error) {
	var wrapper struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &wrapper); err != nil {
		return ptrace.Traces{}, err
	}
	if len(wrapper.Result) == 0 {
		return ptrace.Traces{}, fmt.Errorf("no result in %.200s", body)
	}
	return new(ptrace.JSONUnmarshaler).UnmarshalTraces(wrapper.Result)
}

// FindTraces asks /api/v3/traces for up to limit traces of service that
// started between from and to, and returns their spans by trace id (none
// when Jaeger found none).
func (j *Jaeger) FindTraces(t testing.TB, service string, from, to time.Time, limit int) map[pcommon.TraceID][]ptrace.Span {
	t.Helper()
	f, err := j.get("/api/v3/traces", url.Values{
		"query.service_name":   {service},
		"query.start_time_min": {from.UTC().Format(time.RFC3339Nano)},
		"query.start_time_max": {to.UTC().Format(time.RFC3339Nano)},
		"query.num_traces":     {strconv.Itoa(limit)},
	}, time.Minute)
	require.NoError(t, err)
	if f.Status == http.StatusNotFound {
		return map[pcommon.TraceID][]ptrace.Span{}
	}
	require.Equal(t, http.StatusOK, f.Status, "%.500s", f.Body)
	td, err := decodeV3(f.Body)
	require.NoError(t, err)
	return spansByTrace(td)
}

// TraceV3 fetches one trace from /api/v3/traces/{id} (OTLP).
func (j *Jaeger) TraceV3(t testing.TB, id pcommon.TraceID) ptrace.Traces {
	t.Helper()
	f, err := j.getOK("/api/v3/traces/"+traceIDHex(id), time.Minute)
	require.NoError(t, err)
	td, err := decodeV3(f.Body)
	require.NoError(t, err)
	return td
}

// forEachSpan calls fn for every span of td.
func forEachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				fn(sp)
			}
		}
	}
}

// spansByTrace groups the spans of td by trace id.
func spansByTrace(td ptrace.Traces) map[pcommon.TraceID][]ptrace.Span {
	out := map[pcommon.TraceID][]ptrace.Span{}
	forEachSpan(td, func(sp ptrace.Span) { out[sp.TraceID()] = append(out[sp.TraceID()], sp) })
	return out
}

// uiTrace is a trace in Jaeger's own JSON model, as /api/traces/{id}
// returns it to the Jaeger UI.
type uiTrace struct {
	TraceID   string               `json:"traceID"`
	Spans     []uiSpan             `json:"spans"`
	Processes map[string]uiProcess `json:"processes"`
	Warnings  []string             `json:"warnings"`
}

type uiSpan struct {
	TraceID       string        `json:"traceID"`
	SpanID        string        `json:"spanID"`
	OperationName string        `json:"operationName"`
	References    []uiReference `json:"references"`
	StartTime     int64         `json:"startTime"` // µs since the epoch
	Duration      int64         `json:"duration"`  // µs
	Tags          []uiKeyValue  `json:"tags"`
	ProcessID     string        `json:"processID"`
	Warnings      []string      `json:"warnings"`
}

type uiReference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type uiKeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type uiProcess struct {
	ServiceName string       `json:"serviceName"`
	Tags        []uiKeyValue `json:"tags"`
}

// tag returns the span's tag key.
func (s uiSpan) tag(key string) (uiKeyValue, bool) {
	for _, kv := range s.Tags {
		if kv.Key == key {
			return kv, true
		}
	}
	return uiKeyValue{}, false
}

// decodeUITrace reads an /api/traces/{id} answer.
func decodeUITrace(body []byte) (uiTrace, error) {
	var resp struct {
		Data   []uiTrace `json:"data"`
		Errors []struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return uiTrace{}, err
	}
	if len(resp.Errors) > 0 || len(resp.Data) != 1 {
		return uiTrace{}, fmt.Errorf("%d traces, errors %v", len(resp.Data), resp.Errors)
	}
	return resp.Data[0], nil
}

// TraceUI fetches one trace from /api/traces/{id}, the Jaeger UI's call.
func (j *Jaeger) TraceUI(t testing.TB, id pcommon.TraceID) uiTrace {
	t.Helper()
	f, err := j.getOK("/api/traces/"+traceIDHex(id), time.Minute)
	require.NoError(t, err)
	tr, err := decodeUITrace(f.Body)
	require.NoError(t, err)
	return tr
}

// setService sets service.name on every resource of td.
func setService(td ptrace.Traces, name string) {
	for _, rs := range td.ResourceSpans().All() {
		rs.Resource().Attributes().PutStr("service.name", name)
	}
}
