package synthetic

import (
	"context"
	"errors"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

func allSpans(td []ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, t := range td {
		for i := 0; i < t.ResourceSpans().Len(); i++ {
			ss := t.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					out = append(out, ss.At(j).Spans().At(k))
				}
			}
		}
	}
	return out
}

func strAttr(s ptrace.Span, k string) string {
	if v, ok := s.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// TestDeterminism: a seed reproduces a run, ids included; another seed does not.
func TestDeterminism(t *testing.T) {
	run := func(seed uint64) ptrace.Traces {
		cfg := afapConfig(200)
		cfg.Seed = seed
		cfg.Faults = []config.FaultConfig{{Type: config.FaultRateLimit, Probability: 0.1, MaxRetries: 1}, {Type: config.FaultCancel, Probability: 0.1}}
		sink := &consumertest.TracesSink{}
		runSync(t, cfg, sink, nil, nil)
		return mergeTraces(sink.AllTraces())
	}
	a, b, c := run(5), run(5), run(6)
	require.NoError(t, ptracetest.CompareTraces(a, b))
	require.Error(t, ptracetest.CompareTraces(a, c))
}

// TestSpanTreesAreWellFormed: every span's parent is in its trace, children
// lie within their parent's time range and the request count matches roots.
func TestSpanTreesAreWellFormed(t *testing.T) {
	cfg := afapConfig(300)
	cfg.Agent.Depth = 2
	cfg.Faults = []config.FaultConfig{{Type: config.FaultRateLimit, Probability: 0.05, MaxRetries: 2}, {Type: config.FaultTimeout, Probability: 0.02}}
	sink := &consumertest.TracesSink{}
	runSync(t, cfg, sink, nil, nil)
	spans := allSpans(sink.AllTraces())
	byID := map[pcommon.SpanID]ptrace.Span{}
	for _, s := range spans {
		_, dup := byID[s.SpanID()]
		require.False(t, dup, "duplicate span id")
		byID[s.SpanID()] = s
	}
	roots := 0
	for _, s := range spans {
		require.LessOrEqual(t, s.StartTimestamp(), s.EndTimestamp(), s.Name())
		if s.ParentSpanID().IsEmpty() {
			roots++
			continue
		}
		p, ok := byID[s.ParentSpanID()]
		require.True(t, ok, "parent of %s missing", s.Name())
		require.Equal(t, p.TraceID(), s.TraceID())
		assert.GreaterOrEqual(t, s.StartTimestamp(), p.StartTimestamp(), "%s starts before %s", s.Name(), p.Name())
		assert.LessOrEqual(t, s.EndTimestamp(), p.EndTimestamp(), "%s ends after %s", s.Name(), p.Name())
	}
	assert.Equal(t, 300, roots)
}

// TestContextWindowTruncates: prompt + output above the context window end
// with finish_reason length and output cut to fit; a prompt above the window
// fails with the 400 context-length error.
func TestContextWindowTruncates(t *testing.T) {
	cfg := afapConfig(50)
	cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
	cfg.Models = []config.ModelConfig{{Name: "small", Provider: "vllm", Weight: 1, ContextWindow: 300,
		TTFT: config.Distribution{Type: config.DistConstant, Value: 0.1}, ITL: config.Distribution{Type: config.DistConstant, Value: 0.01},
		InputTokens: config.Distribution{Type: config.DistConstant, Value: 200}, OutputTokens: config.Distribution{Type: config.DistConstant, Value: 250}}}
	sink := &consumertest.TracesSink{}
	runSync(t, cfg, sink, nil, nil)
	for _, s := range allSpans(sink.AllTraces()) {
		if s.Kind() != ptrace.SpanKindClient {
			continue
		}
		out, _ := s.Attributes().Get(genai.AttrUsageOutputTokens)
		assert.EqualValues(t, 100, out.Int())
		fr, _ := s.Attributes().Get(genai.AttrFinishReasons)
		assert.Equal(t, "length", fr.Slice().At(0).Str())
	}

	cfg.Models[0].InputTokens = config.Distribution{Type: config.DistConstant, Value: 400}
	sink.Reset()
	runSync(t, cfg, sink, nil, nil)
	for _, s := range allSpans(sink.AllTraces()) {
		if s.Kind() == ptrace.SpanKindClient {
			assert.Equal(t, "BadRequestError", strAttr(s, genai.AttrErrorType))
			assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
		} else {
			st, _ := s.Attributes().Get("http.response.status_code")
			assert.EqualValues(t, 400, st.Int())
		}
	}
}

// TestFaultsAsInstrumentationRecordsThem: each fault sets error.type, span
// status and HTTP status the way real instrumentation does, at the
// configured share.
func TestFaultsAsInstrumentationRecordsThem(t *testing.T) {
	cases := []struct {
		fault      string
		clientErr  string
		httpStatus int64
	}{
		{config.FaultOverloaded, "InternalServerError", 503},
		{config.FaultMidStream, "APIError", 200},
		{config.FaultCancel, "context_canceled", 499},
		{config.FaultTimeout, "timeout", 504},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			cfg := afapConfig(2000)
			cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
			cfg.Faults = []config.FaultConfig{{Type: tc.fault, Probability: 0.25}}
			sink := &consumertest.TracesSink{}
			runSync(t, cfg, sink, nil, nil)
			failed := 0
			for _, s := range allSpans(sink.AllTraces()) {
				if s.Kind() != ptrace.SpanKindServer {
					continue
				}
				st, _ := s.Attributes().Get("http.response.status_code")
				if st.Int() == tc.httpStatus && strAttr(s, genai.AttrErrorType) != "" {
					failed++
				}
			}
			assert.InDelta(t, 500, failed, 80, "share of failed requests")
			for _, s := range allSpans(sink.AllTraces()) {
				if s.Kind() == ptrace.SpanKindClient && s.Status().Code() == ptrace.StatusCodeError {
					assert.Equal(t, tc.clientErr, strAttr(s, genai.AttrErrorType))
					_, hasUsage := s.Attributes().Get(genai.AttrUsageOutputTokens)
					assert.False(t, hasUsage, "a failed call reports no usage")
				}
			}
		})
	}
}

