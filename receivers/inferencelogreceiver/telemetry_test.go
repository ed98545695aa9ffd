package inferencelogreceiver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// TestMalformedLinesKeptAndCounted feeds good and broken lines: every line
// comes out (the indented continuation line folded into the record before
// it), the broken ones with their raw body and a parse error, and the
// receiver's counters say how many of each.
func TestMalformedLinesKeptAndCounted(t *testing.T) {
	dir := t.TempDir()
	good := vllmRequestLines(0, 3)
	bad := "\x00\x01 binary garbage\n" +
		"INFO 11-29 17:42:20 [loggers.py:127] Engine 000: Avg prompt throughput: n/a tokens/s\n" +
		"    at some.continuation(line)\n" +
		"WARNING 11-29 17:42:21 a record without its [file:line] header\n"
	appendFile(t, filepath.Join(dir, "vllm.log"), good+bad)
	s := startReceiver(t, testConfig("vllm", filepath.Join(dir, "*.log")), componenttest.NewNopHost())
	s.waitRecords(t, 6)
	s.stop(t)

	logs := mergeLogs(s.logs.AllLogs())
	lrs := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	require.Equal(t, 6, lrs.Len())
	withError, folded := 0, 0
	for i := 0; i < lrs.Len(); i++ {
		lr := lrs.At(i)
		if v, ok := lr.Attributes().Get(attrParseError); ok {
			withError++
			assert.NotEmpty(t, v.Str())
			assert.NotEmpty(t, lr.Body().Str(), "raw body kept")
		}
		if strings.HasSuffix(lr.Body().Str(), "n/a tokens/s\n    at some.continuation(line)") {
			folded++
		}
	}
	assert.Equal(t, 3, withError)
	assert.Equal(t, 1, folded, "the continuation line is folded into the stats line before it")
	preset := attribute.String("preset", "vllm")
	assert.Equal(t, int64(3), metadatatest.CounterSum(t, s.tel, "otelcol_inference_log_records", preset, attribute.String("outcome", outcomeParsed)))
	assert.Equal(t, int64(3), metadatatest.CounterSum(t, s.tel, "otelcol_inference_log_records", preset, attribute.String("outcome", outcomeParseError)))
	assert.Zero(t, metadatatest.CounterSum(t, s.tel, "otelcol_inference_log_records_dropped"))
}

// TestRefusedRecordsCounted checks records and points the next consumer
// refuses are counted as dropped, not lost silently.
func TestRefusedRecordsCounted(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, "vllm.log"),
		"INFO 11-29 17:41:15 [loggers.py:127] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 1 reqs, Waiting: 2 reqs, GPU KV cache usage: 3.0%, Prefix cache hit rate: 4.0%\n"+
			vllmRequestLines(0, 4))
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := testConfig("vllm", filepath.Join(dir, "*.log"))
	f := NewFactory()
	refuse := consumertest.NewErr(errors.New("queue full"))
	lr, err := f.CreateLogs(context.Background(), set, cfg, refuse)
	require.NoError(t, err)
	mr, err := f.CreateMetrics(context.Background(), set, cfg, refuse)
	require.NoError(t, err)
	require.NoError(t, lr.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, mr.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool {
		return metadatatest.CounterSum(t, tel, "otelcol_inference_log_records_dropped", attribute.String("reason", reasonRefused)) == 5 &&
			metadatatest.CounterSum(t, tel, "otelcol_inference_log_metric_points", attribute.String("outcome", outcomeDropped)) == 6
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, lr.Shutdown(context.Background()))
	require.NoError(t, mr.Shutdown(context.Background()))
}
