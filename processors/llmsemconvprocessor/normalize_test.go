package llmsemconvprocessor

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

// runSpan processes one span with attributes attrs and returns it.
func runSpan(t *testing.T, cfg *Config, name string, attrs map[string]any) ptrace.Span {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	td := tracesFromGolden(t, goldenFile{Spans: []goldenSpan{{Name: name, DurationMs: 1000, Attributes: attrs}}})
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	return sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

func get(t *testing.T, sp ptrace.Span, k string) pcommon.Value {
	t.Helper()
	v, ok := sp.Attributes().Get(k)
	require.True(t, ok, "missing %s in %v", k, sp.Attributes().AsRaw())
	return v
}

func TestOverwriteAndConflicts(t *testing.T) {
	attrs := map[string]any{
		"openinference.span.kind":   "LLM",
		"llm.token_count.prompt":    10,
		"gen_ai.usage.input_tokens": 12,
	}
	cfg := createDefaultConfig().(*Config)
	sp := runSpan(t, cfg, "x", attrs)
	assert.Equal(t, int64(12), get(t, sp, "gen_ai.usage.input_tokens").Int(), "existing official value wins")
	assert.Equal(t, int64(10), get(t, sp, "llm.token_count.prompt").Int(), "the disagreeing original stays")
	assert.Equal(t, []any{"llm.token_count.prompt"}, get(t, sp, attrConflicts).Slice().AsRaw())

	cfg.Overwrite = true
	sp = runSpan(t, cfg, "x", attrs)
	assert.Equal(t, int64(10), get(t, sp, "gen_ai.usage.input_tokens").Int())
	_, kept := sp.Attributes().Get("llm.token_count.prompt")
	assert.False(t, kept)
}

func TestKeepOriginals(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.RemoveOriginals = false
	sp := runSpan(t, cfg, "ChatCompletion", map[string]any{
		"openinference.span.kind":              "LLM",
		"llm.model_name":                       "m",
		"llm.input_messages.0.message.role":    "user",
		"llm.input_messages.0.message.content": "hi",
	})
	assert.Equal(t, "m", get(t, sp, "llm.model_name").Str())
	assert.Equal(t, "hi", get(t, sp, "llm.input_messages.0.message.content").Str())
	assert.Equal(t, "m", get(t, sp, "gen_ai.request.model").Str())
	assert.Equal(t, "ChatCompletion", get(t, sp, attrOriginalSpanName).Str())
	assert.Equal(t, "chat m", sp.Name())
}

func TestDialectRestriction(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Dialects = []string{"openinference"}
	sp := runSpan(t, cfg, "ai.generateText.doGenerate", map[string]any{
		"ai.operationId": "ai.generateText.doGenerate",
		"ai.model.id":    "gpt-4o",
	})
	assert.Equal(t, 2, sp.Attributes().Len(), "a disabled dialect is left alone: %v", sp.Attributes().AsRaw())
	assert.Equal(t, "ai.generateText.doGenerate", sp.Name())
}

func TestSpanFixDisabled(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Span = SpanConfig{}
	sp := runSpan(t, cfg, "ChatCompletion", map[string]any{"openinference.span.kind": "LLM", "llm.model_name": "m"})
	assert.Equal(t, "ChatCompletion", sp.Name())
	assert.Equal(t, ptrace.SpanKindInternal, sp.Kind())
}

func TestInvalidValuesAreKeptAndReported(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	sp := runSpan(t, cfg, "x", map[string]any{
		"openinference.span.kind":   "LLM",
		"llm.token_count.prompt":    "many",
		"llm.invocation_parameters": "{not json",
	})
	assert.Equal(t, "many", get(t, sp, "llm.token_count.prompt").Str())
	assert.Equal(t, "{not json", get(t, sp, "llm.invocation_parameters").Str())
	assert.ElementsMatch(t, []any{"llm.token_count.prompt", "llm.invocation_parameters"}, get(t, sp, attrUnmapped).Slice().AsRaw())
}

func TestInvocationParametersWithUnknownFieldStay(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	sp := runSpan(t, cfg, "x", map[string]any{
		"openinference.span.kind":   "LLM",
		"llm.invocation_parameters": `{"temperature": "0.5", "logit_bias": {"50256": -100}}`,
	})
	assert.InDelta(t, 0.5, get(t, sp, "gen_ai.request.temperature").Double(), 1e-12, "numeric strings become numbers")
	assert.Contains(t, get(t, sp, "llm.invocation_parameters").Str(), "logit_bias")
}

func TestUnchangedSpanIsUntouched(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	attrs := map[string]any{"http.method": "GET", "gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
	sp := runSpan(t, cfg, "chat m", attrs)
	assert.Equal(t, attrs, sp.Attributes().AsRaw())
}

func TestWrapperUsageIsNotCountedTwice(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Derive.Prices = []PriceConfig{{Model: "gpt-4o", Input: 1, Output: 1}}
	sp := runSpan(t, cfg, "ai.generateText", map[string]any{
		"ai.operationId":            "ai.generateText",
		"ai.model.id":               "gpt-4o",
		"ai.usage.promptTokens":     100,
		"ai.usage.completionTokens": 10,
	})
	_, ok := sp.Attributes().Get("gen_ai.usage.input_tokens")
	assert.False(t, ok)
	assert.Equal(t, int64(100), get(t, sp, attrRollupPrefix+"input_tokens").Int())
	_, ok = sp.Attributes().Get(attrCostTotal)
	assert.False(t, ok, "no cost on a roll-up")
	_, ok = sp.Attributes().Get(attrOperationName)
	assert.False(t, ok)
}

func TestTruncationKeepsJSONValid(t *testing.T) {
	long := make([]byte, 5000)
	for i := range long {
		long[i] = "aé\"\\"[i%4]
	}
	msgs := []map[string]any{}
	for i := 0; i < 20; i++ {
		msgs = append(msgs, map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": string(long)}}})
	}
	raw, err := json.Marshal(msgs)
	require.NoError(t, err)
	for _, max := range []int{64, 100, 1000, 40000} {
		out := truncateContent(string(raw), max)
		assert.LessOrEqual(t, len(out), max)
		assert.True(t, json.Valid([]byte(out)), "max %d: %s", max, out)
	}
	assert.Equal(t, "abc", truncateContent("abc", 10))
	plain := truncateContent("héllo wörld, this is plain text that is long", 20)
	assert.LessOrEqual(t, len(plain), 20)
	assert.Contains(t, plain, truncationMarker)
}

func TestLuhnRejectsNonCards(t *testing.T) {
	p, err := newContentPolicy(&ContentConfig{BuiltinPatterns: []string{"card_number"}})
	require.NoError(t, err)
	st := newBatchStats(0)
	out, n, _ := p.redact("order 1234 5678 9012 3456 and card 4111-1111-1111-1111", st)
	assert.Equal(t, 1, n)
	assert.Equal(t, "order 1234 5678 9012 3456 and card [REDACTED:card_number]", out)
}

func sumCounter(t *testing.T, tel *componenttest.Telemetry, name string, match map[string]string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err)
	var total int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		ok := true
		for k, v := range match {
			got, found := dp.Attributes.Value(attributeKey(k))
			ok = ok && found && got.AsString() == v
		}
		if ok {
			total += dp.Value
		}
	}
	return total
}

func TestSelfTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processor.Settings{ID: processortest.NewNopSettings(metadata.Type).ID, TelemetrySettings: tel.NewTelemetrySettings(), BuildInfo: processortest.NewNopSettings(metadata.Type).BuildInfo}
	cfg := createDefaultConfig().(*Config)
	cfg.Content.InputMessages = GroupPolicy{Action: ActionRedact}
	cfg.Content.OutputMessages = GroupPolicy{Action: ActionTruncate, MaxBytes: 64}
	cfg.Content.ToolContent = GroupPolicy{Action: ActionDrop}
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	td := tracesFromGolden(t, goldenFile{Spans: []goldenSpan{
		{Name: "a", Attributes: map[string]any{
			"openinference.span.kind":               "LLM",
			"llm.model_name":                        "m",
			"llm.input_messages.0.message.role":     "user",
			"llm.input_messages.0.message.content":  "write to bob@example.com",
			"llm.output_messages.0.message.content": "a long answer that certainly does not fit into sixty-four bytes of JSON",
			"reranker.top_k":                        3,
		}},
		{Name: "b", Attributes: map[string]any{"http.method": "GET"}},
		{Name: "c", Attributes: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": "{}"}},
	}})
	require.NoError(t, p.ConsumeTraces(context.Background(), td))

	assert.Equal(t, int64(1), sumCounter(t, tel, metricSpans, map[string]string{"dialect": "openinference", "outcome": "partially_mapped"}))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricSpans, map[string]string{"dialect": "none", "outcome": "unchanged"}))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricSpans, map[string]string{"dialect": "none", "outcome": "normalized"}))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricAttributes, map[string]string{"dialect": "openinference", "outcome": "unmapped"}))
	assert.GreaterOrEqual(t, sumCounter(t, tel, metricAttributes, map[string]string{"dialect": "openinference", "outcome": "mapped"}), int64(3))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricContent, map[string]string{"group": "input_messages", "action": "redacted"}))
	assert.Equal(t, int64(len("bob@example.com")), sumCounter(t, tel, metricContentBytes, map[string]string{"group": "input_messages", "action": "redacted"}))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricContent, map[string]string{"group": "output_messages", "action": "truncated"}))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricContent, map[string]string{"group": "tool_content", "action": "dropped"}))
	assert.Equal(t, int64(2), sumCounter(t, tel, metricContentBytes, map[string]string{"group": "tool_content", "action": "dropped"}))
	assert.Equal(t, int64(1), sumCounter(t, tel, metricRedactions, map[string]string{"pattern": "email"}))
}