// TestRateLimitRetries: a 429 is retried after Retry-After with
// http.request.resend_count; requests that exhaust max_retries fail with 429.
func TestRateLimitRetries(t *testing.T) {
	cfg := afapConfig(400)
	cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
	cfg.Faults = []config.FaultConfig{{Type: config.FaultRateLimit, Probability: 1, MaxRetries: 1, RetryAfter: 2e9}}
	sink := &consumertest.TracesSink{}
	runSync(t, cfg, sink, nil, nil)
	recovered, gaveUp := 0, 0
	for _, s := range allSpans(sink.AllTraces()) {
		if s.Kind() == ptrace.SpanKindServer {
			st, _ := s.Attributes().Get("http.response.status_code")
			switch st.Int() {
			case 200:
				recovered++
				assert.Greater(t, s.EndTimestamp()-s.StartTimestamp(), pcommon.Timestamp(2e9), "waited Retry-After")
			case 429:
				gaveUp++
			}
		}
		if s.Kind() == ptrace.SpanKindClient && s.Status().Code() != ptrace.StatusCodeError {
			rc, ok := s.Attributes().Get("http.request.resend_count")
			require.True(t, ok)
			assert.EqualValues(t, 1, rc.Int())
		}
	}
	assert.Equal(t, 400, recovered+gaveUp)
	assert.InDelta(t, 200, recovered, 50)
}

// TestExplosionAndBloatKnobs: span_per_chunk adds one child span per chunk
// (capped), chunk_events all one event per chunk, content large attributes.
func TestExplosionAndBloatKnobs(t *testing.T) {
	cfg := afapConfig(20)
	cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
	cfg.Models = cfg.Models[:1]
	cfg.Models[0].OutputTokens = config.Distribution{Type: config.DistConstant, Value: 100}
	cfg.Stream = config.StreamConfig{TokensPerChunk: 2, ChunkEvents: config.ChunkEventsAll, SpanPerChunk: true, MaxChunkSpans: 40}
	cfg.Content = config.ContentConfig{Enabled: true, PromptBytes: 10000, CompletionBytes: 5000}
	sink := &consumertest.TracesSink{}
	runSync(t, cfg, sink, nil, nil)
	spans := allSpans(sink.AllTraces())
	assert.Len(t, spans, 20*(2+40))
	for _, s := range spans {
		if s.Kind() == ptrace.SpanKindClient {
			assert.Equal(t, 50, s.Events().Len())
			assert.Len(t, strAttr(s, "gen_ai.input.messages"), 10000)
			assert.Len(t, strAttr(s, "gen_ai.output.messages"), 5000)
		}
	}
}

