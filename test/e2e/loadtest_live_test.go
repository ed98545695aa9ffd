//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// runLiveLoadTest runs builtin:loadtest-live as a user would against an
// endpoint (a mockllm on loopback with the given fault rates), waits for the
// collector to stop by itself and returns the report and the exit status.
func runLiveLoadTest(t *testing.T, faults map[string]float64) (loadReport, int) {
	t.Helper()
	mcfg := mockllm.DefaultConfig()
	mcfg.TTFT, mcfg.ITL, mcfg.OutputTokens, mcfg.Seed = 40*time.Millisecond, 5*time.Millisecond, 24, 5
	mcfg.FaultRates = faults
	mock, err := mockllm.New(mcfg)
	require.NoError(t, err)
	require.NoError(t, mock.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = mock.Close() })

	dir := t.TempDir()
	t.Setenv("OTELCOL_LLM_TARGET_URL", mock.URL()+"/v1")
	t.Setenv("OTELCOL_LLM_TARGET_METRICS", strings.TrimPrefix(mock.URL(), "http://"))
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", "120")
	t.Setenv("OTELCOL_LLM_LOADGEN_RATE", "40")
	t.Setenv("OTELCOL_LLM_REPORT_DIR", dir)
	col := StartCollector(t, "--config", "builtin:loadtest-live")
	code := waitExit(t, col, 120*time.Second)
	r := readLoadReport(t, dir)
	assert.True(t, r.Final, "the shutdown report is the last one written")
	assert.Equal(t, int64(120), r.Total.Requests, "every request of the run is in the report")
	require.NotNil(t, r.Total.TTFT)
	assert.Positive(t, r.Total.TTFT.Count)
	assert.GreaterOrEqual(t, r.Total.TTFT.P95, 0.040*0.5, "TTFT measured over real SSE is not below the mock's (within jitter)")
	return r, code
}

// TestLiveLoadTestPasses: a healthy endpoint gets PASS and exit status 0.
func TestLiveLoadTestPasses(t *testing.T) {
	r, code := runLiveLoadTest(t, nil)
	assert.Equal(t, "PASS", r.Verdict)
	assert.Equal(t, int64(120), r.Total.Successes)
	assert.Equal(t, 0, code)
}

// TestLiveLoadTestFailsOnErrors: an endpoint that answers 503 to a fifth of
// the requests fails the error-rate SLO, and the collector exits with 1 so a
// CI job can gate on it.
func TestLiveLoadTestFailsOnErrors(t *testing.T) {
	r, code := runLiveLoadTest(t, map[string]float64{mockllm.FaultOverloaded: 0.2})
	assert.Equal(t, "FAIL", r.Verdict)
	assert.Less(t, r.Total.Successes, int64(120))
	assert.Equal(t, 1, code)
}
