package mockllm

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// The server's own view of its load, as vLLM's V1 engine shows it: GET
// /metrics in the Prometheus text format under vLLM's names, labels
// (model_name, engine) and histogram buckets, and the vLLM request timings
// on every SERVER span. A load test scrapes and joins them exactly as it
// would a real vLLM.

// Histogram buckets of vLLM's V1 metrics (seconds).
var (
	vllmTTFTBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	vllmITLBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	vllmRequestBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

// serverMetrics are the instruments behind /metrics.
type serverMetrics struct {
	reg                                     *prometheus.Registry
	promptTokens, generationTokens, success *prometheus.CounterVec
	ttft, itl, e2e, queue, prefill, decode  *prometheus.HistogramVec
}

func newServerMetrics(s *Server) *serverMetrics {
	engineLabel := prometheus.Labels{"engine": "0"}
	gaugeLabels := prometheus.Labels{"engine": "0", "model_name": s.cfg.Models[0]}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: engineLabel}, labels)
	}
	hist := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: engineLabel}, []string{"model_name"})
	}
	m := &serverMetrics{
		reg:              prometheus.NewRegistry(),
		promptTokens:     counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", "model_name"),
		generationTokens: counter("vllm:generation_tokens_total", "Number of generation tokens processed.", "model_name"),
		success:          counter("vllm:request_success_total", "Count of successfully processed requests.", "model_name", "finished_reason"),
		ttft:             hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllmTTFTBuckets),
		itl:              hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", vllmITLBuckets),
		e2e:              hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", vllmRequestBuckets),
		queue:            hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", vllmRequestBuckets),
		prefill:          hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", vllmRequestBuckets),
		decode:           hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", vllmRequestBuckets),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: gaugeLabels}, f)
	}
	total := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: gaugeLabels}, f)
	}
	e := s.eng
	m.reg.MustRegister(m.promptTokens, m.generationTokens, m.success, m.ttft, m.itl, m.e2e, m.queue, m.prefill, m.decode,
		gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func() float64 { return float64(e.running.Load()) }),
		gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func() float64 { return float64(e.queued.Load()) }),
		total("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", func() float64 { return float64(e.preemptions.Load()) }),
		total("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", func() float64 { return float64(s.prefixQueries.Load()) }),
		total("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", func() float64 { return float64(s.prefixHits.Load()) }))
	if e.kvBudget > 0 {
		m.reg.MustRegister(gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
			func() float64 { return float64(e.kvTokens.Load()) / float64(e.kvBudget) }))
	}
	return m
}

func (m *serverMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// requestTimes are a finished request's phases as vLLM measures them, from
// the time the server received it.
type requestTimes struct {
	queue, ttft, prefill, decode, e2e time.Duration
	ok                                bool // content was sent
}

func timesOf(rec *Record) requestTimes {
	t := requestTimes{queue: rec.QueueWait, e2e: rec.EndAt.Sub(rec.Received)}
	if rec.FirstContentAt.IsZero() {
		return t
	}
	t.ok = true
	t.ttft = rec.FirstContentAt.Sub(rec.Received)
	t.prefill = max(t.ttft-rec.QueueWait, 0)
	t.decode = max(rec.LastContentAt.Sub(rec.FirstContentAt), 0)
	return t
}

// observe counts a finished completion request in /metrics.
func (m *serverMetrics) observe(model string, rec *Record, t requestTimes) {
	m.promptTokens.WithLabelValues(model).Add(float64(rec.PromptTokens))
	m.generationTokens.WithLabelValues(model).Add(float64(rec.SentTokens))
	if !t.ok || rec.ClientGone || rec.FinishReason == "" {
		return
	}
	m.success.WithLabelValues(model, rec.FinishReason).Inc()
	m.ttft.WithLabelValues(model).Observe(t.ttft.Seconds())
	m.e2e.WithLabelValues(model).Observe(t.e2e.Seconds())
	m.queue.WithLabelValues(model).Observe(t.queue.Seconds())
	m.prefill.WithLabelValues(model).Observe(t.prefill.Seconds())
	m.decode.WithLabelValues(model).Observe(t.decode.Seconds())
}

// setServerTimes writes vLLM's request timings on the SERVER span.
func setServerTimes(span trace.Span, rec *Record, t requestTimes) {
	span.SetAttributes(attribute.String(genai.ServerAttrRequestID, rec.ID),
		attribute.Float64(genai.ServerAttrTimeInQueue, t.queue.Seconds()),
		attribute.Float64(genai.ServerAttrE2E, t.e2e.Seconds()))
	if rec.Preemptions > 0 {
		span.SetAttributes(attribute.Int("mockllm.preemptions", rec.Preemptions))
	}
	if !t.ok {
		return
	}
	span.SetAttributes(attribute.Float64(genai.VLLMAttrTimeToFirstToken, t.ttft.Seconds()),
		attribute.Float64(genai.ServerAttrTimeInPrefill, t.prefill.Seconds()),
		attribute.Float64(genai.ServerAttrTimeInDecode, t.decode.Seconds()),
		attribute.Float64(genai.ServerAttrTimeInInference, (t.prefill+t.decode).Seconds()))
}