func FuzzNormalize(f *testing.F) {
	f.Add("llm.input_messages.0.message.content", `[{"type":"text","text":"hi"}]`, "openinference.span.kind", "LLM", int64(3))
	f.Add("ai.prompt.messages", `[{"role":"user","content":[{"type":"tool-call","args":{}}]}]`, "ai.operationId", "ai.generateText.doGenerate", int64(-1))
	f.Add("gen_ai.prompt.99999999999.role", "{", "llm.invocation_parameters", `{"stop":[1,null,"x"],"n":1e400}`, int64(0))
	f.Add("langfuse.observation.completion_start_time", "2026-13-01", "langfuse.observation.usage_details", `{"input":"x"}`, int64(7))
	f.Add("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"a@b.co"}]}]`, "gen_ai.completion.0.tool_calls.x.id", "[]", int64(1))
	cfg := createDefaultConfig().(*Config)
	cfg.Content.InputMessages = GroupPolicy{Action: ActionRedact, MaxBytes: 80}
	cfg.Content.OutputMessages = GroupPolicy{Action: ActionTruncate, MaxBytes: 64}
	cfg.Derive.Prices = []PriceConfig{{Model: "*x", Input: 1}}
	cfg.Derive.Prices[0].Model = "m*"
	n, err := newNormalizer(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, i int64) {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetStartTimestamp(1e18)
		sp.SetEndTimestamp(1e18 + pcommon.Timestamp(i))
		sp.Attributes().PutStr(k1, v1)
		sp.Attributes().PutStr(k2, v2)
		sp.Attributes().PutInt("llm.token_count.completion", i)
		sp.Attributes().PutStr("llm.model_name", "m"+v2)
		ev := sp.Events().AppendEmpty()
		ev.SetName("gen_ai.choice")
		ev.Attributes().PutStr("message", v1)
		it := item{attrs: sp.Attributes(), span: sp, isSpan: true, start: sp.StartTimestamp(), name: sp.Name()}
		n.process(&it, newBatchStats(len(n.t.dialects)))
		for _, k := range []string{attrInputMessages, attrOutputMsgs, attrSystemInstr, attrToolDefs} {
			if v, ok := sp.Attributes().Get(k); ok {
				require.True(t, json.Valid([]byte(v.Str())), "%s is not valid JSON: %q", k, v.Str())
			}
		}
		if v, ok := sp.Attributes().Get(attrOutputMsgs); ok {
			require.LessOrEqual(t, len(v.Str()), 64)
		}
	})
}

