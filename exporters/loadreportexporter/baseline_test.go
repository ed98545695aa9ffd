package loadreportexporter

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// runOf builds the final report of n successful requests whose TTFT and
// duration are scaled by slow.
func runOf(t *testing.T, cfg *Config, slow float64, baseline *Report) *Report {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 200; i++ {
		ttft := time.Duration(float64(100+i%50) * slow * float64(time.Millisecond))
		addReq(ss, req{at: time.Duration(i) * 50 * time.Millisecond, dur: ttft + 500*time.Millisecond, ttft: ttft, out: 50, in: 100,
			target: "t", model: "m", scenario: "s"})
	}
	st := newTestState(cfg)
	st.baseline = baseline
	st.consumeTraces(td)
	return st.build(true)
}

// writeReport writes r as a report.json and returns its path.
func writeReport(t *testing.T, r *Report) string {
	t.Helper()
	rd, err := newRenderer(createDefaultConfig().CancelledErrorTypes)
	require.NoError(t, err)
	js, err := rd.render(FormatJSON, r)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, os.WriteFile(p, js, 0o600))
	return p
}

// TestBaselineRegressed: a run whose TTFT doubled is REGRESSED on TTFT
// against the normal run's report.json and fails; the same run against
// itself is SAME and keeps its verdict; a faster run is IMPROVED.
func TestBaselineRegressed(t *testing.T) {
	cfg := testConfig(t)
	normal := runOf(t, cfg, 1, nil)
	path := writeReport(t, normal)
	base, err := loadBaseline(path)
	require.NoError(t, err)
	cfg.Baseline.Path = path

	slow := runOf(t, cfg, 2, base)
	require.NotNil(t, slow.Baseline)
	assert.Equal(t, BaselineRegressed, slow.Baseline.Verdict)
	assert.Contains(t, slow.Baseline.Regressed, "ttft_p95")
	assert.NotContains(t, slow.Baseline.Regressed, "error_rate")
	assert.Equal(t, VerdictFail, slow.Verdict, "baseline.on_regression fail")
	assert.True(t, atLeast(slow.Verdict, "fail"), "exit.on_verdict fail would stop the collector with status 1")
	var ttft BaselineDelta
	for _, d := range slow.Baseline.Metrics {
		if d.Metric == "ttft_p95" {
			ttft = d
		}
	}
	require.NotNil(t, ttft.Relative)
	assert.InDelta(t, 1.0, *ttft.Relative, 0.05, "TTFT p95 doubled")

	same := runOf(t, cfg, 1, base)
	assert.Equal(t, BaselineSame, same.Baseline.Verdict)
	assert.Equal(t, normal.Verdict, same.Verdict)
	for _, d := range same.Baseline.Metrics {
		assert.Equal(t, BaselineSame, d.Verdict, d.Metric)
	}

	fast := runOf(t, cfg, 0.5, base)
	assert.Equal(t, BaselineImproved, fast.Baseline.Verdict)
	assert.Equal(t, normal.Verdict, fast.Verdict)

	cfg.Baseline.OnRegression = "warn"
	warned := runOf(t, cfg, 2, base)
	assert.Equal(t, VerdictWarn, warned.Verdict)

	// The comparison renders in every format.
	rd, err := newRenderer(createDefaultConfig().CancelledErrorTypes)
	require.NoError(t, err)
	for _, f := range []string{FormatMarkdown, FormatHTML} {
		out, err := rd.render(f, slow)
		require.NoError(t, err, f)
		assert.Contains(t, string(out), "REGRESSED", f)
		assert.Contains(t, string(out), "ttft_p95", f)
	}
	sum := summarize(slow)
	assert.Contains(t, sum.Notes[len(sum.Notes)-1], "baseline: REGRESSED against "+path+": ttft_p50 +")
	assert.Equal(t, "baseline", sum.DecidedBy)
	assert.Contains(t, sum.Reason, "regressed against the baseline (ttft_p50, ttft_p95")
}

func TestBaselineErrors(t *testing.T) {
	_, err := loadBaseline(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorContains(t, err, "baseline.path: open ")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o600))
	_, err = loadBaseline(bad)
	assert.ErrorContains(t, err, "is not a load_report report.json")
	empty := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"total": {"requests": 0}}`), 0o600))
	_, err = loadBaseline(empty)
	assert.ErrorContains(t, err, "reports no requests")

	cfg := testConfig(t)
	cfg.Baseline = BaselineConfig{Path: "x", Tolerance: 0, OnRegression: "explode"}
	err = cfg.Validate()
	assert.ErrorContains(t, err, "baseline.tolerance: must be above 0 and at most 10")
	assert.ErrorContains(t, err, `baseline.on_regression: unknown value "explode"`)
}
