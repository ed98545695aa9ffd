package loadreportexporter

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// sweepRun is a stepped-rate run (5, 10, 20, 40 req/s for 5 s each) whose
// latency takes off at the last step, with a few errors.
func sweepRun() ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	at := time.Duration(0)
	n := 0
	for _, rate := range []float64{5, 10, 20, 40} {
		step := time.Duration(float64(time.Second) / rate)
		ttft := time.Duration((0.2 + 0.01*rate) * float64(time.Second))
		if rate == 40 {
			ttft = 2 * time.Second
		}
		for end := at + 5*time.Second; at < end; at += step {
			r := req{at: at, dur: ttft + time.Second, ttft: ttft, out: 50, in: 100, target: "vllm", model: "llama", scenario: "sweep", rate: rate,
				chunks: []time.Duration{ttft, ttft + 15*time.Millisecond, ttft + 40*time.Millisecond}}
			switch {
			case n%50 == 49:
				r.errType = "503"
			case n%70 == 69:
				r.errType = "cancelled"
			}
			addReq(ss, r)
			n++
		}
	}
	return td
}

var chartIDs = []string{"latency-over-time", "rate", "ttft-histogram", "itl-histogram", "load-curve", "errors"}

// consoleProblem matches what headless Chromium logs for console messages,
// uncaught exceptions, blocked or failed loads.
var consoleProblem = regexp.MustCompile(`(?i)CONSOLE[:(]|Uncaught|Failed to load resource|Refused to|net::ERR_`)

func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed but CI is set: the HTML report must be checked in CI (apt-get install -y chromium)")
	}
	t.Skip("chromium not installed (apt-get install -y chromium); skipping the headless-browser check outside CI")
	return ""
}

// runChromium loads page headless and returns stdout and stderr.
func runChromium(t *testing.T, bin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	return stdout.String(), stderr.String()
}

func consoleProblems(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if consoleProblem.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// writeSweepReport runs the exporter on the sweep into dir, as the collector
// would, and returns the path of report.html; requests.csv lies next to it.
func writeSweepReport(t *testing.T, dir string) string {
	cfg := testConfig(t)
	cfg.Directory = dir
	e, err := newReportExporter(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	e.now = fixedNow
	e.st.now = fixedNow
	var console bytes.Buffer
	e.console = &console
	cfg.PrintSummary = true
	require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, e.consumeTraces(context.Background(), sweepRun()))
	require.NoError(t, e.shutdown(context.Background()))
	var r Report
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &r))
	require.NotNil(t, r.LoadCurve, "a four-step sweep has a load curve")
	require.NotNil(t, r.LoadCurve.Knee)
	require.Contains(t, console.String(), "report: "+filepath.Join(dir, "report.html"))
	return filepath.Join(dir, "report.html")
}

// TestHTMLSelfContained checks, without a browser, that the page loads
// nothing from elsewhere and carries every chart with drawn content.
func TestHTMLSelfContained(t *testing.T) {
	raw, err := os.ReadFile(writeSweepReport(t, t.TempDir()))
	require.NoError(t, err)
	html := string(raw)
	for _, banned := range []string{"<script", "<link", "@import", "url(", "src=", `href="http`, `href="/`, `href="file:`} {
		assert.NotContains(t, html, banned)
	}
	// The only links are to the files next to the page.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(html, -1) {
		assert.Contains(t, []string{"report.json", "report.md", "report.html", "requests.csv"}, m[1])
	}
	for _, id := range chartIDs {
		i := strings.Index(html, `<svg id="`+id+`"`)
		require.GreaterOrEqual(t, i, 0, id)
		svg := html[i : i+strings.Index(html[i:], "</svg>")]
		assert.NotContains(t, svg, `class="empty"`, "%s has data", id)
		assert.Regexp(t, `class="(series|bar)"`, svg, "%s draws a series or bars", id)
	}
	assert.Contains(t, html, `class="knee"`)
}

