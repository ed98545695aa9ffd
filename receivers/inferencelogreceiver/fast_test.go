package inferencelogreceiver

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

// fastPair is the same preset with its fast parser and with the grammar
// alone.
type fastPair struct{ fast, grammar *presetPipeline }

func newFastPair(t testing.TB, name string) fastPair {
	return fastPair{buildPresetPipelineWith(t, name, true), buildPresetPipelineWith(t, name, false)}
}

// check parses line both ways and requires the same record.
func (fp fastPair) check(t testing.TB, line string) {
	t.Helper()
	a := fp.fast.parse(t, line) // a new entry per parse: safe to keep
	b := fp.grammar.parse(t, line)
	requireSameEntry(t, line, b, a)
}

func requireSameEntry(t testing.TB, line string, want, got *entry.Entry) {
	t.Helper()
	require.Equal(t, want.Body, got.Body, "line %q: body", line)
	require.Equal(t, want.Attributes, got.Attributes, "line %q: attributes", line)
	require.True(t, want.Timestamp.Equal(got.Timestamp), "line %q: timestamp %v, want %v", line, got.Timestamp, want.Timestamp)
	require.Equal(t, want.Severity, got.Severity, "line %q: severity", line)
	require.Equal(t, want.SeverityText, got.SeverityText, "line %q: severity text", line)
}

// realLines are the lines of the sample log and of the real excerpts of a
// preset, wrappers peeled as the receiver peels them.
func realLines(t testing.TB, name string) []string {
	t.Helper()
	files, err := filepath.Glob(testdataPath("real", name, "*.log"))
	require.NoError(t, err)
	files = append(files, testdataPath("logs", name+".log"))
	var lines []string
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, unwrap(strings.TrimRight(sc.Text(), " \t\r"), map[string]any{}))
		}
		require.NoError(t, sc.Err())
		require.NoError(t, fh.Close())
	}
	return lines
}

// vllmFastCases are lines at the edges of what the fast parser takes: it
// must give each the grammar's record or leave it to the grammar.
var vllmFastCases = []string{
	"INFO 11-29 17:41:30 [loggers.py:127] Engine 000: Avg prompt throughput: 1843.6 tokens/s, Avg generation throughput: 412.9 tokens/s, Running: 12 reqs, Waiting: 3 reqs, GPU KV cache usage: 37.5%, Prefix cache hit rate: 61.2%",
	"INFO 11-29 17:41:30 [loggers.py:127] Engine 000: Avg prompt throughput: 1843.6 tokens/s, Avg generation throughput: 412.9 tokens/s, Running: 12 reqs, Waiting: 3 reqs, GPU KV cache usage: 37.5%, Prefix cache hit rate: 61.2%, MM cache hit rate: 0.0%",
	"INFO 11-29 17:42:00 metrics.py:351] Avg prompt throughput: 955.2 tokens/s, Avg generation throughput: 120.4 tokens/s, Running: 8 reqs, Swapped: 2 reqs, Pending: 5 reqs, GPU KV cache usage: 98.7%, CPU KV cache usage: 4.1%.",
	"INFO 11-29 17:42:00 metrics.py:351] Avg prompt throughput: 955.2 tokens/s, Avg generation throughput: 120.4 tokens/s, Max iteration time: 12.0 ms, Running: 8 reqs, Swapped: 2 reqs, Pending: 5 reqs, GPU KV cache usage: 98.7%, CPU KV cache usage: 4.1%",
	"INFO 11-29 17:42:00 metrics.py:351] Avg prompt throughput: 1.2.3 tokens/s, Avg generation throughput: 120.4 tokens/s, Running: 8 reqs, Swapped: 2 reqs, Pending: 5 reqs, GPU KV cache usage: 98.7%, CPU KV cache usage: 4.1%",
	"INFO 11-29 17:42:00 metrics.py:351] Avg prompt throughput: . tokens/s, Avg generation throughput: 120.4 tokens/s, Running: 8 reqs, Swapped: 2 reqs, Pending: 5 reqs, GPU KV cache usage: 98.7%, CPU KV cache usage: 4.1%",
	"INFO 11-29 17:42:05 [metrics.py:1] Prefix cache hit rate: GPU: 12.5%, CPU: 0.0%",
	"INFO 11-29 17:42:05 [metrics.py:1] Engine core initialized in 3.2 s",
	"WARNING 02-29 00:00:00 [scheduler.py:1] Sequence group 7 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
	"ERROR 12-31 23:59:59 [engine.py:1] CUDA out of memory. Tried to allocate 2.00 GiB",
	"INFO 06-15 12:00:00 [logger.py:1] Received request cmpl-1: prompt: 'x'",
	"INFO 06-15 12:00:00 [logger.py:1] Received requests in a batch",
	"DEBUG 02-30 10:00:00 [x.py:1] a day that does not exist",
	"CRITICAL 13-01 10:00:00 [x.py:1] a month that does not exist",
	"INFO 01-01 24:00:00 [x.py:1] an hour that does not exist",
	"INFO 01-01 10:00:60 [x.py:1] a leap second",
	"NOTICE 01-01 10:00:00 [x.py:1] a level the router does not take",
	"INFO 01-01 10:00:00 [x.py:] no line number",
	"INFO 01-01 10:00:00 [x.py:12]no space",
	"INFO 01-01 10:00:00 [x.py:12] ",
	"INFO 01-01 10:00:00 [[x.py:12] doubled bracket",
	"INFO 01-01 10:00:00 x y.py:12] a space in the file name",
	"(APIServer pid=1) INFO 01-01 10:00:00 [x.py:12] a prefix left on (unwrap off)",
	"INFO 01-01 10:00:00 [x.py:12] first line\n  Traceback (most recent call last):\n  folded",
	"ERROR 11-29 17:41:30 [core.py:1] EngineCore failed to start.",
	"Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
	"Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.0%, CPU KV cache usage: 0.0%",
}

