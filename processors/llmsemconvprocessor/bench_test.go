package llmsemconvprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

// benchBatch is the number of spans processed per benchmark operation.
const benchBatch = 100

// benchInputs are the spans the benchmarks (and bench/ottl, the OTTL anchor)
// process: the first span of each dialect's golden input, and a span in the
// official conventions that needs no change. They are also written as OTLP
// JSON to testdata/bench/ by TestWriteBenchInputs -update.
func benchInputs(t testing.TB) map[string]ptrace.Traces {
	files, err := filepath.Glob("testdata/golden/*.in.yaml")
	require.NoError(t, err)
	out := map[string]ptrace.Traces{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var g goldenFile
		require.NoError(t, yaml.Unmarshal(raw, &g))
		if len(g.Spans) == 0 || len(g.Config) > 0 {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".in.yaml")
		out[name] = batchOf(tracesFromGolden(t, goldenFile{Spans: g.Spans[:1]}))
	}
	// A typical OpenInference chat span (openinference-instrumentation-openai,
	// three input messages, one output message): 22 attributes.
	out["openinference_typical"] = batchOf(tracesFromGolden(t, goldenFile{Spans: []goldenSpan{{
		Name: "ChatCompletion", DurationMs: 1200,
		Attributes: map[string]any{
			"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini-2024-07-18", "llm.provider": "openai", "llm.system": "openai",
			"llm.invocation_parameters":             `{"model": "gpt-4o-mini", "temperature": 0.7, "max_tokens": 512}`,
			"llm.input_messages.0.message.role":     "system",
			"llm.input_messages.0.message.content":  "You are a helpful assistant for a bookshop.",
			"llm.input_messages.1.message.role":     "user",
			"llm.input_messages.1.message.content":  "Do you have the new Le Guin translation?",
			"llm.input_messages.2.message.role":     "assistant",
			"llm.input_messages.2.message.content":  "Which title do you mean?",
			"llm.output_messages.0.message.role":    "assistant",
			"llm.output_messages.0.message.content": "Yes, 'The Word for World is Forest' is in stock.",
			"llm.token_count.prompt":                58, "llm.token_count.completion": 14, "llm.token_count.total": 72,
			"session.id": "c-81", "user.id": "u-5",
			"input.value": `{"messages": "..."}`, "input.mime_type": "application/json",
			"output.value": "Yes, 'The Word for World is Forest' is in stock.", "output.mime_type": "text/plain",
		},
	}}}))
	out["unchanged_official"] = batchOf(tracesFromGolden(t, goldenFile{Spans: []goldenSpan{{
		Name: "chat gpt-4o", Kind: "client", DurationMs: 900,
		Attributes: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
			"gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.response.id": "chatcmpl-1", "gen_ai.request.temperature": 0.2,
			"gen_ai.response.finish_reasons": []any{"stop"}, "server.address": "api.openai.com", "server.port": 443,
			"http.response.status_code": 200,
		},
	}}}))
	return out
}

func batchOf(one ptrace.Traces) ptrace.Traces {
	td := ptrace.NewTraces()
	one.ResourceSpans().At(0).Resource().CopyTo(td.ResourceSpans().AppendEmpty().Resource())
	ss := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
	src := one.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for i := 0; i < benchBatch; i++ {
		src.CopyTo(ss.Spans().AppendEmpty())
	}
	return td
}

// TestWriteBenchInputs keeps testdata/bench/*.json (the shared OTLP inputs of
// bench/ottl) in step with the golden inputs.
func TestWriteBenchInputs(t *testing.T) {
	var m ptrace.JSONMarshaler
	for name, td := range benchInputs(t) {
		raw, err := m.MarshalTraces(td)
		require.NoError(t, err)
		path := filepath.Join("testdata", "bench", name+".json")
		if goldentest.Updating() {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, raw, 0o600))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run TestWriteBenchInputs -update")
		require.JSONEq(t, string(want), string(raw), name)
	}
}

// BenchmarkNormalize reports ns/span and allocs/span per dialect. Each
// operation processes a fresh copy of a 100-span batch; the copy is not
// timed (nor are its allocations counted).
func BenchmarkNormalize(b *testing.B) {
	inputs := benchInputs(b)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	sortStrings(names)
	for _, name := range names {
		src := inputs[name]
		b.Run(name, func(b *testing.B) {
			p, err := newSemconvProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
			require.NoError(b, err)
			ctx := context.Background()
			benchCopies(b, src, func(td ptrace.Traces) {
				if _, err := p.processTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// benchCopies runs run on a fresh copy of the benchBatch-span batch src per
// operation and reports ns/span. Each copy is decoded from src's protobuf
// encoding, as the OTLP receiver hands a batch to the pipeline (slices
// with the capacity the decoder gave them, nothing shared between
// operations); the decoding is not timed, nor are its allocations counted.
func benchCopies(b *testing.B, src ptrace.Traces, run func(ptrace.Traces)) {
	var m ptrace.ProtoMarshaler
	var u ptrace.ProtoUnmarshaler
	raw, err := m.MarshalTraces(src)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		td, err := u.UnmarshalTraces(raw)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		run(td)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/span")
}

// BenchmarkUnchangedInPlace processes the same official batch again and
// again: nothing to change, so nothing may be allocated per span.
func BenchmarkUnchangedInPlace(b *testing.B) {
	src := benchInputs(b)["unchanged_official"]
	p, err := newSemconvProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.processTraces(ctx, src); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/span")
}

func TestUnchangedSpansAllocateNothing(t *testing.T) {
	src := benchInputs(t)["unchanged_official"]
	p, err := newSemconvProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
	require.NoError(t, err)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(50, func() {
		_, _ = p.processTraces(ctx, src)
	})
	// Per batch of 100 spans: at most the fixed cost of recording the
	// batch's counters, nothing per span.
	require.Less(t, allocs, float64(benchBatch)/10, "allocations per %d-span batch", benchBatch)
}
