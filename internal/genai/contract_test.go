package genai

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestIsInference(t *testing.T) {
	for _, tc := range []struct {
		op            string
		with, without bool
	}{
		{OpChat, true, true},
		{OpTextCompletion, true, true},
		{OpGenerateContent, true, true},
		{OpEmbeddings, true, false},
		{OpRetrieval, false, false},
		{OpExecuteTool, false, false},
		{OpCreateAgent, false, false},
		{OpInvokeAgent, false, false},
		{OpInvokeWorkflow, false, false},
		{"", false, false},
		{"Chat", false, false},
	} {
		assert.Equal(t, tc.with, IsInference(tc.op, WithEmbeddings), tc.op)
		assert.Equal(t, tc.without, IsInference(tc.op, WithoutEmbeddings), tc.op)
	}
}

func newSpan(attrs map[string]any) ptrace.Span {
	sp := ptrace.NewSpan()
	if err := sp.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
	return sp
}

// putInOrder puts key/value pairs in the given order (FromRaw sorts nothing,
// but a map has none).
func putInOrder(sp ptrace.Span, kv ...any) {
	for i := 0; i < len(kv); i += 2 {
		v := sp.Attributes().PutEmpty(kv[i].(string))
		if err := v.FromRaw(kv[i+1]); err != nil {
			panic(err)
		}
	}
}

func TestSpanFactsRead(t *testing.T) {
	sp := newSpan(map[string]any{
		AttrOperationName: OpChat, AttrProviderName: "openai", AttrRequestModel: "gpt-4o", AttrResponseModel: "gpt-4o-2024",
		AttrUsageInputTokens: 12, AttrUsageOutputTokens: "34", AttrUsageCacheReadInputTokens: 5.9,
		AttrUsageCacheWriteInputTokens: 2, AttrUsageReasoningOutputTokens: 7, AttrTimeToFirstChunk: "0.25",
		AttrServerAddress: "api.openai.com", AttrServerPort: 443, AttrEvaluationName: "relevance", AttrEvaluationScore: "0.75",
		AttrUsageAudioInputTokens: 4, AttrUsageTextCacheReadInputTokens: 3, "gen_ai.usage.total_tokens": 46,
	})
	var f SpanFacts
	f.Read(sp, func(k string, why Invalid) { t.Errorf("%s rejected: %d", k, why) })
	assert.Equal(t, OpChat, f.Operation)
	assert.Equal(t, "openai", f.Provider)
	assert.Equal(t, "gpt-4o", f.RequestModel)
	assert.Equal(t, "gpt-4o-2024", f.ResponseModel)
	assert.Equal(t, Tokens{12, true}, f.InputTokens)
	assert.Equal(t, Tokens{34, true}, f.OutputTokens)
	assert.Equal(t, Tokens{5, true}, f.CacheReadInputTokens, "a double is truncated")
	assert.Equal(t, Tokens{2, true}, f.CacheWriteInputTokens)
	assert.Equal(t, Tokens{7, true}, f.ReasoningOutputTokens)
	assert.Equal(t, Seconds{0.25, true}, f.TTFT)
	assert.False(t, f.Failed)
	assert.Empty(t, f.ErrorType)
	assert.Equal(t, "api.openai.com", f.ServerAddress)
	port, ok := f.ServerPort()
	require.True(t, ok)
	assert.Equal(t, int64(443), port.Int())
	assert.Equal(t, "relevance", f.EvaluationName)
	assert.Equal(t, Score{0.75, true}, f.EvaluationScore)
	assert.Equal(t, uint16(1<<2|1<<8), f.ModalitySet)
	assert.Equal(t, int64(4), f.Modality[2])
	assert.Equal(t, int64(3), f.Modality[8])
}

