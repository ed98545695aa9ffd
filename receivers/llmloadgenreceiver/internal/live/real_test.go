package live

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// replayServer answers every request with body, one SSE event per write
// and flush, over real HTTP on loopback.
func replayServer(t *testing.T, body string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, ev := range strings.SplitAfter(body, "\n\n") {
			if ev == "" {
				continue
			}
			if _, err := w.Write([]byte(ev)); err != nil {
				return
			}
			_ = rc.Flush()
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// realStream is one row of testdata/real/streams/expect.tsv: what a real
// stream carries, counted from its events apart from the client, and the
// outcome a run must report ("-": none).
type realStream struct {
	file                               string
	chunks, reasoning, output, input   int64
	reasoningTokens, cachedTokens      int64
	finish, responseID, model, errType string
}

func readRealStreams(t *testing.T) []realStream {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "real", "streams", "expect.tsv"))
	require.NoError(t, err)
	var out []realStream
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		require.Len(t, f, 11, line)
		n := make([]int64, 6)
		for i := range n {
			if f[i+1] == "-" {
				n[i] = -1
				continue
			}
			n[i], err = strconv.ParseInt(f[i+1], 10, 64)
			require.NoError(t, err, line)
		}
		out = append(out, realStream{f[0], n[0], n[1], n[2], n[3], n[4], n[5], dash(f[7]), dash(f[8]), dash(f[9]), dash(f[10])})
	}
	return out
}

func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// TestLiveRealStreams replays real servers' and APIs' streams
// (testdata/real/streams, sources in SOURCES.md) on both transports and
// checks what live mode makes of each against expect.tsv. A .sse file is
// the body as sent; a .jsonl file holds the events' data as a recorder
// kept them, one per line, and is sent framed as SSE events with data:
// [DONE] after them.
func TestLiveRealStreams(t *testing.T) {
	want := readRealStreams(t)
	var files []string
	for _, ext := range []string{"*.sse", "*.jsonl"} {
		m, err := filepath.Glob(filepath.Join("testdata", "real", "streams", ext))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Len(t, files, len(want), "every stream has its expectation")
	for _, w := range want {
		t.Run(w.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "real", "streams", w.file))
			require.NoError(t, err)
			body := string(raw)
			if strings.HasSuffix(w.file, ".jsonl") {
				body = frameEvents(body)
			}
			url := replayServer(t, body)
			for _, tr := range transports {
				cfg := liveConfig(url, 1, 10)
				cfg.Live.IncludeUsage = false
				cfg.Live.Transport = tr
				run := startLive(t, cfg)
				spans := run.spans(t, 1)
				run.stop(t)
				checkRealStream(t, w, tr, spans[0])
			}
		})
	}
}

// frameEvents makes an SSE body of one event per line of data.
func frameEvents(lines string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		b.WriteString("data: " + l + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

func checkRealStream(t *testing.T, w realStream, tr string, sp ptrace.Span) {
	t.Helper()
	a := sp.Attributes().AsRaw()
	assert.Equal(t, w.errType, attrStr(sp, genai.AttrErrorType), "%s: %s", tr, attrStr(sp, attrLiveErrorDetail))
	assert.Equal(t, w.chunks, a[attrLiveChunks], tr)
	if w.reasoning > 0 {
		assert.Equal(t, w.reasoning, a[attrLiveReasoning], tr)
	} else {
		assert.NotContains(t, a, attrLiveReasoning, tr)
	}
	assert.Equal(t, w.output, a[genai.AttrUsageOutputTokens], "%s: usage when the stream had it, else one token per content chunk", tr)
	if w.input >= 0 {
		assert.Equal(t, w.input, a[genai.AttrUsageInputTokens], tr)
	}
	for attr, n := range map[string]int64{genai.AttrUsageReasoningOutputTokens: w.reasoningTokens, genai.AttrUsageCacheReadInputTokens: w.cachedTokens} {
		if n > 0 {
			assert.Equal(t, n, a[attr], "%s: %s", tr, attr)
		} else {
			assert.NotContains(t, a, attr, tr)
		}
	}
	assert.Equal(t, w.responseID, attrStr(sp, attrResponseID), tr)
	assert.Equal(t, w.model, attrStr(sp, genai.AttrResponseModel), tr)
	if w.finish != "" {
		assert.Equal(t, []any{w.finish}, a[genai.AttrFinishReasons], tr)
	}
	if w.chunks > 0 {
		assert.Positive(t, attrF(sp, attrLiveTTFT), tr)
	} else {
		assert.NotContains(t, a, attrLiveTTFT, "%s: no content, no TTFT", tr)
	}
}

// A 100,000-token prompt goes out whole and an event of 3.5 MB (under the 4
// MiB event limit) streams through on both transports; the server counts
// the request body it received.
func TestLiveLongPromptAndLargeEvent(t *testing.T) {
	big := strings.Repeat("token ", 3<<20/6+1<<19/6)
	chunk := func(content, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` +
			content + `"},"finish_reason":` + f + "}]}\n\n"
	}
	var got atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, ev := range []string{chunk("a", ""), chunk(big, ""), chunk("", "length"), "data: [DONE]\n\n"} {
			_, _ = io.WriteString(w, ev)
			_ = rc.Flush()
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			cfg := liveConfig("http://"+ln.Addr().String(), 1, 10)
			cfg.Live.IncludeUsage = false
			cfg.Live.Transport = tr
			cfg.Live.Prompt.InputTokens.Value = 100000
			cfg.Live.Prompt.ContextWindow = 131072
			run := startLive(t, cfg)
			spans := run.spans(t, 1)
			run.stop(t)
			sp := spans[0]
			require.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
			assert.EqualValues(t, 2, sp.Attributes().AsRaw()[attrLiveChunks])
			assert.Greater(t, got.Load(), int64(350_000), "the request body of a 100,000-token prompt (~4 bytes per token)")
			assert.InDelta(t, 100000, sp.Attributes().AsRaw()[attrLivePromptToks], 1000)
		})
	}
}
