package loadreportexporter

import (
	"bytes"
	"context"
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

func writeSweepHTML(t *testing.T, dir string) string {
	cfg := testConfig(t)
	st := newTestState(cfg)
	st.consumeTraces(sweepRun())
	r := st.build(true)
	require.NotNil(t, r.LoadCurve, "a four-step sweep has a load curve")
	require.NotNil(t, r.LoadCurve.Knee)
	rd, err := newRenderer(cfg.CancelledErrorTypes)
	require.NoError(t, err)
	html, err := rd.render(FormatHTML, r)
	require.NoError(t, err)
	p := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(p, html, 0o644))
	return p
}

// TestHTMLSelfContained checks, without a browser, that the page loads
// nothing from elsewhere and carries every chart with drawn content.
func TestHTMLSelfContained(t *testing.T) {
	raw, err := os.ReadFile(writeSweepHTML(t, t.TempDir()))
	require.NoError(t, err)
	html := string(raw)
	for _, banned := range []string{"<script", "<link", "@import", "url(", "src=", "href="} {
		assert.NotContains(t, html, banned)
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
	page := writeSweepHTML(t, dir)

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
