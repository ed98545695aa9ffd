package ottl

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
)

// inputs are shared with processors/llmsemconvprocessor (BenchmarkNormalize).
const inputs = "../../processors/llmsemconvprocessor/testdata/bench"

// spansPerInput is the batch size of every input file.
const spansPerInput = 100

// kindMap expands a value mapping into one guarded statement per value.
func kindMap(from, to string, values map[string]string) []string {
	var out []string
	for k, v := range values {
		out = append(out, `set(attributes["`+to+`"], "`+v+`") where attributes["`+from+`"] == "`+k+`" and attributes["`+to+`"] == nil`)
	}
	return append(out, `delete_key(attributes, "`+from+`")`)
}

// rename moves a foreign attribute to its GenAI name unless the GenAI name is set.
func rename(from, to, conv string) []string {
	val := `attributes["` + from + `"]`
	if conv != "" {
		val = conv + "(" + val + ")"
	}
	return []string{
		`set(attributes["` + to + `"], ` + val + `) where attributes["` + from + `"] != nil and attributes["` + to + `"] == nil`,
		`delete_key(attributes, "` + from + `")`,
	}
}

// statements is the OTTL equivalent of llm_semconv's renames for
// OpenInference, OpenLLMetry and the Vercel AI SDK, as far as OTTL can
// express them: no loops, so indexed messages cannot be rebuilt into
// gen_ai.input/output.messages, lists cannot be value-mapped element by
// element, and nothing is reported about unmapped attributes.
func statements() []string {
	var s []string
	add := func(x ...string) { s = append(s, x...) }
	// OpenInference
	add(kindMap("openinference.span.kind", "gen_ai.operation.name", map[string]string{
		"LLM": "chat", "EMBEDDING": "embeddings", "RETRIEVER": "retrieval", "TOOL": "execute_tool", "AGENT": "invoke_agent", "CHAIN": "invoke_workflow",
	})...)
	add(`set(attributes["gen_ai.provider.name"], "azure.ai.openai") where attributes["llm.provider"] == "azure" and attributes["llm.system"] == "openai"`)
	add(rename("llm.provider", "gen_ai.provider.name", "")...)
	add(rename("llm.system", "gen_ai.provider.name", "")...)
	add(rename("llm.model_name", "gen_ai.request.model", "")...)
	add(rename("llm.token_count.prompt", "gen_ai.usage.input_tokens", "Int")...)
	add(rename("llm.token_count.completion", "gen_ai.usage.output_tokens", "Int")...)
	add(rename("llm.token_count.prompt_details.cache_read", "gen_ai.usage.cache_read.input_tokens", "Int")...)
	add(`delete_key(attributes, "llm.token_count.total")`)
	add(rename("session.id", "gen_ai.conversation.id", "")...)
	add(`set(cache["params"], ParseJSON(attributes["llm.invocation_parameters"])) where attributes["llm.invocation_parameters"] != nil`)
	for k, to := range map[string]string{"temperature": "gen_ai.request.temperature", "max_tokens": "gen_ai.request.max_tokens", "top_p": "gen_ai.request.top_p", "seed": "gen_ai.request.seed", "stream": "gen_ai.request.stream"} {
		add(`set(attributes["` + to + `"], cache["params"]["` + k + `"]) where cache["params"]["` + k + `"] != nil`)
	}
	add(`delete_key(attributes, "llm.invocation_parameters")`)
	// OpenLLMetry
	add(kindMap("llm.request.type", "gen_ai.operation.name", map[string]string{"chat": "chat", "completion": "text_completion", "embedding": "embeddings"})...)
	add(rename("gen_ai.system", "gen_ai.provider.name", "")...)
	add(rename("gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens", "Int")...)
	add(rename("gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens", "Int")...)
	add(rename("gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cache_read.input_tokens", "Int")...)
	add(rename("llm.is_streaming", "gen_ai.request.stream", "")...)
	add(`delete_key(attributes, "llm.usage.total_tokens")`)
	add(`set(attributes["gen_ai.response.finish_reasons"], [attributes["llm.response.finish_reason"]]) where attributes["llm.response.finish_reason"] != nil`)
	add(`delete_key(attributes, "llm.response.finish_reason")`)
	// Vercel AI SDK
	add(kindMap("ai.operationId", "gen_ai.operation.name", map[string]string{"ai.generateText.doGenerate": "chat", "ai.streamText.doStream": "chat", "ai.embed.doEmbed": "embeddings", "ai.toolCall": "execute_tool"})...)
	add(rename("ai.model.id", "gen_ai.request.model", "")...)
	add(`set(attributes["gen_ai.provider.name"], "openai") where attributes["ai.model.provider"] == "openai.chat"`)
	add(`delete_key(attributes, "ai.model.provider")`)
	add(rename("ai.usage.promptTokens", "gen_ai.usage.input_tokens", "Int")...)
	add(rename("ai.usage.completionTokens", "gen_ai.usage.output_tokens", "Int")...)
	add(rename("ai.response.id", "gen_ai.response.id", "")...)
	add(rename("ai.response.model", "gen_ai.response.model", "")...)
	add(`set(attributes["gen_ai.response.time_to_first_chunk"], Double(attributes["ai.response.msToFirstChunk"]) / 1000.0) where attributes["ai.response.msToFirstChunk"] != nil`)
	add(`delete_key(attributes, "ai.response.msToFirstChunk")`)
	// Span name and kind of inference spans.
	add(`set(name, Concat([attributes["gen_ai.operation.name"], attributes["gen_ai.request.model"]], " ")) where attributes["gen_ai.operation.name"] == "chat" and attributes["gen_ai.request.model"] != nil`)
	add(`set(kind, SPAN_KIND_CLIENT) where attributes["gen_ai.operation.name"] == "chat"`)
	return s
}

