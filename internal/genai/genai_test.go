package genai

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParseTarget(t *testing.T) {
	for _, want := range Targets {
		got, err := ParseTarget(string(want))
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParseTarget("1.41")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"v1.41", "latest"`)
}

func TestBucketsAreStrictlyIncreasing(t *testing.T) {
	for name, b := range map[string][]float64{
		"duration": DurationBuckets, "token": TokenBuckets,
		"server ttft": ServerTimeToFirstTokenBuckets, "server tpot": ServerTimePerOutputTokenBuckets,
	} {
		assert.True(t, slices.IsSorted(b), name)
		assert.Len(t, slices.Compact(slices.Clone(b)), len(b), name)
	}
	// Values from the v1.41 metric definitions.
	assert.Len(t, DurationBuckets, 14)
	assert.Len(t, TokenBuckets, 14)
	assert.Len(t, ServerTimeToFirstTokenBuckets, 16)
	assert.Len(t, ServerTimePerOutputTokenBuckets, 13)
}

func defs(m ClientMetrics) []MetricDef {
	return []MetricDef{m.Duration, m.TimeToFirstChunk, m.TimePerOutputChunk, m.TokenUsage, m.InputTokens, m.OutputTokens,
		m.InputTokensTotal, m.OutputTokensTotal, m.CacheReadInputTokensTotal, m.CacheWriteInputTokens, m.ReasoningOutputTokens}
}

func TestMetricDefinitionsAreComplete(t *testing.T) {
	ops := []string{OpChat, OpTextCompletion, OpGenerateContent, OpEmbeddings, OpRetrieval, OpExecuteTool, OpInvokeAgent, OpInvokeWorkflow, "custom"}
	for _, target := range Targets {
		for _, op := range ops {
			m := ClientMetricsFor(target, op)
			require.NotEmpty(t, m.Duration.Name, "%s %s", target, op)
			for _, d := range defs(m) {
				if d.Name == "" {
					continue
				}
				assert.NotEmpty(t, d.Unit, d.Name)
				assert.NotEmpty(t, d.Description, d.Name)
				if d.Instrument == Histogram {
					assert.NotEmpty(t, d.Buckets, d.Name)
				}
			}
		}
		s := ServerMetricsFor(target)
		for _, d := range []MetricDef{s.RequestDuration, s.TimeToFirstToken, s.TimePerOutputToken} {
			assert.NotEmpty(t, d.Name)
			assert.Equal(t, UnitSeconds, d.Unit)
		}
	}
}

func TestNamesPerTarget(t *testing.T) {
	assert.Equal(t, "gen_ai.client.operation.duration", ClientMetricsFor(TargetV1_41, OpChat).Duration.Name)
	assert.Equal(t, "gen_ai.client.token.usage", ClientMetricsFor(TargetV1_41, OpEmbeddings).TokenUsage.Name)
	assert.Equal(t, "gen_ai.client.inference.duration", ClientMetricsFor(TargetLatest, OpChat).Duration.Name)
	assert.Empty(t, ClientMetricsFor(TargetLatest, OpChat).TokenUsage.Name)
	assert.Equal(t, "gen_ai.client.embeddings.duration", ClientMetricsFor(TargetLatest, OpEmbeddings).Duration.Name)
	assert.Equal(t, "gen_ai.client.operation.duration", ClientMetricsFor(TargetLatest, OpRetrieval).Duration.Name)
	assert.Equal(t, "gen_ai.invoke_agent.duration", ClientMetricsFor(TargetLatest, OpInvokeAgent).Duration.Name)
}
