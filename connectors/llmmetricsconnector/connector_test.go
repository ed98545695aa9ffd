package llmmetricsconnector

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
)

// fakeClock starts at t0; tests move it explicitly.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

var t0 = time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)

// newTestConnector builds a connector with a fake clock and telemetry the
// test can read.
func newTestConnector(t *testing.T, cfg *Config, next consumer.Metrics) (*llmMetrics, *fakeClock, *componenttest.Telemetry) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	c, err := newConnector(set, cfg, next)
	require.NoError(t, err)
	clk := &fakeClock{t: t0}
	c.now = clk.now
	c.lastFlush = t0
	return c, clk, tel
}

func recordedSpans(t testing.TB) ptrace.Traces {
	td, err := golden.ReadTraces(filepath.Join("testdata", "genai_spans.json"))
	require.NoError(t, err)
	return td
}

func goldenConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Dimensions = []Dimension{{Name: "tenant"}}
	cfg.SLO = SLOConfig{TTFT: 500 * time.Millisecond, TPOT: 20 * time.Millisecond, E2E: 2 * time.Second}
	cfg.Evaluation.Thresholds = map[string]float64{"hallucination": 0.3}
	return cfg
}

func TestFactoryType(t *testing.T) {
	assert.Equal(t, metadata.Type, NewFactory().Type())
	assert.Equal(t, "llm_metrics", NewFactory().Type().String())
	assert.Equal(t, metadata.TracesToMetricsStability, NewFactory().TracesToMetricsStability())
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	set := connectortest.NewNopSettings(metadata.Type)
	cfg := f.CreateDefaultConfig()
	componenttestkit.Lifecycle(t, func(t *testing.T) component.Component {
		c, err := f.CreateTracesToMetrics(context.Background(), set, cfg, consumertest.NewNop())
		require.NoError(t, err)
		assert.False(t, c.Capabilities().MutatesData)
		return c
	})
}

// TestGolden aggregates the recorded spans under several configurations and
// compares the flushed metrics with testdata/golden/*.yaml.
func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{name: "v1_41"},
		{name: "latest", mutate: func(c *Config) { c.Target = "latest" }},
		{name: "exponential", mutate: func(c *Config) { c.Histogram.Type = histogramExponential; c.Histogram.MaxSize = 20 }},
		{name: "delta", mutate: func(c *Config) { c.AggregationTemporality = temporalityDelta }},
		{name: "no_golden_signals", mutate: func(c *Config) { c.GoldenSignals = false; c.ServerMetrics = false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := goldenConfig()
			if tt.mutate != nil {
				tt.mutate(cfg)
			}
			sink := new(consumertest.MetricsSink)
			c, clk, _ := newTestConnector(t, cfg, sink)
			require.NoError(t, c.ConsumeTraces(context.Background(), recordedSpans(t)))
			clk.t = clk.t.Add(10 * time.Second)
			c.flush(context.Background())
			require.Len(t, sink.AllMetrics(), 1)
			got := sink.AllMetrics()[0]

			path := filepath.Join("testdata", "golden", tt.name+".yaml")
			if goldentest.Updating() {
				require.NoError(t, golden.WriteMetrics(t, path, got, golden.SkipMetricTimestampNormalization()))
			}
			want, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
		})
	}
}

// point finds the single data point of metric name whose attributes include
// attrs; it fails the test when there is not exactly one.
func point(t *testing.T, md pmetric.Metrics, name string, attrs map[string]any) (pmetric.Metric, int) {
	t.Helper()
	var found pmetric.Metric
	idx, n := -1, 0
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != name {
					continue
				}
				for p := 0; p < dataPointCount(m); p++ {
					if hasAttrs(dataPointAttrs(m, p), attrs) {
						found, idx = m, p
						n++
					}
				}
			}
		}
	}
	require.Equal(t, 1, n, "data points of %s with %v", name, attrs)
	return found, idx
}

func dataPointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	}
	return 0
}

func dataPointAttrs(m pmetric.Metric, i int) pcommon.Map {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().At(i).Attributes()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().At(i).Attributes()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().At(i).Attributes()
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().At(i).Attributes()
	}
	return pcommon.NewMap()
}

func hasAttrs(m pcommon.Map, want map[string]any) bool {
	for k, v := range want {
		got, ok := m.Get(k)
		if v == nil {
			if ok {
				return false
			}
			continue
		}
		if !ok || got.AsString() != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func sumValue(t *testing.T, md pmetric.Metrics, name string, attrs map[string]any) int64 {
	m, i := point(t, md, name, attrs)
	return m.Sum().DataPoints().At(i).IntValue()
}

func histPoint(t *testing.T, md pmetric.Metrics, name string, attrs map[string]any) pmetric.HistogramDataPoint {
	m, i := point(t, md, name, attrs)
	return m.Histogram().DataPoints().At(i)
}

// TestSemantics checks the facts the golden files encode, one by one.
func TestSemantics(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c, clk, tel := newTestConnector(t, goldenConfig(), sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), recordedSpans(t)))
	clk.t = clk.t.Add(10 * time.Second)
	c.flush(context.Background())
	require.Len(t, sink.AllMetrics(), 1)
	md := sink.AllMetrics()[0]

	gpt := map[string]any{"gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "tenant": "acme", "error.type": nil}

	// Two streaming chats of the same series: durations 1.2 s and 3 s.
	d := histPoint(t, md, "gen_ai.client.operation.duration", gpt)
	assert.Equal(t, uint64(2), d.Count())
	assert.InDelta(t, 4.2, d.Sum(), 1e-9)
	assert.Equal(t, []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}, d.ExplicitBounds().AsRaw())
	assert.Equal(t, uint64(1), d.BucketCounts().At(7)) // 1.2 s in (0.64, 1.28]
	assert.Equal(t, uint64(1), d.BucketCounts().At(9)) // 3 s in (2.56, 5.12]
	ttft := histPoint(t, md, "gen_ai.client.operation.time_to_first_chunk", gpt)
	assert.InDelta(t, 1.25, ttft.Sum(), 1e-9)
	// Time per output chunk: (1.2-0.35)/47 and (3-0.9)/200.
	tpot := histPoint(t, md, "gen_ai.client.operation.time_per_output_chunk", gpt)
	assert.InDelta(t, 0.85/47+2.1/200, tpot.Sum(), 1e-9)
	in := histPoint(t, md, "gen_ai.client.token.usage", map[string]any{"gen_ai.token.type": "input", "tenant": "acme", "gen_ai.response.model": "gpt-4o-mini-2024-07-18"})
	assert.Equal(t, 1020.0, in.Sum())
	out := histPoint(t, md, "gen_ai.client.token.usage", map[string]any{"gen_ai.token.type": "output", "tenant": "acme", "gen_ai.response.model": "gpt-4o-mini-2024-07-18"})
	assert.Equal(t, 249.0, out.Sum())

	// Golden signals.
	assert.Equal(t, int64(2), sumValue(t, md, "llm.requests", map[string]any{"outcome": "success", "tenant": "acme"}))
	assert.Equal(t, int64(1), sumValue(t, md, "llm.requests", map[string]any{"outcome": "error", "error.type": "rate_limit_exceeded"}))
	assert.Equal(t, int64(1), sumValue(t, md, "llm.requests", map[string]any{"outcome": "empty"}))
	assert.Equal(t, int64(249), sumValue(t, md, "llm.output_tokens", gpt))
	// The 1.2 s chat meets TTFT (0.35 ≤ 0.5 s), TPOT (18 ms ≤ 20 ms) and E2E;
	// the 3 s chat misses TTFT (0.9 s) and E2E but meets TPOT (10.5 ms).
	assert.Equal(t, int64(1), sumValue(t, md, "llm.goodput.requests", gpt))
	for slo, want := range map[string]int64{"ttft": 1, "tpot": 0, "e2e": 1} {
		assert.Equal(t, want, sumValue(t, md, "llm.slo.violations", map[string]any{"tenant": "acme", "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "slo": slo}), slo)
	}
	conc, i := point(t, md, "llm.requests.concurrency", gpt)
	assert.InDelta(t, 4.2/10, conc.Gauge().DataPoints().At(i).DoubleValue(), 1e-9)
	// Evaluations: relevance 0.92 and 0.31 against the default 0.5.
	assert.Equal(t, int64(1), sumValue(t, md, "llm.evaluations", map[string]any{"gen_ai.evaluation.name": "relevance", "below_threshold": true}))
	assert.Equal(t, int64(1), sumValue(t, md, "llm.evaluations", map[string]any{"gen_ai.evaluation.name": "relevance", "below_threshold": false}))
	// Hallucination 0.2 against its own threshold 0.3, read from span attributes.
	assert.Equal(t, int64(1), sumValue(t, md, "llm.evaluations", map[string]any{"gen_ai.evaluation.name": "hallucination", "below_threshold": true}))

	// Deprecated names: gen_ai.system az.ai.openai → azure.ai.openai, prompt/completion tokens.
	legacy := map[string]any{"gen_ai.provider.name": "azure.ai.openai", "gen_ai.request.model": "gpt-35-turbo", "gen_ai.token.type": "input"}
	assert.Equal(t, 50.0, histPoint(t, md, "gen_ai.client.token.usage", legacy).Sum())
	legacy["gen_ai.token.type"] = "output"
	assert.Equal(t, 10.0, histPoint(t, md, "gen_ai.client.token.usage", legacy).Sum())
	// Server spans.
	srv := map[string]any{"gen_ai.provider.name": "vllm"}
	assert.Equal(t, uint64(2), histPoint(t, md, "gen_ai.server.request.duration", srv).Count())
	sttft := histPoint(t, md, "gen_ai.server.time_to_first_token", srv)
	assert.InDelta(t, 0.345, sttft.Sum(), 1e-9)
	assert.Len(t, sttft.ExplicitBounds().AsRaw(), 16)
	stpot := histPoint(t, md, "gen_ai.server.time_per_output_token", srv)
	assert.InDelta(t, 1.955/127+3.7/255, stpot.Sum(), 1e-9)

	// Resource attributes: only the configured ones survive.
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes()
		_, hasInstance := attrs.Get("service.instance.id")
		_, hasHost := attrs.Get("host.name")
		assert.False(t, hasInstance || hasHost, "resource %v", attrs.AsRaw())
	}

	// Own telemetry: 9+2 spans, one not GenAI, one with end before start,
	// and one with unusable token values.
	assertCounter(t, tel, "otelcol_llm_metrics_spans", map[string]string{"outcome": "recorded"}, 9)
	assertCounter(t, tel, "otelcol_llm_metrics_spans", map[string]string{"outcome": "not_genai"}, 1)
	assertCounter(t, tel, "otelcol_llm_metrics_spans", map[string]string{"outcome": "invalid"}, 1)
	assertCounter(t, tel, "otelcol_llm_metrics_ignored_values", map[string]string{"attribute": "gen_ai.usage.input_tokens", "reason": "wrong_type"}, 1)
	assertCounter(t, tel, "otelcol_llm_metrics_ignored_values", map[string]string{"attribute": "gen_ai.usage.output_tokens", "reason": "negative"}, 1)
	assertCounter(t, tel, "otelcol_llm_metrics_flushes", map[string]string{"outcome": "success"}, 1)
}

// assertCounter checks the value of an int64 sum of the component's own
// telemetry for the point carrying attrs.
func assertCounter(t *testing.T, tel *componenttest.Telemetry, name string, attrs map[string]string, want int64) {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err, name)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is %T", name, m.Data)
	for _, dp := range sum.DataPoints {
		match := true
		for k, v := range attrs {
			got, ok := dp.Attributes.Value(attribute.Key(k))
			if !ok || got.AsString() != v {
				match = false
			}
		}
		if match {
			assert.Equal(t, want, dp.Value, "%s%v", name, attrs)
			return
		}
	}
	t.Errorf("no point of %s with %v in %+v", name, attrs, sum.DataPoints)
}

// genaiTraces builds n chat spans, each with a distinct request model.
func genaiTraces(n int, service string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < n; i++ {
		s := spans.AppendEmpty()
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Second)))
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
		s.Attributes().PutStr("gen_ai.provider.name", "openai")
		s.Attributes().PutStr("gen_ai.request.model", fmt.Sprintf("model-%d", i))
		s.Attributes().PutInt("gen_ai.usage.output_tokens", 10)
	}
	return td
}