func TestSpanFactsModalityIndex(t *testing.T) {
	// SpanFacts.Modality is indexed like ModalityUsage.
	for i, u := range ModalityUsage {
		var f SpanFacts
		fact, why := f.Attr(u.Attr, pcommon.NewValueInt(int64(i+1)))
		require.True(t, fact, u.Attr)
		require.Equal(t, Valid, why)
		assert.Equal(t, uint16(1)<<i, f.ModalitySet, u.Attr)
		assert.Equal(t, int64(i+1), f.Modality[i], u.Attr)
	}
	var f SpanFacts
	_, why := f.Attr(AttrUsageTextInputTokens, pcommon.NewValueInt(-1))
	assert.Equal(t, InvalidNegative, why)
	assert.Zero(t, f.ModalitySet)
}

func TestSpanFactsAlternatives(t *testing.T) {
	// Deprecated and foreign names stand in when the current name is absent.
	var f SpanFacts
	f.Read(newSpan(map[string]any{
		LegacyAttrSystem: "vertex_ai", LegacyAttrUsagePromptTokens: 3, LegacyAttrUsageCompletionTokens: 4,
		LegacyAttrUsageCacheCreation: 5, VLLMAttrTimeToFirstToken: 0.5,
	}), nil)
	assert.Equal(t, "gcp.vertex_ai", f.Provider)
	assert.Equal(t, Tokens{3, true}, f.InputTokens)
	assert.Equal(t, Tokens{4, true}, f.OutputTokens)
	assert.Equal(t, Tokens{5, true}, f.CacheWriteInputTokens)
	assert.Equal(t, Seconds{0.5, true}, f.TTFT)

	f.Read(newSpan(map[string]any{LegacyAttrSystem: "anthropic"}), nil)
	assert.Equal(t, "anthropic", f.Provider, "values without a new spelling are kept")

	// The current name wins whatever the order of the attributes.
	for _, order := range [][]any{
		{AttrProviderName, "openai", LegacyAttrSystem, "az.ai.openai", AttrUsageInputTokens, 10, LegacyAttrUsagePromptTokens, 1,
			AttrUsageOutputTokens, 20, LegacyAttrUsageCompletionTokens, 2, AttrUsageCacheWriteInputTokens, 30, LegacyAttrUsageCacheCreation, 3,
			AttrTimeToFirstChunk, 0.1, VLLMAttrTimeToFirstToken, 0.9},
		{LegacyAttrSystem, "az.ai.openai", AttrProviderName, "openai", LegacyAttrUsagePromptTokens, 1, AttrUsageInputTokens, 10,
			LegacyAttrUsageCompletionTokens, 2, AttrUsageOutputTokens, 20, LegacyAttrUsageCacheCreation, 3, AttrUsageCacheWriteInputTokens, 30,
			VLLMAttrTimeToFirstToken, 0.9, AttrTimeToFirstChunk, 0.1},
	} {
		sp := ptrace.NewSpan()
		putInOrder(sp, order...)
		f.Read(sp, nil)
		assert.Equal(t, "openai", f.Provider)
		assert.Equal(t, Tokens{10, true}, f.InputTokens)
		assert.Equal(t, Tokens{20, true}, f.OutputTokens)
		assert.Equal(t, Tokens{30, true}, f.CacheWriteInputTokens)
		assert.Equal(t, Seconds{0.1, true}, f.TTFT)
	}

	// An unusable current value leaves the alternative.
	f.Read(newSpan(map[string]any{AttrUsageInputTokens: -1, LegacyAttrUsagePromptTokens: 8, AttrTimeToFirstChunk: "soon", VLLMAttrTimeToFirstToken: 0.3}), nil)
	assert.Equal(t, Tokens{8, true}, f.InputTokens)
	assert.Equal(t, Seconds{0.3, true}, f.TTFT)
}

