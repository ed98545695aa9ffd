package live

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
			cfg := liveConfig(replayServer(t, string(body)), 1, 10)
			cfg.Live.IncludeUsage = false
			run := startLive(t, cfg)
			spans := run.spans(t, 1)
			run.stop(t)
			sp := spans[0]
			require.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
			a := sp.Attributes().AsRaw()
			assert.Equal(t, w.chunks, a[attrLiveChunks])
			assert.Equal(t, w.chunks, a[genai.AttrUsageOutputTokens], "no usage: one token per content chunk")
			assert.Equal(t, w.responseID, a[attrResponseID])
			assert.Equal(t, w.model, a[genai.AttrResponseModel])
			assert.Positive(t, attrF(sp, attrLiveTTFT))
		})
	}
}
