package synthetic

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// afapConfig is a bounded, reproducible as_fast_as_possible configuration.
func afapConfig(requests int64) *config.Config {
	cfg := config.Default()
	cfg.Timing = config.TimingAFAP
	cfg.Seed = 42
	cfg.StartTime = "2026-11-29T12:00:00Z"
	cfg.Requests = requests
	cfg.ProgressInterval = 0
	return cfg
}

// runSync runs a synthetic configuration to completion on the calling
// goroutine and returns the runner.
func runSync(t testing.TB, cfg *config.Config, traces consumer.Traces, metrics consumer.Metrics, logs consumer.Logs) *Runner {
	t.Helper()
	l := &loadgen.Run{Config: cfg, Settings: receivertest.NewNopSettings(metadata.Type), Traces: traces, Metrics: metrics, Logs: logs}
	r, err := New(l)
	require.NoError(t, err)
	s := r
	s.init()
	s.run(context.Background())
	return s
}

func TestAFAPBoundedRequestCount(t *testing.T) {
	sink := &consumertest.TracesSink{}
	s := runSync(t, afapConfig(500), sink, nil, nil)
	assert.EqualValues(t, 500, s.totals.requests)
	assert.EqualValues(t, s.totals.spans, sink.SpanCount())
	assert.Greater(t, sink.SpanCount(), 1000)
}

func TestStartShutdownRealtimeEmits(t *testing.T) {
	cfg := config.Default()
	cfg.Arrival = config.ArrivalConfig{Type: config.ArrivalConstant, Rate: 200}
	cfg.Requests = 20
	cfg.FlushInterval = 10 * time.Millisecond
	// Short latencies so that the bounded run finishes quickly.
	for i := range cfg.Models {
		cfg.Models[i].TTFT = config.Distribution{Type: config.DistConstant, Value: 0.005}
		cfg.Models[i].ITL = config.Distribution{Type: config.DistConstant, Value: 0.0001}
		cfg.Models[i].OutputTokens = config.Distribution{Type: config.DistConstant, Value: 5}
	}
	cfg.Agent.ToolLatency = config.Distribution{Type: config.DistConstant, Value: 0.001}
	sink := &consumertest.TracesSink{}
	r, err := New(&loadgen.Run{Config: cfg, Settings: receivertest.NewNopSettings(metadata.Type), Traces: sink})
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool {
		return countRequests(sink) == 20
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))
}

// countRequests counts root spans.
func countRequests(sink *consumertest.TracesSink) int {
	n := 0
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				spans := ss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					if spans.At(k).ParentSpanID().IsEmpty() {
						n++
					}
				}
			}
		}
	}
	return n
}
