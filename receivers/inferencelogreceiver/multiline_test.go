package inferencelogreceiver

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestMultilineFoldsTraceback configures the multiline pattern the README
// recommends for vLLM: the traceback joins the ERROR record that logged it,
// which is then recognised as an out-of-memory event, and nothing is marked
// as a parse error.
func TestMultilineFoldsTraceback(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, "vllm.log"), strings.Join([]string{
		"INFO 11-29 17:42:08 [async_llm.py:345] Added request req-00001.",
		"ERROR 11-29 17:42:09 [core.py:710] EngineCore encountered a fatal error.",
		"Traceback (most recent call last):",
		`  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 701, in run_engine_core`,
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
		"INFO 11-29 17:42:10 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
		"",
	}, "\n"))
	cfg := testConfig("vllm", filepath.Join(dir, "*.log"))
	pattern := `^(\(\S+ pid=\d+\) )?(DEBUG|INFO|WARNING|ERROR|CRITICAL)[ :]`
	cfg.InputConfig.SplitConfig.LineStartPattern = pattern
	s := startReceiver(t, cfg, componenttest.NewNopHost())
	s.waitRecords(t, 3)
	s.stop(t)

	lrs := mergeLogs(s.logs.AllLogs()).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	require.Equal(t, 3, lrs.Len())
	var oom plog.LogRecord
	found := false
	for i := 0; i < lrs.Len(); i++ {
		lr := lrs.At(i)
		_, bad := lr.Attributes().Get(attrParseError)
		assert.False(t, bad, "no parse error in %q", lr.Body().Str())
		if ev, ok := lr.Attributes().Get("event.name"); ok && ev.Str() == "vllm.oom" {
			oom, found = lr, true
		}
	}
	require.True(t, found, "the folded traceback is an OOM event")
	assert.Equal(t, "ERROR", oom.SeverityText())
	assert.Contains(t, oom.Body().Str(), "EngineCore encountered a fatal error.\nTraceback (most recent call last):")
	assert.Contains(t, oom.Body().Str(), "torch.OutOfMemoryError")
	code, ok := oom.Attributes().Get("code.file.path")
	require.True(t, ok)
	assert.Equal(t, "core.py", code.Str())

	// The last line (the stats line) is flushed too and still makes metrics.
	md := mergeMetrics(s.metrics.AllMetrics())
	names := map[string]bool{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		names[ms.At(i).Name()] = ms.At(i).Type() == pmetric.MetricTypeGauge
	}
	assert.True(t, names["inference_log.vllm.num_requests_running"])
}
