package spanguardprocessor

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sort"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/processortest"
)

// benchRequests builds n requests of traces×spansPerTrace spans each, shaped
// like an instrumented LLM service: per trace a server span, a model call and
// tool/retrieval children, each with a handful of GenAI attributes.
func benchRequests(n, traces, spansPerTrace int) []ptrace.Traces {
	out := make([]ptrace.Traces, n)
	id := uint64(1)
	for i := range out {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "chat-api")
		rs.Resource().Attributes().PutStr("service.version", "1.4.2")
		rs.Resource().Attributes().PutStr("k8s.pod.name", "chat-api-7d9f8b6c5-x2x9z")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("opentelemetry.instrumentation.openai")
		spans := ss.Spans()
		for tr := 0; tr < traces; tr++ {
			var tid pcommon.TraceID
			tid[0], tid[8], tid[15] = byte(i), byte(i>>8), byte(tr)
			tid[4] = byte(i >> 16)
			root := id
			for s := 0; s < spansPerTrace; s++ {
				sp := spans.AppendEmpty()
				sp.SetTraceID(tid)
				sp.SetSpanID(spanID(id))
				if s > 0 {
					sp.SetParentSpanID(spanID(root))
				}
				id++
				sp.SetName([]string{"POST /v1/chat/completions", "chat gpt-4o", "execute_tool search", "retrieval"}[min(s, 3)])
				sp.SetKind(ptrace.SpanKindClient)
				start := t0.Add(time.Duration(s) * 150 * time.Millisecond)
				sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
				sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(120 * time.Millisecond)))
				a := sp.Attributes()
				a.PutStr("gen_ai.operation.name", "chat")
				a.PutStr("gen_ai.provider.name", "openai")
				a.PutStr("gen_ai.request.model", "gpt-4o")
				a.PutInt("gen_ai.usage.input_tokens", 812)
				a.PutInt("gen_ai.usage.output_tokens", 164)
				a.PutStr("server.address", "api.openai.com")
				a.PutDouble("gen_ai.request.temperature", 0.2)
				a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d", id))
			}
		}
		out[i] = td
	}
	return out
}

