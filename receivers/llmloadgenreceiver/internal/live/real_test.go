package live

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestLiveRealStreams replays real servers' streams (testdata/real/streams,
// sources in SOURCES.md) and checks what live mode makes of them.
func TestLiveRealStreams(t *testing.T) {
	want := map[string]struct {
		chunks     int64
		responseID string
		model      string
	}{
		// Azure's first chunk: empty choices, id and model (prompt filter
		// results); the id appears with the second.
		"azure-openai-gpt-4o-2025-06-quarkiverse.sse": {3, "chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j", "gpt-4o-2024-08-06"},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "real", "streams", "*.sse"))
	require.NoError(t, err)
	require.Len(t, files, len(want), "every stream has its expectation")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			w, ok := want[filepath.Base(f)]
			require.True(t, ok)
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			url := replayServer(t, string(body))
			for _, tr := range transports {
				cfg := liveConfig(url, 1, 10)
				cfg.Live.IncludeUsage = false
				cfg.Live.Transport = tr
				run := startLive(t, cfg)
				spans := run.spans(t, 1)
				run.stop(t)
				sp := spans[0]
				require.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
				a := sp.Attributes().AsRaw()
				assert.Equal(t, w.chunks, a[attrLiveChunks], tr)
				assert.Equal(t, w.chunks, a[genai.AttrUsageOutputTokens], "no usage: one token per content chunk")
				assert.Equal(t, w.responseID, a[attrResponseID])
				assert.Equal(t, w.model, a[genai.AttrResponseModel])
				assert.Positive(t, attrF(sp, attrLiveTTFT))
			}
		})
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