func TestOverflow(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.AggregationCardinalityLimit = 3
	sink := new(consumertest.MetricsSink)
	c, clk, tel := newTestConnector(t, cfg, sink)

	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(10, "a")))
	// A new resource beyond the limit goes to the attribute-less resource.
	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(2, "b")))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	md := sink.AllMetrics()[0]

	overflow := map[string]any{"otel.metric.overflow": true}
	// Resource a: 3 own series, 7 spans in its overflow series.
	var overflowCounts []uint64
	m, _ := point(t, md, "gen_ai.client.operation.duration", map[string]any{"gen_ai.request.model": "model-0"})
	require.Equal(t, pmetric.MetricTypeHistogram, m.Type())
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		ms := rm.ScopeMetrics().At(0).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if ms.At(k).Name() != "gen_ai.client.operation.duration" {
				continue
			}
			dps := ms.At(k).Histogram().DataPoints()
			for p := 0; p < dps.Len(); p++ {
				if hasAttrs(dps.At(p).Attributes(), overflow) {
					assert.Equal(t, 1, dps.At(p).Attributes().Len(), "overflow series carries only otel.metric.overflow")
					overflowCounts = append(overflowCounts, dps.At(p).Count())
				}
			}
		}
	}
	assert.ElementsMatch(t, []uint64{7, 2}, overflowCounts)

	assertCounter(t, tel, "otelcol_llm_metrics_spans", map[string]string{"outcome": "recorded"}, 3)
	assertCounter(t, tel, "otelcol_llm_metrics_spans", map[string]string{"outcome": "overflow"}, 9)
	// Each overflowed chat span makes: duration, output tokens, requests,
	// concurrency and output-token counter measurements.
	assertCounter(t, tel, "otelcol_llm_metrics_overflow_points", nil, 9*5)
}