func newBatchProcessor(tb testing.TB, next consumer.Traces) processor.Traces {
	f := batchprocessor.NewFactory()
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), next)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func newGuardProcessor(tb testing.TB, next consumer.Traces, mutate func(*Config)) processor.Traces {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	if mutate != nil {
		mutate(cfg)
	}
	set := processortest.NewNopSettings(f.Type())
	set.TelemetrySettings = componenttest.NewNopTelemetrySettings()
	p, err := f.CreateTraces(context.Background(), set, cfg, next)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// freshTraceIDs makes the trace ids of a cloned request unique to request
// number n, so that no trace grows across requests.
func freshTraceIDs(td ptrace.Traces, n uint64) {
	forEachSpan([]ptrace.Traces{td}, func(_ pcommon.Resource, s ptrace.Span) {
		tid := s.TraceID()
		binary.LittleEndian.PutUint64(tid[8:], n)
		s.SetTraceID(tid)
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure sends `requests` requests (clones of templates, with fresh trace
// ids, cloned outside the measured windows) through a new processor,
// including its shutdown flush, and returns wall and CPU nanoseconds per span.
// CPU time is the process's (rusage), so work the processor does on its own
// goroutines counts too.
func measure(tb testing.TB, newP func() processor.Traces, templates []ptrace.Traces, requests int) (wallNs, cpuNs float64) {
	spansPer := templates[0].SpanCount()
	p := newP()
	ctx := context.Background()
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		tb.Fatal(err)
	}
	batch := make([]ptrace.Traces, 0, 64)
	var wall, cpu time.Duration
	for i := 0; i < requests; {
		batch = batch[:0]
		for k := 0; k < cap(batch) && i+k < requests; k++ {
			td := ptrace.NewTraces()
			templates[(i+k)%len(templates)].CopyTo(td)
			freshTraceIDs(td, uint64(i+k))
			batch = append(batch, td)
		}
		runtime.GC() // the clones' garbage is not the processor's
		w0, c0 := time.Now(), cpuTime()
		for _, td := range batch {
			if err := p.ConsumeTraces(ctx, td); err != nil {
				tb.Fatal(err)
			}
		}
		if i+len(batch) >= requests {
			if err := p.Shutdown(ctx); err != nil {
				tb.Fatal(err)
			}
		}
		wall += time.Since(w0)
		cpu += cpuTime() - c0
		i += len(batch)
	}
	spans := float64(requests * spansPer)
	return float64(wall.Nanoseconds()) / spans, float64(cpu.Nanoseconds()) / spans
}

// BenchmarkNoExplosion runs the core batch processor (v0.165.0, default
// config) and span_guard (default config) on the same requests (100 spans:
// 5 traces of 20 spans with 8 GenAI attributes each, far under every
// budget), alternating three rounds of 10,000 requests each in one run, with
// a no-op next consumer. It reports the medians of wall and CPU time per
// span, their span_guard/batch ratios, and the CPU time per span of the
// protobuf size walk alone on the same spans (pdata's ProtoMarshaler.SpanSize
// and span_guard's own sizer), which byte-bounded batching needs and
// item-count batching does not. A third
// variant, span_guard with no trace budget (byte- and span-bounded batching
// only, no per-trace state), shows what the budgets cost.
func BenchmarkNoExplosion(b *testing.B) {
	const rounds, requests = 3, 10000
	templates := benchRequests(64, 5, 20)
	nop := consumertest.NewNop()
	for i := 0; i < b.N; i++ {
		var bw, bc, gw, gc, uc []float64
		noBudget := func(c *Config) { c.TraceBudget.MaxSpans, c.TraceBudget.MaxBytes = 0, 0 }
		for round := 0; round < rounds; round++ {
			w, c := measure(b, func() processor.Traces { return newBatchProcessor(b, nop) }, templates, requests)
			bw, bc = append(bw, w), append(bc, c)
			w, c = measure(b, func() processor.Traces { return newGuardProcessor(b, nop, nil) }, templates, requests)
			gw, gc = append(gw, w), append(gc, c)
			_, c = measure(b, func() processor.Traces { return newGuardProcessor(b, nop, noBudget) }, templates, requests)
			uc = append(uc, c)
		}
		b.ReportMetric(median(uc), "guard-nobudget-cpu-ns/span")
		b.ReportMetric(median(uc)/median(bc), "nobudget-cpu-ratio")
		b.ReportMetric(median(bw), "batch-ns/span")
		b.ReportMetric(median(gw), "guard-ns/span")
		b.ReportMetric(median(gw)/median(bw), "wall-ratio")
		b.ReportMetric(median(bc), "batch-cpu-ns/span")
		b.ReportMetric(median(gc), "guard-cpu-ns/span")
		b.ReportMetric(median(gc)/median(bc), "cpu-ratio")
		pdataSize, guardSize := sizeWalkNs(templates, marshaler.SpanSize), sizeWalkNs(templates, spanSize)
		b.ReportMetric(pdataSize, "sizewalk-cpu-ns/span")
		b.ReportMetric(guardSize, "guard-sizer-cpu-ns/span")
	}
}

// sizeWalkNs is the CPU time per span of computing every span's encoded size
// with size (pdata's ProtoMarshaler.SpanSize, or span_guard's own sizer).
func sizeWalkNs(templates []ptrace.Traces, size func(ptrace.Span) int) float64 {
	const reps = 200
	n := 0
	c0 := cpuTime()
	for r := 0; r < reps; r++ {
		for _, td := range templates {
			forEachSpan([]ptrace.Traces{td}, func(_ pcommon.Resource, s ptrace.Span) {
				n += size(s) & 1
			})
		}
	}
	spans := reps * len(templates) * templates[0].SpanCount()
	return float64((cpuTime() - c0).Nanoseconds()) / float64(spans+n*0)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// countingSink counts spans (and summary spans) and drops the data, so the
// benchmark's heap is the processor's, not the sink's.
type countingSink struct {
	spans, summaries atomic.Int64
}

func (c *countingSink) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *countingSink) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.spans.Add(int64(td.SpanCount()))
	forEachSpan([]ptrace.Traces{td}, func(_ pcommon.Resource, s ptrace.Span) {
		if s.Name() == summarySpanName {
			c.summaries.Add(1)
		}
	})
	return nil
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapBytes() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// BenchmarkMillionSpanTrace sends one runaway agent trace of 1,000,000
// spans (requests of 5,000 spans, generated as they are sent) through
// span_guard with a budget of 10,000 spans, and through the batch processor
// for comparison. It reports the spans each forwards, and the peak heap
// (runtime/metrics /memory/classes/heap/objects:bytes, sampled after every
// request) during the run.
func BenchmarkMillionSpanTrace(b *testing.B) {
	const total, per, budget = 1_000_000, 5000, 10000
	run := func(b *testing.B, newP func(consumer.Traces) processor.Traces) {
		var outSpans, summaries int64
		var peak uint64
		var elapsed time.Duration
		for i := 0; i < b.N; i++ {
			sink := &countingSink{}
			p := newP(sink)
			if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			base := heapBytes()
			peak = base
			start := time.Now()
			sampler := &heapSampler{next: p, peak: &peak}
			explode(b, sampler, newTraceBuilder(byte(i+1), "runaway-agent"), total, per)
			if err := p.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
			elapsed += time.Since(start)
			outSpans, summaries = sink.spans.Load(), sink.summaries.Load()
		}
		b.ReportMetric(float64(outSpans), "out-spans")
		b.ReportMetric(float64(summaries), "summary-spans")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*total), "ns/span")
	}
	b.Run("span_guard", func(b *testing.B) {
		run(b, func(next consumer.Traces) processor.Traces {
			return newGuardProcessor(b, next, func(c *Config) { c.TraceBudget.MaxSpans = budget })
		})
	})
	b.Run("batchprocessor", func(b *testing.B) {
		run(b, func(next consumer.Traces) processor.Traces { return newBatchProcessor(b, next) })
	})
}

// heapSampler passes requests on and samples the heap after each.
type heapSampler struct {
	next consumer.Traces
	peak *uint64
}

func (h *heapSampler) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	err := h.next.ConsumeTraces(ctx, td)
	if v := heapBytes(); v > *h.peak {
		*h.peak = v
	}
	return err
}
