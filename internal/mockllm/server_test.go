package mockllm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/otelcol-llm/otelcol-llm/internal/sse"
)

func TestMain(m *testing.M) {
	if helperMain() {
		return
	}
	goleak.VerifyTestMain(m)
}

func startServer(t testing.TB, mutate func(*Config), opts ...Option) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.Jitter, cfg.OutputTokens, cfg.OutputJitter = 20*time.Millisecond, 2*time.Millisecond, 0, 8, 0
	cfg.StallDuration, cfg.SlowHeaders, cfg.RetryAfter = 300*time.Millisecond, 100*time.Millisecond, 2*time.Second
	cfg.Seed = 1
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg, opts...)
	require.NoError(t, err)
	require.NoError(t, s.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func post(t testing.TB, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type streamResult struct {
	chunks   []sse.Chunk
	raw      []string
	done     bool
	err      error
	eventErr error
}

func readStream(body io.Reader) streamResult {
	var out streamResult
	rd := sse.NewReader(body, 0)
	for i := 0; i < 10000; i++ {
		ev, err := rd.Next()
		if err != nil {
			out.err = err
			return out
		}
		out.raw = append(out.raw, string(ev.Data))
		if sse.IsDone(ev.Data) {
			out.done = true
			continue
		}
		var c sse.Chunk
		if err := sse.DecodeChunk(ev.Data, &c); err != nil {
			out.eventErr = err
			continue
		}
		out.chunks = append(out.chunks, c)
	}
	return out
}

func TestChatStreamWireFormat(t *testing.T) {
	s := startServer(t, nil)
	resp := post(t, s.URL()+"/v1/chat/completions",
		`{"model":"mock-llm","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello there"}]}`,
		map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "k=v"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	id := resp.Header.Get(HeaderRequestID)
	require.NotEmpty(t, id)
	res := readStream(resp.Body)
	require.ErrorIs(t, res.err, io.EOF)
	require.NoError(t, res.eventErr)
	assert.True(t, res.done)
	// role chunk, 8 content chunks, finish chunk, usage chunk
	require.Len(t, res.chunks, 11)
	assert.Equal(t, "assistant", res.chunks[0].Choices[0].Delta.Role)
	for _, c := range res.chunks[1:9] {
		n, _ := c.ContentLen()
		assert.Positive(t, n)
		assert.Equal(t, id, c.ID)
		assert.Equal(t, "chat.completion.chunk", c.Object)
	}
	assert.Equal(t, "stop", res.chunks[9].FinishReason())
	require.NotNil(t, res.chunks[10].Usage)
	assert.Empty(t, res.chunks[10].Choices)
	assert.Equal(t, 8, res.chunks[10].Usage.CompletionTokens)
	assert.Equal(t, `[DONE]`, res.raw[len(res.raw)-1])

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rec, ok := s.Record(ctx, id)
	require.True(t, ok)
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", rec.Traceparent)
	assert.Equal(t, "k=v", rec.Tracestate)
	assert.Equal(t, 8, rec.SentTokens)
	assert.True(t, rec.DoneSent)
	assert.Len(t, rec.ChunkTimes, 8)
	assert.GreaterOrEqual(t, rec.TTFT(), 20*time.Millisecond)
	assert.Len(t, rec.ITLs(), 7)

	// The admin endpoint serves the same record.
	ar, err := http.Get(s.URL() + "/mock/requests/" + id)
	require.NoError(t, err)
	defer ar.Body.Close()
	var got struct {
		ID   string    `json:"ID"`
		TTFT float64   `json:"ttft_s"`
		ITL  []float64 `json:"itl_s"`
	}
	require.NoError(t, json.NewDecoder(ar.Body).Decode(&got))
	assert.Equal(t, id, got.ID)
	assert.InDelta(t, rec.TTFT().Seconds(), got.TTFT, 1e-9)
	assert.Len(t, got.ITL, 7)
}

func TestNoUsageWithoutIncludeUsage(t *testing.T) {
	s := startServer(t, nil)
	resp := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	res := readStream(resp.Body)
	for _, c := range res.chunks {
		assert.Nil(t, c.Usage)
	}
	assert.NotContains(t, strings.Join(res.raw, ""), `"usage"`)
}

func TestCompletionsStreamAndUnary(t *testing.T) {
	s := startServer(t, nil)
	resp := post(t, s.URL()+"/v1/completions", `{"prompt":"once upon","stream":true,"max_tokens":5,"ignore_eos":true}`, nil)
	res := readStream(resp.Body)
	require.True(t, res.done)
	require.Len(t, res.chunks, 6)
	assert.Equal(t, "text_completion", res.chunks[0].Object)
	assert.Equal(t, "length", res.chunks[5].FinishReason())

	resp = post(t, s.URL()+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":3}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      struct{ Content string } `json:"message"`
			FinishReason string                   `json:"finish_reason"`
		} `json:"choices"`
		Usage sse.Usage `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "chat.completion", body.Object)
	assert.Equal(t, 3, body.Usage.CompletionTokens)
	assert.Equal(t, "length", body.Choices[0].FinishReason)
	assert.NotEmpty(t, body.Choices[0].Message.Content)
}

func TestEmbeddingsAndModels(t *testing.T) {
	s := startServer(t, nil)
	resp := post(t, s.URL()+"/v1/embeddings", `{"model":"mock-llm","input":["a","b"]}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var emb struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage sse.Usage `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&emb))
	require.Len(t, emb.Data, 2)
	assert.Len(t, emb.Data[0].Embedding, 16)
	assert.Equal(t, 2, emb.Usage.PromptTokens)

	mr, err := http.Get(s.URL() + "/v1/models")
	require.NoError(t, err)
	defer mr.Body.Close()
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	require.NoError(t, json.NewDecoder(mr.Body).Decode(&models))
	require.Len(t, models.Data, 1)
	assert.Equal(t, "mock-llm", models.Data[0].ID)

	resp = post(t, s.URL()+"/v1/embeddings", `{"input":42}`, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestRequestErrors(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ContextWindow = 100 })
	for name, tc := range map[string]struct {
		body   string
		hdr    map[string]string
		status int
		want   string
	}{
		"bad json":       {body: `{`, status: 400, want: "not valid JSON"},
		"unknown model":  {body: `{"model":"nope","messages":[]}`, status: 404, want: "does not exist"},
		"context length": {body: `{"max_tokens":200,"messages":[{"role":"user","content":"x"}]}`, status: 400, want: "maximum context length is 100 tokens"},
		"bad fault":      {body: `{}`, hdr: map[string]string{HeaderFault: "nope"}, status: 400, want: "unknown fault"},
		"bad override":   {body: `{}`, hdr: map[string]string{HeaderTTFT: "-3"}, status: 400, want: HeaderTTFT},
	} {
		t.Run(name, func(t *testing.T) {
			resp := post(t, s.URL()+"/v1/chat/completions", tc.body, tc.hdr)
			assert.Equal(t, tc.status, resp.StatusCode)
			b, _ := io.ReadAll(resp.Body)
			assert.Contains(t, string(b), tc.want)
			assert.Contains(t, string(b), `"error"`)
		})
	}
}

func TestFaults(t *testing.T) {
	s := startServer(t, nil)
	body := `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	fault := func(f string) map[string]string { return map[string]string{HeaderFault: f, HeaderFaultAfter: "3"} }

	t.Run("rate_limit", func(t *testing.T) {
		resp := post(t, s.URL()+"/v1/chat/completions", body, fault(FaultRateLimit))
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	})
	t.Run("overloaded", func(t *testing.T) {
		resp := post(t, s.URL()+"/v1/chat/completions", body, fault(FaultOverloaded))
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	})
	t.Run("context_length", func(t *testing.T) {
		resp := post(t, s.URL()+"/v1/chat/completions", body, fault(FaultContextLength))
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
	t.Run("error_event", func(t *testing.T) {
		res := readStream(post(t, s.URL()+"/v1/chat/completions", body, fault(FaultErrorEvent)).Body)
		require.NotEmpty(t, res.chunks)
		last := res.chunks[len(res.chunks)-1]
		require.NotNil(t, last.Error)
		assert.Len(t, res.chunks, 1+3+1)
		assert.True(t, res.done)
	})
	t.Run("stall", func(t *testing.T) {
		start := time.Now()
		res := readStream(post(t, s.URL()+"/v1/chat/completions", body, fault(FaultStall)).Body)
		assert.True(t, res.done)
		assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	})
	t.Run("drop", func(t *testing.T) {
		res := readStream(post(t, s.URL()+"/v1/chat/completions", body, fault(FaultDrop)).Body)
		assert.False(t, res.done)
		assert.Len(t, res.chunks, 1+3)
		require.Error(t, res.err)
		assert.False(t, errors.Is(res.err, io.EOF), "a dropped connection is not a clean end: %v", res.err)
	})
	t.Run("malformed", func(t *testing.T) {
		res := readStream(post(t, s.URL()+"/v1/chat/completions", body, fault(FaultMalformed)).Body)
		assert.ErrorIs(t, res.eventErr, sse.ErrMalformedChunk)
		assert.True(t, res.done)
	})
	t.Run("slow_headers", func(t *testing.T) {
		start := time.Now()
		resp := post(t, s.URL()+"/v1/chat/completions", body, fault(FaultSlowHeaders))
		assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
		assert.True(t, readStream(resp.Body).done)
	})
	t.Run("missing_done", func(t *testing.T) {
		res := readStream(post(t, s.URL()+"/v1/chat/completions", body, fault(FaultMissingDone)).Body)
		assert.False(t, res.done)
		assert.ErrorIs(t, res.err, io.EOF)
		require.NotEmpty(t, res.chunks)
		assert.NotNil(t, res.chunks[len(res.chunks)-1].Usage)
	})
	assert.Equal(t, int64(9), s.Stats().Faults)
}

func TestFaultRatesByConfig(t *testing.T) {
	s := startServer(t, func(c *Config) { c.FaultRates = map[string]float64{FaultOverloaded: 1} })
	resp := post(t, s.URL()+"/v1/chat/completions", `{"messages":[]}`, nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

func TestClientGoneIsRecorded(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ITL = 50 * time.Millisecond; c.OutputTokens = 100 })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/chat/completions", strings.NewReader(`{"stream":true,"messages":[]}`))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	id := resp.Header.Get(HeaderRequestID)
	br := bufio.NewReader(resp.Body)
	_, _ = br.ReadString('\n')
	cancel()
	resp.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer wcancel()
	rec, ok := s.Record(wctx, id)
	require.True(t, ok)
	assert.True(t, rec.ClientGone)
	assert.Less(t, rec.SentTokens, 100)
}

func TestServerSpansJoinTheCallersTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	s := startServer(t, nil, WithTracerProvider(tp))
	resp := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"messages":[]}`,
		map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	readStream(resp.Body)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, ok := s.Record(ctx, resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	spans := exp.GetSpans()
	require.Len(t, spans, 1)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", spans[0].SpanContext.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", spans[0].Parent.SpanID().String())
	assert.Equal(t, "chat mock-llm", spans[0].Name)
}

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	c.FaultRates = map[string]float64{"bogus": 0.1, FaultStall: 2}
	c.Jitter = 3
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{`unknown fault "bogus"`, "allowed values: rate_limit", "faults.stall", "jitter"} {
		assert.Contains(t, err.Error(), want)
	}
	rates, err := ParseFaultRates("stall=0.1, drop=0.2")
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{FaultStall: 0.1, FaultDrop: 0.2}, rates)
	_, err = ParseFaultRates("stall")
	assert.Error(t, err)
}

// TestReasoningModelStream: the first reasoning_tokens of a chat stream are
// thinking, under the configured delta field with content empty, then the
// answer follows as content.
func TestReasoningModelStream(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		s := startServer(t, func(c *Config) { c.ReasoningTokens, c.ReasoningField, c.TokensPerChunk = 3, field, 2 })
		resp := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"messages":[]}`, nil)
		out := readStream(resp.Body)
		require.True(t, out.done)
		thinking, answer := 0, 0
		for i, raw := range out.raw {
			var sum sse.ChunkSummary
			if sse.IsDone([]byte(raw)) {
				continue
			}
			require.NoError(t, sse.ScanChunk([]byte(raw), &sum))
			switch {
			case sum.Content && !sum.Answer:
				thinking++
				assert.Contains(t, raw, `"`+field+`":`, "event %d", i)
				assert.Zero(t, answer, "thinking comes first")
			case sum.Answer:
				answer++
			}
		}
		assert.Equal(t, 2, thinking, "3 thinking tokens in chunks of 2: 2 then 1")
		assert.Equal(t, 3, answer, "the other 5 of 8 tokens in chunks of 2")
	}
	c := DefaultConfig()
	c.ReasoningField = "thoughts"
	assert.ErrorContains(t, c.Validate(), `reasoning_field: must be reasoning_content or reasoning, got "thoughts"`)
}

// TestContinuousUsage: with stream_options.continuous_usage_stats (and
// include_usage, as vLLM asks) every chunk carries the usage so far.
func TestContinuousUsage(t *testing.T) {
	s := startServer(t, func(c *Config) { c.TokensPerChunk = 3 })
	resp := post(t, s.URL()+"/v1/chat/completions",
		`{"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"messages":[]}`, nil)
	out := readStream(resp.Body)
	require.True(t, out.done)
	var completions []int
	for _, c := range out.chunks {
		require.NotNil(t, c.Usage, "every chunk has its usage")
		completions = append(completions, c.Usage.CompletionTokens)
	}
	// Role chunk 0, content chunks of 3, 3 and 2 of 8 tokens, finish, the usage chunk.
	assert.Equal(t, []int{0, 3, 6, 8, 8, 8}, completions)
	plain := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"stream_options":{"continuous_usage_stats":true},"messages":[]}`, nil)
	for _, c := range readStream(plain.Body).chunks {
		assert.Nil(t, c.Usage, "without include_usage there is no usage")
	}
}

// A request is received when its body is in, not when its header is: a
// client that writes the body 150 ms after the header (as a trace replay
// that stages its requests does) is not charged those 150 ms in the
// ground truth, and the server span starts then too.
func TestReceivedWhenTheBodyIsIn(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	s := startServer(t, nil, WithTracerProvider(tp))
	body := `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, body[:len(body)-1])
		time.Sleep(150 * time.Millisecond)
		_, _ = io.WriteString(pw, body[len(body)-1:])
		_ = pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/chat/completions", pr)
	require.NoError(t, err)
	req.ContentLength = int64(len(body))
	sent := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.True(t, readStream(resp.Body).done)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rec, ok := s.Record(ctx, resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	assert.GreaterOrEqual(t, rec.Received.Sub(sent), 150*time.Millisecond, "received once the last byte came")
	assert.Less(t, rec.TTFT(), 150*time.Millisecond, "the wait for the body is not in the TTFT (planned 20 ms)")
	spans := exp.GetSpans()
	require.Len(t, spans, 1)
	assert.False(t, spans[0].StartTime.Before(rec.Received.Add(-time.Millisecond)), "the span starts with the request")
}

// A client that goes before its request's body is complete sent no
// request: the server counts it as a cut body and keeps no record of it.
func TestCutBodyIsNoRequest(t *testing.T) {
	s := startServer(t, nil)
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	require.NoError(t, err)
	_, err = io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"stream\":true,")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return s.Stats().CutBodies == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Zero(t, s.Stats().Requests)
	assert.Empty(t, s.Records())
}