// TestInferenceDetailsEvents: one gen_ai.client.inference.operation.details
// log record per chat call, correlated with its span.
func TestInferenceDetailsEvents(t *testing.T) {
	cfg := afapConfig(50)
	cfg.Scenarios = []config.ScenarioConfig{{Type: config.ScenarioChat, Weight: 1}}
	cfg.Logs.InferenceDetails = true
	traces, logs := &consumertest.TracesSink{}, &consumertest.LogsSink{}
	runSync(t, cfg, traces, nil, logs)
	assert.Equal(t, 50, logs.LogRecordCount())
	ids := map[pcommon.SpanID]bool{}
	for _, s := range allSpans(traces.AllTraces()) {
		ids[s.SpanID()] = true
	}
	for _, ld := range logs.AllLogs() {
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := 0; i < lrs.Len(); i++ {
			assert.Equal(t, EventInferenceDetails, lrs.At(i).EventName())
			assert.True(t, ids[lrs.At(i).SpanID()])
		}
	}
}

// refusingConsumer refuses the first n calls with a retryable error.
type refusingConsumer struct {
	consumertest.TracesSink
	n   int
	err error
}

func (r *refusingConsumer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if r.n > 0 {
		r.n--
		return r.err
	}
	return r.TracesSink.ConsumeTraces(ctx, td)
}

func runWithTelemetry(t *testing.T, cfg *config.Config, traces consumer.Traces) (*Runner, *componenttest.Telemetry) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	r, err := New(&loadgen.Run{Config: cfg, Settings: set, Traces: traces})
	require.NoError(t, err)
	s := r
	s.init()
	s.run(context.Background())
	return s, tel
}

// TestBackpressure: retryable refusals are counted and retried (nothing is
// lost); a permanent error drops the batch and counts it.
func TestBackpressure(t *testing.T) {
	cfg := afapConfig(100)
	cfg.BatchSize = 10
	cfg.Backpressure = config.BackpressureConfig{InitialBackoff: 1e6, MaxBackoff: 4e6}
	sink := &refusingConsumer{n: 3, err: errors.New("memory limit reached")}
	s, tel := runWithTelemetry(t, cfg, sink)
	assert.EqualValues(t, sink.SpanCount(), s.totals.spans)
	assert.EqualValues(t, s.totals.spans, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_emitted", attribute.String("signal", "traces")))
	assert.Positive(t, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_refused", attribute.String("signal", "traces")))
	assert.EqualValues(t, 100, metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_requests"))
	assert.Equal(t, 100, countRequests(&sink.TracesSink))

	perm := &refusingConsumer{n: 1, err: consumererror.NewPermanent(errors.New("bad data"))}
	s, tel = runWithTelemetry(t, cfg, perm)
	dropped := metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_dropped", attribute.String("signal", "traces"), attribute.String("reason", loadgen.DropPermanent))
	assert.Positive(t, dropped)
	assert.EqualValues(t, perm.SpanCount()+int(dropped), s.totals.built)
}

// TestShutdownAccountsForEverySpan: an unbounded as_fast_as_possible run
// stopped by Shutdown has every generated span either accepted or counted
// as dropped (reason shutdown).
func TestShutdownAccountsForEverySpan(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := afapConfig(0)
	cfg.BatchSize = 7
	sink := &consumertest.TracesSink{}
	r, err := New(&loadgen.Run{Config: cfg, Settings: set, Traces: sink})
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return sink.SpanCount() > 1000 }, 10e9, 1e6)
	require.NoError(t, r.Shutdown(context.Background()))
	s := r
	emitted := metadatatest.CounterSum(t, tel, "otelcol_llm_loadgen_emitted", attribute.String("signal", "traces"))
	m, err := tel.GetMetric("otelcol_llm_loadgen_dropped")
	dropped := int64(0)
	if err == nil {
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			dropped += dp.Value
		}
	}
	assert.EqualValues(t, sink.SpanCount(), emitted)
	assert.EqualValues(t, s.totals.built, emitted+dropped)
}