func TestDeltaResetsState(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.AggregationTemporality = temporalityDelta
	sink := new(consumertest.MetricsSink)
	c, clk, _ := newTestConnector(t, cfg, sink)

	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(2, "a")))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(1, "a")))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background()) // nothing new: nothing sent

	require.Len(t, sink.AllMetrics(), 2)
	second := sink.AllMetrics()[1]
	p := histPoint(t, second, "gen_ai.client.operation.duration", map[string]any{"gen_ai.request.model": "model-0"})
	assert.Equal(t, uint64(1), p.Count())
	assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(time.Second)), p.StartTimestamp())
	assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(2*time.Second)), p.Timestamp())
	m, _ := point(t, second, "gen_ai.client.operation.duration", map[string]any{"gen_ai.request.model": "model-0"})
	assert.Equal(t, pmetric.AggregationTemporalityDelta, m.Histogram().AggregationTemporality())
	assert.Equal(t, 0, c.agg.len())
}

func TestCumulativeKeepsStateAndExpires(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.SeriesExpiration = time.Minute
	sink := new(consumertest.MetricsSink)
	c, clk, tel := newTestConnector(t, cfg, sink)

	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(2, "a")))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	clk.t = clk.t.Add(30 * time.Second)
	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(1, "a")))
	c.flush(context.Background())

	second := sink.AllMetrics()[1]
	p := histPoint(t, second, "gen_ai.client.operation.duration", map[string]any{"gen_ai.request.model": "model-0"})
	assert.Equal(t, uint64(2), p.Count())
	assert.Equal(t, pcommon.NewTimestampFromTime(t0), p.StartTimestamp())
	assert.Equal(t, uint64(1), histPoint(t, second, "gen_ai.client.operation.duration", map[string]any{"gen_ai.request.model": "model-1"}).Count())

	// model-1 was last seen 31 s before this flush, model-0 just now.
	clk.t = clk.t.Add(45 * time.Second)
	c.flush(context.Background())
	assert.Equal(t, 1, c.agg.len())
	assertCounter(t, tel, "otelcol_llm_metrics_expired_series", nil, 1)
}

