//go:build e2e

package e2e

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errorLine matches what a run that went wrong prints: a log record at error
// level or above (the collector's console encoder writes the level between
// tabs), a Go stack trace, a panic, or the collector's fatal-status line.
var errorLine = regexp.MustCompile(`(?m)\t(error|dpanic|panic|fatal)\t|^goroutine \d+ \[|^panic:|Asynchronous error received|\.go:\d+ \+0x`)

// progressLine is one of llm_loadgen's console progress lines.
var progressLine = regexp.MustCompile(`(?m)^ +\d+s  offered [0-9.,]+/s  sent [0-9.,]+/s  done [0-9.,]+/s  in flight \d+  TTFT p50 \S+( \S+)? p95 \S+( \S+)?  ITL p50 \S+( \S+)?  errors \d+`)

// TestDefaultLoadTest runs builtin:default as `make run` does — the binary,
// the compiled-in config, no other program, no file — and checks what a new
// user sees: a start line, progress lines, the verdict table and the report's
// path as the last lines; an exit status that is the verdict's; the report
// files with one CSV row per request; and, on a passing run, no error line.
func TestDefaultLoadTest(t *testing.T) {
	dir := t.TempDir()
	mockPort := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "--config", "builtin:default")
	cmd.Dir = t.TempDir() // nothing from the repository is needed
	cmd.Env = append(os.Environ(),
		"OTELCOL_LLM_MOCK_PORT="+strconv.Itoa(mockPort),
		"OTELCOL_LLM_TARGET_URL=http://127.0.0.1:"+strconv.Itoa(mockPort)+"/v1",
		"OTELCOL_LLM_REPORT_DIR="+dir,
		"OTELCOL_LLM_HEALTH_PORT="+strconv.Itoa(freePort(t)),
		"OTELCOL_LLM_METRICS_PORT="+strconv.Itoa(freePort(t)),
	)
	start := time.Now()
	raw, err := cmd.CombinedOutput()
	out := string(raw)
	require.NoError(t, ctx.Err(), "builtin:default did not finish within 6 minutes:\n%s", out)
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		require.True(t, ok, "running builtin:default: %v", err)
		code = exitErr.ExitCode()
	}
	t.Logf("builtin:default ran %v, exit status %d:\n%s", time.Since(start).Round(time.Second), code, out)

	var r struct {
		Verdict string `json:"verdict"`
		Summary struct {
			Reason string `json:"reason"`
		} `json:"summary"`
		SLOs []struct {
			Name string `json:"name"`
		} `json:"slos"`
		NotEvaluated []string `json:"slos_not_evaluated"`
		Total        struct {
			Requests  int64  `json:"requests"`
			Successes int64  `json:"successes"`
			ITLSource string `json:"itl_source"`
		} `json:"total"`
		Timeline struct {
			Points []struct {
				TargetRPS *float64 `json:"target_rps"`
			} `json:"points"`
		} `json:"timeline"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err, "report.json")
	require.NoError(t, json.Unmarshal(data, &r))

	// The exit status is the verdict's; a run that is not FAIL is quiet.
	if r.Verdict == "FAIL" {
		assert.Equal(t, 1, code, "a FAIL verdict exits 1")
		assert.Contains(t, out, "verdict gate failed")
	} else {
		assert.Equal(t, 0, code, "verdict %s exits 0", r.Verdict)
		assert.Empty(t, errorLine.FindAllString(out, -1), "a passing run prints no error line and no stack trace")
	}
	assert.Contains(t, []string{"PASS", "WARN"}, r.Verdict, "the default run ramps to the mock's capacity and should not fail (%s)", r.Summary.Reason)

	// What the console shows, in order: start, progress, end, verdict, path.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines)
	assert.Contains(t, out, "llm_loadgen: live load against http://127.0.0.1:"+strconv.Itoa(mockPort)+"/v1/chat/completions, model mock-llm: poisson 2.00")
	progress := progressLine.FindAllString(out, -1)
	assert.GreaterOrEqual(t, len(progress), 10, "a progress line every 5 s over a minute")
	assert.Regexp(t, `llm_loadgen: run finished: [0-9,]+ requests in`, out)
	assert.Contains(t, out, "\nload_report: "+r.Verdict+" — "+r.Summary.Reason+"\n")
	for _, s := range r.SLOs {
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(s.Name)+` +\S`, out, "SLO table row %s", s.Name)
	}
	assert.Equal(t, []string{"span_loss"}, r.NotEvaluated, "no span_guard in this pipeline: no span_loss row")
	assert.NotRegexp(t, `(?m)^  span_loss `, out)
	assert.Equal(t, "  report: "+filepath.Join(dir, "report.html")+" (also report.json, report.md, requests.csv)", lines[len(lines)-1],
		"the report's path is the last line")

	// The report: a real run's size, the target line, one CSV row per request.
	assert.Greater(t, r.Total.Requests, int64(600), "a minute of 2 → 28 req/s")
	assert.Greater(t, r.Total.Successes, r.Total.Requests*99/100)
	assert.Equal(t, "chunk_events", r.Total.ITLSource, "ITL per gap between the chunks live mode read, not the mean TPOT")
	withTarget := 0
	for _, p := range r.Timeline.Points {
		if p.TargetRPS != nil {
			withTarget++
		}
	}
	assert.Greater(t, withTarget, len(r.Timeline.Points)/2, "the timeline carries the offered rate")
	for _, f := range []string{"report.html", "report.md"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Positive(t, st.Size(), f)
	}
	f, err := os.Open(filepath.Join(dir, "requests.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.EqualValues(t, r.Total.Requests, len(rows)-1, "requests.csv: a header and one row per request")
}
