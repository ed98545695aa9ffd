package mockllm

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

func TestEngineKVAdmitsWhatFitsAndPreemptsTheNewest(t *testing.T) {
	e := newEngine(0, 0, 100)
	_, a, err := e.admitKV(context.Background(), 40)
	require.NoError(t, err)
	_, b, err := e.admitKV(context.Background(), 40)
	require.NoError(t, err)
	cAdmitted := make(chan *slot)
	go func() {
		_, c, err := e.admitKV(context.Background(), 40)
		if err == nil {
			cAdmitted <- c
		}
	}()
	waitFor(t, "c queued: 80 + 40 > 100", func() bool { return e.queued.Load() == 1 })
	require.True(t, a.grow(20), "80 + 20 fits exactly")
	assert.EqualValues(t, 100, e.kvTokens.Load())
	assert.False(t, b.grow(1), "no room: the newest running request, b itself, is preempted")
	assert.EqualValues(t, 1, e.preemptions.Load())
	assert.EqualValues(t, 60, e.kvTokens.Load(), "b's 40 tokens are freed")
	assert.False(t, b.running())
	assert.EqualValues(t, 2, e.queued.Load(), "b waits in front of c")

	resumed := make(chan int)
	go func() {
		n, ok := b.resume(context.Background())
		if ok {
			resumed <- n
		}
	}()
	a.release()
	assert.Equal(t, 40, <-resumed, "b recomputes the 40 tokens it held")
	c := <-cAdmitted
	assert.EqualValues(t, 80, e.kvTokens.Load())
	assert.True(t, b.grow(20))
	assert.False(t, c.grow(1), "c is the newest now")
	b.release()
	c.release()
	assert.EqualValues(t, 0, e.kvTokens.Load())
	assert.EqualValues(t, 0, e.running.Load())
	assert.EqualValues(t, 0, e.queued.Load(), "c left the queue with its release")
}

func TestEngineKVPreemptsAnotherRequest(t *testing.T) {
	e := newEngine(0, 0, 50)
	_, old, err := e.admitKV(context.Background(), 20)
	require.NoError(t, err)
	_, young, err := e.admitKV(context.Background(), 20)
	require.NoError(t, err)
	require.True(t, old.grow(10), "50 of 50")
	require.True(t, old.grow(5), "the young request is preempted for the old one's tokens")
	assert.False(t, young.running())
	assert.False(t, young.grow(1), "a preempted request holds nothing until resumed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok := young.resume(ctx)
	assert.False(t, ok, "its client left while it waited")
	young.release()
	old.release()
	assert.EqualValues(t, 0, e.kvTokens.Load())
	assert.EqualValues(t, 0, e.queued.Load())
}

// TestKVCacheSaturationOverHTTP overloads a KV cache of 600 tokens with 12
// concurrent streams of a 100-token prompt and 60 output tokens: every
// stream still gets all its tokens, some are preempted and recomputed, and
// /metrics and the server spans say so under vLLM's names.
func TestKVCacheSaturationOverHTTP(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	s := startServer(t, func(c *Config) {
		c.ContextWindow, c.KVCacheTokens, c.OutputTokens, c.ITL = 512, 600, 60, 3*time.Millisecond
	}, WithTracerProvider(tp))
	prompt := strings.Repeat("word ", 100)
	var wg sync.WaitGroup
	results := make([]streamResult, 12)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/chat/completions",
				strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"`+prompt+`"}]}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			results[i] = readStream(resp.Body)
		}()
	}
	wg.Wait()
	content := 0
	for _, r := range results {
		require.True(t, r.done, "every stream ends with [DONE]")
		for _, c := range r.chunks {
			if len(c.Choices) > 0 && c.Choices[0].Delta != nil && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
				content++
			}
		}
	}
	assert.Equal(t, 12*60, content, "no token is lost to a preemption")
	st := s.Stats()
	require.Positive(t, st.Preemptions)
	assert.EqualValues(t, 0, st.KVCacheTokens, "everything freed at the end")
	recs, preempted := s.Records(), 0
	for _, r := range recs {
		preempted += r.Preemptions
	}
	assert.EqualValues(t, st.Preemptions, preempted)

	fams := scrapeMetrics(t, s.URL())
	assert.Equal(t, float64(st.Preemptions), fams["vllm:num_preemptions_total"].Metric[0].GetCounter().GetValue())
	assert.Equal(t, float64(12*60), fams["vllm:generation_tokens_total"].Metric[0].GetCounter().GetValue())
	assert.EqualValues(t, 12, fams["vllm:time_to_first_token_seconds"].Metric[0].GetHistogram().GetSampleCount())
	assert.EqualValues(t, 12*59, fams["vllm:inter_token_latency_seconds"].Metric[0].GetHistogram().GetSampleCount())
	assert.Equal(t, 0.0, fams["vllm:kv_cache_usage_perc"].Metric[0].GetGauge().GetValue())
	for _, l := range fams["vllm:num_requests_running"].Metric[0].GetLabel() {
		assert.Contains(t, []string{"engine=0", "model_name=mock-llm"}, l.GetName()+"="+l.GetValue())
	}

	spans := exp.GetSpans()
	require.Len(t, spans, 12)
	for _, sp := range spans {
		attrs := map[string]float64{}
		for _, kv := range sp.Attributes {
			attrs[string(kv.Key)] = kv.Value.AsFloat64()
		}
		ttft, e2e := attrs[genai.VLLMAttrTimeToFirstToken], attrs[genai.ServerAttrE2E]
		require.Positive(t, ttft, "%s", sp.Name)
		assert.InDelta(t, ttft, attrs[genai.ServerAttrTimeInQueue]+attrs[genai.ServerAttrTimeInPrefill], 1e-9)
		assert.LessOrEqual(t, ttft+attrs[genai.ServerAttrTimeInDecode], e2e+1e-9)
	}
}

func TestMetricsWithoutKVBudget(t *testing.T) {
	s := startServer(t, nil)
	resp := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"messages":[]}`, nil)
	readStream(resp.Body)
	fams := scrapeMetrics(t, s.URL())
	assert.NotContains(t, fams, "vllm:kv_cache_usage_perc", "no KV budget, no usage to show")
	assert.Contains(t, fams, "vllm:num_requests_waiting")
	assert.Contains(t, fams, "vllm:request_queue_time_seconds")
}

func TestKVCacheConfig(t *testing.T) {
	c := DefaultConfig()
	c.KVCacheTokens = c.ContextWindow - 1
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kv_cache_tokens: must be 0 (unlimited) or at least the context window ("+strconv.Itoa(c.ContextWindow))
}

func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "%s", body)
	return fams
}
