package mockllmextension

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/internal/sse"
)

// metricValue is the point of name with exactly attrs, from a sum or a
// gauge; false when there is none.
func metricValue(t *testing.T, tel *componenttest.Telemetry, name string, attrs map[string]string) (int64, bool) {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0, false
	}
	var points []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		points = d.DataPoints
	case metricdata.Gauge[int64]:
		points = d.DataPoints
	default:
		t.Fatalf("%s is %T", name, m.Data)
	}
	for _, dp := range points {
		match := dp.Attributes.Len() == len(attrs)
		for k, v := range attrs {
			got, ok := dp.Attributes.Value(attribute.Key(k))
			match = match && ok && got.Emit() == v
		}
		if match {
			return dp.Value, true
		}
	}
	return 0, false
}

func waitMetric(t *testing.T, tel *componenttest.Telemetry, name string, attrs map[string]string, want int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, ok := metricValue(t, tel, name, attrs)
		return ok && v == want
	}, 10*time.Second, 5*time.Millisecond, "%s%v != %d", name, attrs, want)
}

// startTelemetry starts an extension on 127.0.0.1:0 with recorded telemetry.
func startTelemetry(t *testing.T, mutate func(*Config)) (*mockLLM, *componenttest.Telemetry, *http.Client) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	cfg := testConfig()
	cfg.TTFT, cfg.ITL, cfg.Jitter, cfg.OutputTokens, cfg.OutputJitter = 5*time.Millisecond, time.Millisecond, 0, 8, 0
	if mutate != nil {
		mutate(cfg)
	}
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	e := create(t, cfg, set)
	require.NoError(t, e.Start(bg, componenttest.NewNopHost()))
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		require.NoError(t, e.Shutdown(bg))
		require.NoError(t, tel.Shutdown(bg))
	})
	return e, tel, &http.Client{Transport: tr}
}

func chatRequest(ctx context.Context, t *testing.T, e *mockLLM, body string, hdr map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.Addr()+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

func chat(ctx context.Context, t *testing.T, c *http.Client, e *mockLLM, body string, hdr map[string]string) (*http.Response, error) {
	t.Helper()
	return c.Do(chatRequest(ctx, t, e, body, hdr))
}

const streamBody = `{"model":"mock-llm","stream":true,"messages":[{"role":"user","content":"hello"}]}`

func TestStreamingChatThroughTheExtension(t *testing.T) {
	e, tel, client := startTelemetry(t, nil)
	resp, err := chat(bg, t, client, e, streamBody, map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	rd := sse.NewReader(resp.Body, 0)
	content, done := 0, false
	for i := 0; i < 100 && !done; i++ {
		ev, err := rd.Next()
		require.NoError(t, err)
		if sse.IsDone(ev.Data) {
			done = true
			continue
		}
		var c sse.Chunk
		require.NoError(t, sse.DecodeChunk(ev.Data, &c))
		if n, _ := c.ContentLen(); n > 0 {
			content++
		}
	}
	assert.True(t, done, "the stream ends with [DONE]")
	assert.Equal(t, 8, content)

	rl, err := chat(bg, t, client, e, streamBody, map[string]string{mockllm.HeaderFault: mockllm.FaultRateLimit})
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, rl.Body)
	rl.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, rl.StatusCode)

	waitMetric(t, tel, "otelcol_mock_llm_requests", nil, 2)
	waitMetric(t, tel, "otelcol_mock_llm_completed", nil, 1)
	waitMetric(t, tel, "otelcol_mock_llm_faults", map[string]string{"fault": "rate_limit"}, 1)
	waitMetric(t, tel, "otelcol_mock_llm_active_streams", nil, 0)

	// One SERVER span per request, through the component's tracer provider,
	// joined to the caller's trace.
	require.Eventually(t, func() bool { return len(tel.SpanRecorder.Ended()) == 2 }, 10*time.Second, 5*time.Millisecond)
	var joined bool
	for _, s := range tel.SpanRecorder.Ended() {
		assert.Equal(t, trace.SpanKindServer, s.SpanKind())
		joined = joined || s.SpanContext().TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736"
	}
	assert.True(t, joined)
}

// TestQueueThroughTheExtension: a full queue is refused and counted as
// rejected{reason=queue_full}; a client leaving the queue as client_gone.
func TestQueueThroughTheExtension(t *testing.T) {
	e, tel, client := startTelemetry(t, func(c *Config) { c.MaxRunning, c.MaxQueue = 1, 1 })
	ctxA, cancelA := context.WithCancel(bg)
	defer cancelA()
	a, err := chat(ctxA, t, client, e, streamBody, map[string]string{mockllm.HeaderTTFT: "600000"})
	require.NoError(t, err)
	defer a.Body.Close()
	waitMetric(t, tel, "otelcol_mock_llm_running", nil, 1)

	ctxB, cancelB := context.WithCancel(bg)
	defer cancelB()
	bDone := make(chan error, 1)
	reqB := chatRequest(ctxB, t, e, streamBody, nil)
	go func() {
		resp, err := client.Do(reqB)
		if err == nil {
			resp.Body.Close()
		}
		bDone <- err
	}()
	waitMetric(t, tel, "otelcol_mock_llm_queued", nil, 1)

	c, err := chat(bg, t, client, e, streamBody, nil)
	require.NoError(t, err)
	var body struct {
		Error struct{ Type string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(c.Body).Decode(&body))
	c.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, c.StatusCode)
	assert.Equal(t, "server_error", body.Error.Type)
	waitMetric(t, tel, "otelcol_mock_llm_rejected", map[string]string{"reason": "queue_full"}, 1)

	cancelB()
	require.Error(t, <-bDone)
	waitMetric(t, tel, "otelcol_mock_llm_queued", nil, 0)
	cancelA()
	waitMetric(t, tel, "otelcol_mock_llm_running", nil, 0)
	waitMetric(t, tel, "otelcol_mock_llm_client_gone", nil, 2)
}