func TestExportFailureIsCounted(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.AggregationTemporality = temporalityDelta
	c, clk, tel := newTestConnector(t, cfg, consumertest.NewErr(errors.New("backend down")))
	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(1, "a")))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	assertCounter(t, tel, "otelcol_llm_metrics_flushes", map[string]string{"outcome": "error"}, 1)
	// duration + output tokens + requests + output_tokens counter + concurrency
	assertCounter(t, tel, "otelcol_llm_metrics_lost_points", map[string]string{"reason": "export_failed"}, 5)
}

func TestEvaluationNamesAreCapped(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Evaluation.MaxNames = 2
	sink := new(consumertest.MetricsSink)
	c, clk, tel := newTestConnector(t, cfg, sink)
	td := genaiTraces(1, "a")
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < 3; i++ {
		s := spans.AppendEmpty()
		spans.At(0).CopyTo(s)
		s.Attributes().PutStr("gen_ai.request.model", "model-0")
		s.Attributes().PutStr("gen_ai.evaluation.name", fmt.Sprintf("eval-%d", i))
		s.Attributes().PutDouble("gen_ai.evaluation.score.value", 0.1)
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	md := sink.AllMetrics()[0]
	assert.Equal(t, int64(1), sumValue(t, md, "llm.evaluations", map[string]any{"gen_ai.evaluation.name": "_OTHER", "below_threshold": true}))
	assertCounter(t, tel, "otelcol_llm_metrics_ignored_values", map[string]string{"attribute": "gen_ai.evaluation.name", "reason": "too_many_evaluation_names"}, 1)
}

func TestExemplarsKeepTheSlowest(t *testing.T) {
	cfg := goldenConfig()
	cfg.Exemplars = ExemplarsConfig{Enabled: true, MaxPerDataPoint: 1}
	sink := new(consumertest.MetricsSink)
	c, clk, _ := newTestConnector(t, cfg, sink)
	td := recordedSpans(t)
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	c.flush(context.Background())
	require.Len(t, sink.AllMetrics(), 2)

	gpt := map[string]any{"gen_ai.response.model": "gpt-4o-mini-2024-07-18", "tenant": "acme", "error.type": nil}
	slow := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1) // the 3 s chat
	ex := histPoint(t, sink.AllMetrics()[0], "gen_ai.client.operation.duration", gpt).Exemplars()
	require.Equal(t, 1, ex.Len())
	assert.InDelta(t, 3.0, ex.At(0).DoubleValue(), 1e-9)
	assert.Equal(t, slow.TraceID(), ex.At(0).TraceID())
	assert.Equal(t, slow.SpanID(), ex.At(0).SpanID())
	assert.Equal(t, slow.EndTimestamp(), ex.At(0).Timestamp())
	ttft := histPoint(t, sink.AllMetrics()[0], "gen_ai.client.operation.time_to_first_chunk", gpt).Exemplars()
	require.Equal(t, 1, ttft.Len())
	assert.InDelta(t, 0.9, ttft.At(0).DoubleValue(), 1e-9)
	// Exemplars belong to one flush interval: the next cumulative point has none.
	assert.Equal(t, 0, histPoint(t, sink.AllMetrics()[1], "gen_ai.client.operation.duration", gpt).Exemplars().Len())
}