func TestSpanFactsErrorRule(t *testing.T) {
	var f SpanFacts
	sp := newSpan(map[string]any{AttrOperationName: OpChat})
	sp.Status().SetCode(ptrace.StatusCodeError)
	f.Read(sp, nil)
	assert.True(t, f.Failed)
	assert.Equal(t, ErrorTypeOther, f.ErrorType, "status ERROR without error.type is _OTHER")

	sp = newSpan(map[string]any{AttrErrorType: "timeout"})
	f.Read(sp, nil)
	assert.True(t, f.Failed, "error.type alone is an error")
	assert.Equal(t, "timeout", f.ErrorType)

	sp = newSpan(map[string]any{AttrErrorType: ""})
	sp.Status().SetCode(ptrace.StatusCodeOk)
	f.Read(sp, nil)
	assert.False(t, f.Failed, "an empty error.type is absent")
	assert.Empty(t, f.ErrorType)

	sp = newSpan(map[string]any{AttrErrorType: 429})
	f.Read(sp, nil)
	assert.Equal(t, "429", f.ErrorType, "non-string values are read as text")
}

func TestSpanFactsRejected(t *testing.T) {
	sp := newSpan(map[string]any{
		AttrUsageInputTokens: "many", AttrUsageOutputTokens: -3, AttrUsageCacheReadInputTokens: true,
		AttrTimeToFirstChunk: math.NaN(), VLLMAttrTimeToFirstToken: -0.5, AttrUsageReasoningOutputTokens: "1.5",
		AttrEvaluationScore: math.Inf(-1),
	})
	got := map[string]Invalid{}
	var f SpanFacts
	f.Read(sp, func(k string, why Invalid) { got[k] = why })
	assert.Equal(t, map[string]Invalid{
		AttrEvaluationScore:  InvalidNotFinite,
		AttrUsageInputTokens: InvalidType, AttrUsageOutputTokens: InvalidNegative, AttrUsageCacheReadInputTokens: InvalidType,
		AttrTimeToFirstChunk: InvalidNotFinite, VLLMAttrTimeToFirstToken: InvalidNegative, AttrUsageReasoningOutputTokens: InvalidType,
	}, got)
	assert.False(t, f.InputTokens.OK || f.OutputTokens.OK || f.CacheReadInputTokens.OK || f.ReasoningOutputTokens.OK || f.TTFT.OK)

	// A deprecated name is not even read when the current one was used.
	got = map[string]Invalid{}
	sp = ptrace.NewSpan()
	putInOrder(sp, AttrUsageInputTokens, 1, LegacyAttrUsagePromptTokens, "x", AttrTimeToFirstChunk, 1.0, VLLMAttrTimeToFirstToken, "x")
	f.Read(sp, func(k string, why Invalid) { got[k] = why })
	assert.Empty(t, got)
}

func TestSpanFactsAttrAndReset(t *testing.T) {
	var f SpanFacts
	fact, why := f.Attr("http.request.method", pcommon.NewValueStr("POST"))
	assert.False(t, fact, "not one of the facts: the caller's")
	assert.Equal(t, Valid, why)
	fact, why = f.Attr(AttrTimeToFirstChunk, pcommon.NewValueDouble(math.Inf(1)))
	assert.True(t, fact)
	assert.Equal(t, InvalidNotFinite, why)
	f.Attr(AttrOperationName, pcommon.NewValueStr(OpEmbeddings))
	f.End(ptrace.StatusCodeUnset)
	assert.Equal(t, OpEmbeddings, f.Operation)
	f.Reset()
	assert.Equal(t, SpanFacts{}, f)
}

func TestSpanFactsReadAllocatesNothing(t *testing.T) {
	sp := newSpan(map[string]any{
		AttrOperationName: OpChat, AttrProviderName: "openai", AttrRequestModel: "m", AttrUsageInputTokens: 12,
		AttrUsageOutputTokens: 34, AttrTimeToFirstChunk: 0.2, AttrErrorType: "timeout", "other": "x",
	})
	var f SpanFacts
	assert.Zero(t, testing.AllocsPerRun(100, func() { f.Read(sp, nil) }))
}

