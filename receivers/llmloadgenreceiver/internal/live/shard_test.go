package live

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

type shardSpan struct {
	start        time.Time
	runID        string
	index, count int64
	hasTTFT      bool
}

func shardSpans(run *liveRun) []shardSpan {
	var out []shardSpan
	for _, td := range run.traces.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			res := rs.Resource().Attributes()
			id, _ := res.Get(genai.AttrLoadgenRunID)
			idx, _ := res.Get(genai.AttrLoadgenShardIndex)
			cnt, _ := res.Get(genai.AttrLoadgenShardCount)
			ss := rs.ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				spans := ss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					_, ttft := sp.Attributes().Get(genai.AttrTimeToFirstChunk)
					out = append(out, shardSpan{start: sp.StartTimestamp().AsTime(), runID: id.AsString(),
						index: idx.Int(), count: cnt.Int(), hasTTFT: ttft})
				}
			}
		}
	}
	return out
}

func scheduleMetric(md []pmetric.Metrics) (lagCount uint64, skipped int64, identity bool) {
	for _, m := range md {
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			rm := m.ResourceMetrics().At(i)
			_, identity = rm.Resource().Attributes().Get(genai.AttrLoadgenShardIndex)
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				ms := rm.ScopeMetrics().At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					switch ms.At(k).Name() {
					case genai.MetricLoadgenScheduleLag:
						lagCount = ms.At(k).Histogram().DataPoints().At(0).Count()
					case genai.MetricLoadgenScheduleSkipped:
						skipped = ms.At(k).Sum().DataPoints().At(0).IntValue()
					}
				}
			}
		}
	}
	return lagCount, skipped, identity
}

// Three shards in one process, as three pods would run them: a common
// start_at, each sends its phase of a constant rate, and together they send
// the global schedule (start_at + k/rate) with the run id and the shard on
// every span and metric.
func TestLiveShardsSendTheGlobalSchedule(t *testing.T) {
	mock := startMock(t, nil)
	const count, requests, rate = 3, 30, 40.0
	startAt := time.Now().Add(500 * time.Millisecond).UTC().Truncate(time.Millisecond)
	var runs []*liveRun
	for i := 0; i < count; i++ {
		cfg := liveConfig(mock.URL(), requests, rate)
		cfg.RunID = "run-e"
		cfg.StartAt = startAt.Format(time.RFC3339Nano)
		cfg.Shard = config.ShardConfig{Index: new(i), Count: count}
		runs = append(runs, startLive(t, cfg))
	}
	var all []shardSpan
	for i, run := range runs {
		want := []int{10, 10, 10}[i]
		run.spans(t, want)
		run.stop(t)
		got := shardSpans(run)
		require.Len(t, got, want, "shard %d sends its share of the requests", i)
		for _, sp := range got {
			assert.Equal(t, "run-e", sp.runID)
			assert.Equal(t, int64(i), sp.index)
			assert.Equal(t, int64(count), sp.count)
			assert.True(t, sp.hasTTFT)
		}
		lagN, skipped, ident := scheduleMetric(run.metrics.AllMetrics())
		assert.True(t, ident, "metrics carry the shard")
		assert.Equal(t, uint64(want), lagN, "one lag sample per request")
		assert.Zero(t, skipped)
		all = append(all, got...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	for k, sp := range all {
		want := startAt.Add(time.Duration(float64(k+1) / rate * float64(time.Second)))
		assert.WithinDuration(t, want, sp.start, time.Millisecond, "request %d of the global schedule", k+1)
	}
}

// A shard that starts after start_at skips the arrivals it missed, counts
// them, and does not send them in a burst.
func TestLiveLateShardSkipsInsteadOfBursting(t *testing.T) {
	mock := startMock(t, nil)
	cfg := liveConfig(mock.URL(), 0, 20)
	cfg.Duration = 2 * time.Second
	cfg.RunID = "run-late"
	cfg.StartAt = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	began := time.Now()
	run := startLive(t, cfg)
	require.Eventually(t, func() bool { return run.traces.SpanCount() >= 15 }, 20*time.Second, 20*time.Millisecond)
	time.Sleep(time.Until(began.Add(1200 * time.Millisecond))) // the schedule ends 1 s after began
	run.stop(t)
	spans := shardSpans(run)
	for _, sp := range spans {
		assert.False(t, sp.start.Before(began.Add(-loadgen.SkipSlack)), "no request scheduled before the shard started is sent")
	}
	// 39 arrivals in 2 s at 20/s: those due more than SkipSlack before the
	// receiver started (at least the 18 of the first 0.95 s) are skipped and
	// counted, the rest are sent.
	_, skipped, _ := scheduleMetric(run.metrics.AllMetrics())
	assert.GreaterOrEqual(t, skipped, int64(18), "the missed second is counted")
	assert.EqualValues(t, 39, int64(len(spans))+skipped, "every arrival is either sent or counted as skipped")
}
