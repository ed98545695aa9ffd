//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// inferenceLogSnapshot returns what the inference_log agent forwarded to
// sink: request records by id, the number of typed stats records, and the
// points of inference_log.vllm.num_requests_running.
func inferenceLogSnapshot(sink *OTLPSink) (requests map[string]int, stats int, running []int64) {
	requests = map[string]int{}
	sink.EachLogRecord(func(_ pcommon.Resource, lr plog.LogRecord) {
		attrs := lr.Attributes()
		if id, ok := attrs.Get("inference.request.id"); ok {
			requests[id.Str()]++
		}
		if ev, ok := attrs.Get("event.name"); ok && ev.Str() == "vllm.stats" {
			if v, ok := attrs.Get("vllm.num_requests_running"); ok && v.Type() == pcommon.ValueTypeInt {
				stats++
			}
		}
	})
	sink.EachMetric(func(_ pcommon.Resource, m pmetric.Metric) {
		if m.Name() != "inference_log.vllm.num_requests_running" || m.Type() != pmetric.MetricTypeGauge {
			return
		}
		dps := m.Gauge().DataPoints()
		for d := 0; d < dps.Len(); d++ {
			running = append(running, dps.At(d).IntValue())
		}
	})
	return requests, stats, running
}

// vllmChunk is what a vLLM server writes around request i: its request
// lines, an access-log line and, every tenth request, an engine stats line
// reporting i%50 running requests.
func vllmChunk(i int) string {
	s := fmt.Sprintf("(APIServer pid=2914) INFO 11-29 17:41:12 [async_llm.py:345] Added request chatcmpl-%06d.\n", i) +
		fmt.Sprintf("(APIServer pid=2914) INFO:     127.0.0.1:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n", 40000+i)
	if i%10 == 0 {
		s += fmt.Sprintf("(APIServer pid=2914) INFO 11-29 17:41:15 [loggers.py:127] Engine 000: Avg prompt throughput: 1843.6 tokens/s, "+
			"Avg generation throughput: 412.9 tokens/s, Running: %d reqs, Waiting: 3 reqs, GPU KV cache usage: 37.5%%, Prefix cache hit rate: 61.2%%\n", i%50)
	}
	return s
}

func appendLog(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f.Close()
	for i := from; i < to; i++ {
		_, err = f.WriteString(vllmChunk(i))
		require.NoError(t, err)
	}
}

// TestInferenceLogTailsGrowingVLLMLog runs the built collector with
// builtin:inference-logs on a vLLM log the test keeps writing to, restarts
// the collector in the middle, and checks at an OTLP sink that every request
// record arrived exactly once, stats lines arrived as typed records, and the
// running-requests metric carries the logged values.
func TestInferenceLogTailsGrowingVLLMLog(t *testing.T) {
	sink, addr := StartOTLPSink(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "vllm.log")
	t.Setenv("OTELCOL_LLM_INFERENCE_LOG_INCLUDE", filepath.Join(dir, "*.log"))
	t.Setenv("OTELCOL_LLM_INFERENCE_LOG_START_AT", "beginning")
	t.Setenv("OTELCOL_LLM_STORAGE_DIR", filepath.Join(dir, "storage"))
	t.Setenv("OTELCOL_LLM_UPSTREAM_ENDPOINT", addr)

	appendLog(t, logPath, 0, 100) // written before the agent starts
	col := StartCollector(t, "--config", "builtin:inference-logs")
	col.WaitHealthy(t, 30*time.Second)
	for batch := 1; batch < 5; batch++ { // the server keeps writing
		appendLog(t, logPath, batch*100, batch*100+100)
		time.Sleep(50 * time.Millisecond)
	}
	waitRequests(t, sink, 500)
	require.NoError(t, col.Stop(t, 20*time.Second))

	appendLog(t, logPath, 500, 600) // written while the agent is down
	col = StartCollector(t, "--config", "builtin:inference-logs")
	col.WaitHealthy(t, 30*time.Second)
	appendLog(t, logPath, 600, 700)
	waitRequests(t, sink, 700)
	time.Sleep(time.Second) // a repeated line would arrive by now
	require.NoError(t, col.Stop(t, 20*time.Second))

	requests, stats, running := inferenceLogSnapshot(sink)
	require.Len(t, requests, 700)
	for i := 0; i < 700; i++ {
		assert.Equal(t, 1, requests[fmt.Sprintf("chatcmpl-%06d", i)], "request %d forwarded exactly once", i)
	}
	assert.Equal(t, 70, stats, "one typed stats record per stats line")
	require.Len(t, running, 70, "one metric point per stats line")
	want := map[int64]int{}
	for i := 0; i < 700; i += 10 {
		want[int64(i%50)]++
	}
	got := map[int64]int{}
	for _, v := range running {
		got[v]++
	}
	assert.Equal(t, want, got)
}

func waitRequests(t *testing.T, sink *OTLPSink, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if requests, _, _ := inferenceLogSnapshot(sink); len(requests) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	requests, _, _ := inferenceLogSnapshot(sink)
	t.Fatalf("sink holds %d distinct requests after 30s, want %d", len(requests), n)
}