func TestTimePerOutputToken(t *testing.T) {
	tpot, ok := TimePerOutputToken(2.5, 0.5, 5)
	assert.True(t, ok)
	assert.InDelta(t, 0.5, tpot, 1e-12)
	for _, n := range []int64{-1, 0, 1} {
		_, ok = TimePerOutputToken(2.5, 0.5, n)
		assert.False(t, ok, "undefined below two output tokens (%d)", n)
	}
	d, ok := TimePerOutputToken(time.Second, 0, 4)
	assert.True(t, ok)
	assert.Equal(t, time.Second/3, d, "durations divide as integers")
	neg, ok := TimePerOutputToken(1.0, 1.5, 3)
	assert.True(t, ok)
	assert.InDelta(t, -0.25, neg, 1e-12, "the formula does not clamp")
}

func TestExplicitHistogram(t *testing.T) {
	h := ExplicitHistogram{Bounds: []float64{1, 2, 4}}
	dp := pmetric.NewHistogramDataPoint()
	h.CopyTo(dp)
	assert.Equal(t, []uint64{0, 0, 0, 0}, dp.BucketCounts().AsRaw(), "empty: zero counts")
	assert.Zero(t, dp.Count())

	for _, v := range []float64{0.5, 1, 1.5, 2, 3, 4, 5, math.Inf(1), math.Inf(-1)} {
		h.Record(v)
	}
	dp = pmetric.NewHistogramDataPoint()
	h.CopyTo(dp)
	assert.Equal(t, []float64{1, 2, 4}, dp.ExplicitBounds().AsRaw())
	assert.Equal(t, []uint64{3, 2, 2, 2}, dp.BucketCounts().AsRaw(), "buckets are (lo, hi]")
	assert.EqualValues(t, 9, dp.Count())
	assert.Equal(t, math.Inf(-1), dp.Min())
	assert.Equal(t, math.Inf(1), dp.Max())

	h.Reset()
	assert.Zero(t, h.Count)
	assert.Equal(t, []uint64{0, 0, 0, 0}, h.Counts)
	h.Record(3)
	assert.Equal(t, 3.0, h.Min)
	assert.Equal(t, 3.0, h.Max)
	assert.Equal(t, 3.0, h.Sum)

	var s ExplicitHistogram
	s.RecordStats(2)
	s.RecordStats(-1)
	assert.Nil(t, s.Counts, "stats only")
	ep := pmetric.NewExponentialHistogramDataPoint()
	s.CopyStatsTo(ep)
	assert.EqualValues(t, 2, ep.Count())
	assert.Equal(t, 1.0, ep.Sum())
	assert.Equal(t, -1.0, ep.Min())
	assert.Equal(t, 2.0, ep.Max())
}

func TestChunkEventNames(t *testing.T) {
	require.Len(t, ChunkEventNames, 4)
	assert.Contains(t, ChunkEventNames, EventLoadgenLiveChunk, "live mode's per-chunk events give load_report per-gap ITL")
	assert.Contains(t, ChunkEventNames, EventLoadgenResponseChunk)
}

// BenchmarkSpanFactsRead reads a typical chat span: the usual facts, a
// deprecated name, a modality count and attributes that are no facts.
func BenchmarkSpanFactsRead(b *testing.B) {
	sp := newSpan(map[string]any{
		AttrOperationName: OpChat, AttrProviderName: "openai", AttrRequestModel: "gpt-4o", AttrResponseModel: "gpt-4o-2024",
		AttrUsageInputTokens: 12, AttrUsageOutputTokens: 34, AttrUsageCacheReadInputTokens: 5,
		LegacyAttrUsagePromptTokens: 12, AttrTimeToFirstChunk: 0.25, AttrServerAddress: "api.openai.com", AttrServerPort: 443,
		AttrUsageTextInputTokens: 10, "gen_ai.usage.total_tokens": 46, "http.route": "/v1/chat/completions", "user.id": "u-1",
	})
	var f SpanFacts
	b.ReportAllocs()
	for b.Loop() {
		f.Read(sp, nil)
	}
}