func TestLatestTokenCountersByModality(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Target = "latest"
	sink := new(consumertest.MetricsSink)
	c, clk, _ := newTestConnector(t, cfg, sink)
	td := genaiTraces(2, "a")
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < 2; i++ {
		a := spans.At(i).Attributes()
		a.PutStr("gen_ai.request.model", "vision")
		a.PutInt("gen_ai.usage.input_tokens", 100)
		a.PutInt("gen_ai.usage.text.input_tokens", 60)
		a.PutInt("gen_ai.usage.image.input_tokens", 30)
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	md := sink.AllMetrics()[0]
	for modality, want := range map[string]int64{"text": 120, "image": 60, "unknown": 20} {
		assert.Equal(t, want, sumValue(t, md, "gen_ai.client.inference.usage.input_tokens", map[string]any{"gen_ai.token.modality": modality}), modality)
	}
	// No per-modality output attributes: all output tokens are "unknown".
	assert.Equal(t, int64(20), sumValue(t, md, "gen_ai.client.inference.usage.output_tokens", map[string]any{"gen_ai.token.modality": "unknown"}))
	m, _ := point(t, md, "gen_ai.client.inference.usage.output_tokens", map[string]any{"gen_ai.token.modality": "unknown"})
	assert.Equal(t, 1, m.Sum().DataPoints().Len())
	// Usage missing entirely is recorded as zero, so that the series exist.
	assert.Equal(t, int64(0), sumValue(t, md, "gen_ai.client.inference.usage.reasoning.output_tokens", map[string]any{"gen_ai.token.modality": "unknown"}))
	// The histograms are not split by modality.
	assert.Equal(t, 200.0, histPoint(t, md, "gen_ai.client.inference.operation.input_tokens", map[string]any{"gen_ai.request.model": "vision"}).Sum())
}

func TestAgentTokensAreNotCountedTwice(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c, clk, _ := newTestConnector(t, createDefaultConfig().(*Config), sink)
	td := genaiTraces(2, "a") // two chats with 10 output tokens each
	agent := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).CopyTo(agent)
	agent.SetKind(ptrace.SpanKindInternal)
	agent.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	agent.Attributes().PutInt("gen_ai.usage.output_tokens", 20) // its children's total
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	md := sink.AllMetrics()[0]

	var total int64
	for _, model := range []string{"model-0", "model-1"} {
		total += sumValue(t, md, "llm.output_tokens", map[string]any{"gen_ai.request.model": model, "gen_ai.operation.name": "chat"})
	}
	assert.Equal(t, int64(20), total)
	assert.Equal(t, int64(1), sumValue(t, md, "llm.requests", map[string]any{"gen_ai.operation.name": "invoke_agent", "outcome": "success"}))
	for i := 0; i < md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().Len(); i++ {
		m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(i)
		if m.Name() == "llm.output_tokens" {
			for p := 0; p < m.Sum().DataPoints().Len(); p++ {
				op, _ := m.Sum().DataPoints().At(p).Attributes().Get("gen_ai.operation.name")
				assert.NotEqual(t, "invoke_agent", op.Str())
			}
		}
	}
}

func TestFlushLoopSendsPeriodically(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MetricsFlushInterval = 10 * time.Millisecond
	sink := new(consumertest.MetricsSink)
	c, err := NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), genaiTraces(1, "a")))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) > 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Shutdown(context.Background()))
}

var _ component.Config = (*Config)(nil)
