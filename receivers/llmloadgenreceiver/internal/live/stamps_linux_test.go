//go:build linux

package live

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// Two content events that reach the client in one segment share a kernel
// receive time: the span counts them (the first one's time is only an
// upper bound), and their gap is 0 while the next one's is the real one.
func TestLiveSharedKernelStamps(t *testing.T) {
	chunk := func(s string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}` + "\n\n"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i, part := range []string{chunk("a") + chunk("b"), chunk("c"),
			`data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"} {
			if i > 0 {
				time.Sleep(30 * time.Millisecond)
			}
			if _, err := w.Write([]byte(part)); err != nil {
				return
			}
			_ = rc.Flush()
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	cfg := liveConfig("http://"+ln.Addr().String(), 1, 10)
	cfg.Live.IncludeUsage = false
	cfg.Live.Transport = config.TransportRaw
	cfg.Live.KernelTimestamps = true
	cfg.Live.ChunkEvents = config.ChunkEventsAll
	run := startLive(t, cfg)
	sp := run.spans(t, 1)[0]
	run.stop(t)
	require.Empty(t, attrStr(sp, genai.AttrErrorType), attrStr(sp, attrLiveErrorDetail))
	require.Equal(t, genai.TimestampsKernel, attrStr(sp, genai.AttrLoadgenTimestamps))
	shared, ok := sp.Attributes().Get(genai.AttrLoadgenSharedStamps)
	require.True(t, ok, "the shared stamp is counted")
	assert.EqualValues(t, 1, shared.Int())
	var chunks []time.Time
	for i := 0; i < sp.Events().Len(); i++ {
		if e := sp.Events().At(i); e.Name() == genai.EventLoadgenLiveChunk {
			chunks = append(chunks, e.Timestamp().AsTime())
		}
	}
	require.Len(t, chunks, 3)
	assert.Equal(t, chunks[0], chunks[1], "one segment, one time")
	assert.GreaterOrEqual(t, chunks[2].Sub(chunks[1]), 25*time.Millisecond)
}