// TestHTMLInChromium opens report.html in headless Chromium: no console
// errors, the dumped DOM holds every chart with drawn content, and a
// screenshot is written (and is not blank).
func TestHTMLInChromium(t *testing.T) {
	bin := chromiumPath(t)
	dir := t.TempDir()
	page := writeSweepReport(t, dir)

	// The detector itself must catch a page with a console error.
	bad := filepath.Join(dir, "bad.html")
	require.NoError(t, os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>`), 0o644))
	_, stderr := runChromium(t, bin, "--dump-dom", "file://"+bad)
	require.NotEmpty(t, consoleProblems(stderr), "the console-error detector must see console.error; stderr:\n%s", stderr)

	dom, stderr := runChromium(t, bin, "--dump-dom", "file://"+page)
	assert.Empty(t, consoleProblems(stderr), "console problems:\n%s", stderr)
	for _, id := range chartIDs {
		re := regexp.MustCompile(`(?s)<svg id="` + id + `".*?</svg>`)
		svg := re.FindString(dom)
		require.NotEmpty(t, svg, "chart %s missing from the rendered DOM", id)
		assert.Regexp(t, `<(path class="series" d="M[^"]+L|rect class="bar")`, svg, "chart %s is empty", id)
	}
	assert.Contains(t, dom, `id="verdict"`)
	// The target rate is drawn on the rate chart, as a line of its own.
	rate := regexp.MustCompile(`(?s)<svg id="rate".*?</svg>`).FindString(dom)
	assert.Regexp(t, `<path class="series target" d="M[^"]+L`, rate, "the rate chart draws the target line")
	// The summary block opens the page: verdict, reason, the key number.
	summary := regexp.MustCompile(`(?s)<section id="summary".*?</section>`).FindString(dom)
	require.NotEmpty(t, summary, "summary block missing")
	assert.Less(t, strings.Index(dom, `<section id="summary"`), strings.Index(dom, `<table id="slos"`), "the summary comes before the SLO table")
	assert.Regexp(t, `id="summary-reason">[a-z_0-9]+ is [0-9.,]+ (ms|s|%) \(PASS`, summary)
	assert.Regexp(t, `id="key-value" class="key-value">[0-9.,]+ (ms|s)<`, summary)
	assert.Contains(t, summary, "bends upwards at", "the knee is named")
	// The page links the per-request CSV, which holds one row per request.
	assert.Contains(t, dom, `<a href="requests.csv">requests.csv</a>`)
	checkRequestsCSV(t, filepath.Join(dir, "requests.csv"), sweepRun().SpanCount())

	shotDir := os.Getenv("LOAD_REPORT_SCREENSHOT_DIR")
	if shotDir == "" {
		shotDir = filepath.Join(os.TempDir(), "otelcol-llm-load-report-test")
	}
	require.NoError(t, os.MkdirAll(shotDir, 0o755))
	shot := filepath.Join(shotDir, "report.png")
	_ = os.Remove(shot)
	_, stderr = runChromium(t, bin, "--screenshot="+shot, "--window-size=1280,3000", "--hide-scrollbars", "file://"+page)
	assert.Empty(t, consoleProblems(stderr), "console problems:\n%s", stderr)
	f, err := os.Open(shot)
	require.NoError(t, err, "screenshot not written")
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	colors := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bb, _ := img.At(x, y).RGBA()
			colors[r>>8<<16|g>>8<<8|bb>>8] = true
		}
	}
	assert.Greater(t, len(colors), 20, "the screenshot looks blank")
	t.Logf("screenshot: %s (%dx%d)", shot, b.Dx(), b.Dy())
}

// checkRequestsCSV reads requests.csv as a spreadsheet would: the header is
// the documented column set, and there is one row per request, each with a
// start time, an outcome and, for successes, a TTFT and an E2E.
func checkRequestsCSV(t *testing.T, path string, requests int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	var names []string
	for _, c := range csvColumns {
		names = append(names, c.name)
	}
	require.Equal(t, names, recs[0])
	require.Len(t, recs[1:], requests)
	col := map[string]int{}
	for i, n := range recs[0] {
		col[n] = i
	}
	outcomes := map[string]int{}
	for _, r := range recs[1:] {
		_, err := time.Parse(time.RFC3339Nano, r[col["start_time"]])
		require.NoError(t, err)
		outcomes[r[col["outcome"]]]++
		if r[col["outcome"]] == "ok" {
			assert.NotEmpty(t, r[col["ttft_s"]])
			assert.NotEmpty(t, r[col["e2e_s"]])
			assert.NotEmpty(t, r[col["target_rps"]])
		} else {
			assert.NotEmpty(t, r[col["error_type"]])
		}
	}
	assert.Positive(t, outcomes["ok"])
	assert.Positive(t, outcomes["error"])
	assert.Positive(t, outcomes["cancelled"])
}