// TestConcurrentBatches runs batches of every golden dialect through one
// processor from several goroutines (the collector calls processors
// concurrently); with -race this checks the shared table and pools.
func TestConcurrentBatches(t *testing.T) {
	inputs := benchInputs(t)
	p, err := newSemconvProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, src := range inputs {
				td := ptrace.NewTraces()
				src.CopyTo(td)
				_, err := p.processTraces(context.Background(), td)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
}

// TestTableAssumptions checks what the hot path relies on: value maps looked
// up case-insensitively hold lower-case keys only, and
// gen_ai.operation.name is an official name (its presence comes from the
// scan), never a foreign key.
func TestTableAssumptions(t *testing.T) {
	for _, target := range []string{"v1.41", "latest"} {
		tb, err := compileTable(mappingYAML, target, nil)
		require.NoError(t, err)
		for _, d := range tb.dialects {
			for _, op := range d.ops {
				for k := range op.values {
					assert.Equal(t, strings.ToLower(k), k, "%s: operation value %q", d.name, k)
				}
			}
			for k := range d.pairValues {
				assert.Equal(t, strings.ToLower(k), k, "%s: provider pair %q", d.name, k)
			}
			for k := range d.wrapperValues {
				assert.Equal(t, strings.ToLower(k), k, "%s: wrapper value %q", d.name, k)
			}
		}
		_, foreign := tb.exact[attrOperationName]
		assert.False(t, foreign)
		c := tb.classify(attrOperationName)
		assert.Equal(t, clsOfficial, c.kind)
		assert.NotZero(t, c.flags&clsHasOp)
	}
}

// normalizeSpan runs one span named name, whose attributes fill sets, through
// a normalizer built from cfg; it returns the span's attributes and the
// counts recorded.
func normalizeSpan(t *testing.T, cfg *Config, name string, fill func(a pcommon.Map)) (pcommon.Map, *batchStats) {
	t.Helper()
	n, err := newNormalizer(cfg)
	require.NoError(t, err)
	sp := ptrace.NewTraces().ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName(name)
	fill(sp.Attributes())
	it := item{attrs: sp.Attributes(), span: sp, isSpan: true, name: sp.Name()}
	st := newBatchStats(len(n.t.dialects))
	n.process(&it, st)
	return sp.Attributes(), st
}

// TestRemovedOriginalsByIndex checks that moving a renamed original's value
// and removing consumed originals by index leave unrelated attributes, and
// the values of kept foreign attributes, untouched.
func TestRemovedOriginalsByIndex(t *testing.T) {
	a, _ := normalizeSpan(t, createDefaultConfig().(*Config), "ChatCompletion", func(a pcommon.Map) {
		a.PutStr("before", "b")
		a.PutStr("openinference.span.kind", "LLM")
		a.PutStr("llm.model_name", "m-1")
		a.PutInt("llm.token_count.prompt", 5)
		a.PutStr("input.value", "kept")
		a.PutStr("gen_ai.request.model", "m-0") // official: the foreign model disagrees
		a.PutStr("after", "a")
	})
	got := a.AsRaw()
	assert.Equal(t, "b", got["before"])
	assert.Equal(t, "a", got["after"])
	assert.Equal(t, "kept", got["input.value"])
	assert.Equal(t, int64(5), got["gen_ai.usage.input_tokens"])
	assert.Equal(t, "m-0", got["gen_ai.request.model"])
	assert.NotContains(t, got, "llm.token_count.prompt")
	assert.NotContains(t, got, "openinference.span.kind")
	// llm.model_name differs from the request model: it becomes the response model.
	assert.Equal(t, "m-1", got["gen_ai.response.model"])
	assert.NotContains(t, got, "llm.model_name")
}

// TestLentValuesOnlyFromRemovedOriginals: originals whose value could be
// lent to a new attribute keep their value when a conflict keeps them.
func TestLentValuesOnlyFromRemovedOriginals(t *testing.T) {
	a, _ := normalizeSpan(t, createDefaultConfig().(*Config), "ChatCompletion", func(a pcommon.Map) {
		a.PutStr("openinference.span.kind", "LLM")
		a.PutStr("llm.invocation_parameters", `{"model": "m-2", "temperature": 0.7}`)
		a.PutDouble("gen_ai.request.temperature", 0.1) // disagrees: the JSON stays
		a.PutStr("llm.input_messages.0.message.role", "user")
		a.PutStr("llm.input_messages.0.message.content", "hello")
		a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"other"}]}]`) // disagrees
		a.PutStr("llm.output_messages.0.message.role", "assistant")
		a.PutStr("llm.output_messages.0.message.content", "hi")
		a.PutStr("llm.provider", "openai")
		a.PutStr("llm.system", "openai")
	})
	got := a.AsRaw()
	// Kept as conflicts, with their values intact.
	assert.JSONEq(t, `{"model": "m-2", "temperature": 0.7}`, got["llm.invocation_parameters"].(string))
	assert.Equal(t, "user", got["llm.input_messages.0.message.role"])
	assert.Equal(t, "hello", got["llm.input_messages.0.message.content"])
	assert.Equal(t, 0.1, got["gen_ai.request.temperature"])
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"other"}]}]`, got["gen_ai.input.messages"].(string))
	// Written from originals that went away.
	assert.Equal(t, "m-2", got["gen_ai.request.model"])
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"hi"}],"finish_reason":"stop"}]`, got["gen_ai.output.messages"].(string))
	assert.Equal(t, "openai", got["gen_ai.provider.name"])
	for _, k := range []string{"llm.output_messages.0.message.role", "llm.output_messages.0.message.content", "llm.provider", "llm.system"} {
		assert.NotContains(t, got, k)
	}
	assert.ElementsMatch(t, []any{"llm.invocation_parameters", "llm.input_messages.0.message.content", "llm.input_messages.0.message.role"}, got[attrConflicts])
}