func newTransform(b testing.TB) processor.Traces {
	f := transformprocessor.NewFactory()
	cfg := f.CreateDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{
		"error_mode": "ignore",
		"trace_statements": []any{map[string]any{
			"context":    "span",
			"statements": toAny(statements()),
		}},
	}).Unmarshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func load(b testing.TB, name string) ptrace.Traces {
	raw, err := os.ReadFile(filepath.Join(inputs, name+".json"))
	if err != nil {
		b.Fatal(err)
	}
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(raw)
	if err != nil {
		b.Fatal(err)
	}
	return td
}

// BenchmarkOTTL runs the statement set on the inputs llm_semconv's
// BenchmarkNormalize uses, with the same method: a fresh copy of a 100-span
// batch per operation, the copy not timed (nor its allocations counted).
func BenchmarkOTTL(b *testing.B) {
	for _, name := range []string{"openinference_typical", "openinference_chat", "openllmetry_chat", "vercel_ai", "unchanged_official"} {
		src := load(b, name)
		b.Run(name, func(b *testing.B) {
			p := newTransform(b)
			if err := p.Start(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = p.Shutdown(context.Background()) }()
			ctx := context.Background()
			td := ptrace.NewTraces()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				src.CopyTo(td)
				b.StartTimer()
				if err := p.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spansPerInput), "ns/span")
		})
	}
}

// TestStatementsApply checks that the OTTL set parses and does the renames
// on the OpenInference input, so the benchmark measures real work.
func TestStatementsApply(t *testing.T) {
	f := transformprocessor.NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{
		"error_mode":       "propagate",
		"trace_statements": []any{map[string]any{"context": "span", "statements": toAny(statements())}},
	}).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ConsumeTraces(context.Background(), load(t, "openinference_chat")); err != nil {
		t.Fatal(err)
	}
	sp := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for k, want := range map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini-2024-07-18", "gen_ai.usage.input_tokens": int64(42), "gen_ai.request.temperature": 0.2} {
		v, ok := sp.Attributes().Get(k)
		if !ok || v.AsRaw() != want {
			t.Errorf("%s = %v, want %v", k, v.AsRaw(), want)
		}
	}
	if sp.Name() != "chat gpt-4o-mini-2024-07-18" {
		t.Errorf("name %q", sp.Name())
	}
}