func TestVLLMFastParserMatchesGrammar(t *testing.T) {
	fp := newFastPair(t, "vllm")
	lines := append(realLines(t, "vllm"), vllmFastCases...)
	taken := 0
	for _, line := range lines {
		fp.check(t, line)
		e := fp.fast.out[0]
		if _, failed := e.Attributes[attrParseError]; !failed && strings.HasPrefix(line, "INFO ") {
			taken++
		}
	}
	assert.Positive(t, taken)
}

// TestVLLMFastParserTakesHotLines keeps the fast parser honest: the lines it
// exists for are parsed by it, not handed back to the grammar.
func TestVLLMFastParserTakesHotLines(t *testing.T) {
	p, err := loadPreset("vllm", presetParams{Location: "UTC"})
	require.NoError(t, err)
	parse, err := newVLLMFast(componenttest.NewNopTelemetrySettings(), p)
	require.NoError(t, err)
	for _, line := range vllmFastCases[:3] {
		e := entry.New()
		e.Body = line
		require.True(t, parse(e), "fast parser takes %q", line)
		assert.Equal(t, "vllm.stats", e.Attributes[attrEventName])
		assert.Contains(t, e.Attributes, "vllm.gpu_cache_usage_perc")
	}
	for _, line := range vllmFastCases[3:6] {
		e := entry.New()
		e.Body = line
		require.False(t, parse(e), "fast parser leaves %q to the grammar", line)
		assert.Equal(t, line, e.Body, "and leaves it untouched")
		assert.Empty(t, e.Attributes)
	}
}

// FuzzVLLMFastParser: for any line, the fast parser and the grammar give the
// same record.
func FuzzVLLMFastParser(f *testing.F) {
	for _, l := range append(realLines(f, "vllm"), vllmFastCases...) {
		f.Add(l)
	}
	fp := newFastPair(f, "vllm")
	f.Fuzz(func(t *testing.T, line string) { fp.check(t, line) })
}

// The fold's header checks agree with the presets' patterns: a line that
// passes a preset's header check is never a continuation by its pattern
// (the check only saves the pattern's cost), on the real lines and the
// samples, and the check takes the usual lines.
func TestRecordHeadersAgreeWithPatterns(t *testing.T) {
	for name, header := range recordHeaders {
		p, err := loadPreset(name, presetParams{Location: "UTC"})
		require.NoError(t, err)
		taken := 0
		for _, line := range append(realLines(t, name), vllmFastCases...) {
			line = unwrap(line, map[string]any{})
			if header(line) {
				taken++
				assert.False(t, p.continues(line), "%s: %q", name, line)
			}
		}
		assert.Greater(t, taken, 100, name)
	}
}

// FuzzRecordHeader: for any line, a header line is no continuation.
func FuzzRecordHeader(f *testing.F) {
	for _, l := range append(realLines(f, "vllm"), vllmFastCases...) {
		f.Add(l)
	}
	p, err := loadPreset("vllm", presetParams{Location: "UTC"})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, line string) {
		if recordHeaders["vllm"](line) && p.continues(line) {
			t.Fatalf("header line %q is a continuation by the pattern", line)
		}
	})
}
