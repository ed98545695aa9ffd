//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadReport is the part of report.json these tests read.
type loadReport struct {
	Final   bool   `json:"final"`
	Verdict string `json:"verdict"`
	Run     struct {
		Source string `json:"source"`
	} `json:"run"`
	SLOs []struct {
		Name    string `json:"name"`
		Verdict string `json:"verdict"`
	} `json:"slos"`
	Total struct {
		Requests  int64  `json:"requests"`
		Successes int64  `json:"successes"`
		ITLSource string `json:"itl_source"`
		TTFT      *struct {
			Count int64   `json:"count"`
			P95   float64 `json:"p95"`
		} `json:"ttft"`
	} `json:"total"`
}

func readLoadReport(t *testing.T, dir string) loadReport {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	var r loadReport
	require.NoError(t, json.Unmarshal(raw, &r))
	for _, name := range []string{"report.md", "report.html"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Contains(t, string(b), r.Verdict, "%s shows the verdict", name)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), `<svg id="latency-over-time"`)
	assert.NotContains(t, string(html), "<script")
	return r
}

// waitExit waits until the collector ends on its own and returns its exit code.
func waitExit(t *testing.T, col *Collector, timeout time.Duration) int {
	t.Helper()
	select {
	case <-col.done:
	case <-time.After(timeout):
		t.Fatalf("collector did not stop by itself within %v\n%s", timeout, col.Output())
	}
	var exitErr *exec.ExitError
	if errors.As(col.err, &exitErr) {
		return exitErr.ExitCode()
	}
	require.NoError(t, col.err)
	return 0
}

// TestLoadReportFromLoadgen runs builtin:load-report as shipped: llm_loadgen
// generates a short bounded synthetic run, llm_metrics derives the GenAI
// metrics, and load_report writes the three files; the collector stops by
// itself when the run is over and its exit status follows the verdict.
func TestLoadReportFromLoadgen(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OTELCOL_LLM_REPORT_DIR", dir)
	t.Setenv("OTELCOL_LLM_REPORT_INTERVAL", "1s")
	t.Setenv("OTELCOL_LLM_REPORT_STOP_WHEN_IDLE", "3s")
	t.Setenv("OTELCOL_LLM_REPORT_EXIT_ON", "fail")
	t.Setenv("OTELCOL_LLM_LOADGEN_REQUESTS", "150")
	t.Setenv("OTELCOL_LLM_LOADGEN_RATE", "50")
	col := StartCollector(t, "--config", "builtin:load-report")
	code := waitExit(t, col, 90*time.Second)

	r := readLoadReport(t, dir)
	assert.True(t, r.Final, "the shutdown report is the last one written")
	assert.Contains(t, r.Run.Source, "spans")
	assert.GreaterOrEqual(t, r.Total.Requests, int64(150), "every generated request (retries included) is counted")
	require.NotNil(t, r.Total.TTFT, "streamed requests have a TTFT")
	assert.Positive(t, r.Total.TTFT.Count)
	assert.Contains(t, r.Total.ITLSource, "chunk_events", "ITL comes from the per-chunk span events")
	require.Contains(t, []string{"PASS", "WARN", "FAIL"}, r.Verdict)
	if r.Verdict == "FAIL" {
		assert.Equal(t, 1, code, "a FAIL verdict exits with status 1:\n%s", col.Output())
	} else {
		assert.Equal(t, 0, code, "verdict %s exits with status 0:\n%s", r.Verdict, col.Output())
	}
	assert.Contains(t, col.Output(), "run finished")
}

// overOTLP returns the arguments that run builtin:load-report with OTLP as
// the only traces input and the given load_report SLOs (YAML flow list).
func overOTLP(slos string) []string {
	return []string{"--config", "builtin:load-report",
		"--config", "yaml:service::pipelines::traces::receivers: [otlp]",
		"--config", "yaml:exporters::load_report::slos: " + slos}
}

// TestLoadReportGateOverOTLP sends recorded GenAI spans over OTLP. With an
// objective they miss, stopping the collector (SIGTERM) writes a FAIL report
// and the process exits with status 1; with objectives they meet, the
// collector stops by itself when idle and exits with status 0.
func TestLoadReportGateOverOTLP(t *testing.T) {
	t.Run("fail", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("OTELCOL_LLM_REPORT_DIR", dir)
		t.Setenv("OTELCOL_LLM_REPORT_STOP_WHEN_IDLE", "0s")
		col := StartCollector(t, overOTLP(`[{name: e2e_p50, quantity: e2e, percentile: 50, pass_below: 0.001, fail_above: 0.01}]`)...)
		col.WaitHealthy(t, 30*time.Second)
		sendRecordedGenAISpans(t, fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort))
		err := col.Stop(t, 30*time.Second)
		var exitErr *exec.ExitError
		require.True(t, errors.As(err, &exitErr), "expected a non-zero exit, got %v\n%s", err, col.Output())
		assert.Equal(t, 1, exitErr.ExitCode())
		assert.Contains(t, col.Output(), "verdict gate failed")
		r := readLoadReport(t, dir)
		assert.Equal(t, "FAIL", r.Verdict)
		assert.Positive(t, r.Total.Requests)
	})
	t.Run("pass", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("OTELCOL_LLM_REPORT_DIR", dir)
		t.Setenv("OTELCOL_LLM_REPORT_STOP_WHEN_IDLE", "2s")
		col := StartCollector(t, overOTLP(`[{name: e2e_p50, quantity: e2e, percentile: 50, pass_below: 60}]`)...)
		col.WaitHealthy(t, 30*time.Second)
		sendRecordedGenAISpans(t, fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort))
		code := waitExit(t, col, 60*time.Second)
		assert.Equal(t, 0, code, col.Output())
		r := readLoadReport(t, dir)
		assert.Equal(t, "PASS", r.Verdict)
		assert.True(t, r.Final)
		assert.True(t, strings.Contains(col.Output(), "no request for exit.stop_when_idle"), col.Output())
	})
}
