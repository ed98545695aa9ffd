package loadreportexporter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// t0 is the start of every synthetic run: 2026-11-29T12:00:00Z.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixedNow is the clock of golden reports.
func fixedNow() time.Time { return t0.Add(10 * time.Minute) }

type req struct {
	at       time.Duration // send time since t0
	dur      time.Duration
	ttft     time.Duration // 0: not streamed
	out, in  int64
	errType  string
	target   string
	model    string
	scenario string
	chunks   []time.Duration // chunk event offsets from send, optional
	rate     float64         // target rate attribute, optional
}

func addReq(ss ptrace.SpanSlice, r req) {
	sp := ss.AppendEmpty()
	sp.SetName("chat " + r.model)
	sp.SetKind(ptrace.SpanKindClient)
	start := t0.Add(r.at)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(r.dur)))
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", r.model)
	a.PutStr("server.address", r.target)
	a.PutInt("server.port", 8000)
	a.PutStr("llm_loadgen.scenario", r.scenario)
	if r.in > 0 {
		a.PutInt("gen_ai.usage.input_tokens", r.in)
	}
	if r.rate > 0 {
		a.PutDouble("llm_loadgen.target_rate", r.rate)
	}
	if r.errType != "" {
		a.PutStr("error.type", r.errType)
		sp.Status().SetCode(ptrace.StatusCodeError)
		return
	}
	a.PutInt("gen_ai.usage.output_tokens", r.out)
	if r.ttft > 0 {
		a.PutBool("gen_ai.request.stream", true)
		a.PutDouble("gen_ai.response.time_to_first_chunk", r.ttft.Seconds())
	}
	for _, c := range r.chunks {
		ev := sp.Events().AppendEmpty()
		ev.SetName("gen_ai.response.chunk")
		ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(c)))
	}
}

// knownRun is a small run with known values: two targets, two scenarios,
// every kind of error, chunk events on some requests, a span_guard summary
// span and spans that are not model calls.
func knownRun() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "llm-loadgen")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 40; i++ {
		r := req{at: time.Duration(i) * 250 * time.Millisecond, dur: time.Duration(1000+25*i) * time.Millisecond,
			ttft: time.Duration(100+10*i) * time.Millisecond, out: 100, in: 200,
			target: "vllm-a", model: "llama-3.1-8b", scenario: "chat", rate: 4}
		switch i {
		case 7:
			r.errType = "429"
		case 19:
			r.errType = "cancelled"
		case 31:
			r.errType = "timeout"
		}
		if i%10 == 0 {
			r.chunks = []time.Duration{r.ttft, r.ttft + 20*time.Millisecond, r.ttft + 50*time.Millisecond}
		}
		addReq(ss, r)
	}
	for i := 0; i < 10; i++ {
		addReq(ss, req{at: time.Duration(i) * time.Second, dur: 3 * time.Second, ttft: 2500 * time.Millisecond,
			out: 50, in: 1000, target: "vllm-b", model: "qwen-2.5-7b", scenario: "rag"})
	}
	tool := ss.AppendEmpty()
	tool.SetName("execute_tool search")
	tool.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	tool.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
	tool.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Second)))
	http := ss.AppendEmpty()
	http.SetName("POST /v1/chat/completions")
	sum := ss.AppendEmpty()
	sum.SetName("span_guard.summary")
	sum.Attributes().PutInt("span_guard.spans.received", 120)
	sum.Attributes().PutInt("span_guard.spans.dropped", 6)
	sum.Attributes().PutInt("span_guard.spans.dropped.span_budget", 6)
	return td
}

// knownMetrics carries span_guard counters and a GPU whose memory grows by
// 60 MiB per minute.
func knownMetrics() pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	sum := func(name string, v int64, reason string) {
		m := ms.AppendEmpty()
		m.SetName(name)
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp := s.DataPoints().AppendEmpty()
		dp.SetIntValue(v)
		dp.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(10 * time.Second)))
		if reason != "" {
			dp.Attributes().PutStr("reason", reason)
		}
	}
	sum("otelcol_span_guard_spans_received_total", 1000, "")
	sum("otelcol_span_guard_spans_dropped_total", 30, "span_budget")
	sum("otelcol_span_guard_spans_dropped_total", 10, "byte_budget")
	sum("otelcol_span_guard_spans_refused_total", 5, "memory_limit")
	mem := ms.AppendEmpty()
	mem.SetName("hw.gpu.memory.usage")
	memSum := mem.SetEmptySum()
	memSum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	util := ms.AppendEmpty()
	util.SetName("hw.gpu.utilization")
	utilG := util.SetEmptyGauge()
	limit := ms.AppendEmpty()
	limit.SetName("hw.gpu.memory.limit")
	limitSum := limit.SetEmptySum()
	limitSum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := 0; i <= 10; i++ {
		ts := pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
		dp := memSum.DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(int64(40<<30) + int64(i)<<20) // +1 MiB/s
		dp.Attributes().PutStr("hw.id", "GPU-0")
		dp.Attributes().PutStr("hw.name", "NVIDIA H100")
		u := utilG.DataPoints().AppendEmpty()
		u.SetTimestamp(ts)
		u.SetDoubleValue(0.5 + float64(i)/40)
		u.Attributes().PutStr("hw.id", "GPU-0")
		l := limitSum.DataPoints().AppendEmpty()
		l.SetTimestamp(ts)
		l.SetIntValue(80 << 30)
		l.Attributes().PutStr("hw.id", "GPU-0")
	}
	return md
}

func testConfig(t *testing.T) *Config {
	cfg := createDefaultConfig()
	cfg.Directory = t.TempDir()
	cfg.Interval = 0
	return cfg
}

// newTestState returns a state on a fixed clock.
func newTestState(cfg *Config) *state { return newState(cfg, fixedNow, newJoiner(cfg.Join)) }

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Bytes(t, filepath.Join("testdata", "golden", name), got)
}

var bg = context.Background()

func ptsOf(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }
