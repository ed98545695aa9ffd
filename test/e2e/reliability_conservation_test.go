//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conservationConfig is a whole pipeline with work for every stage:
// llm_loadgen generates chat and agent traffic with one span per streamed
// chunk, as fast as the pipeline takes it; llm_semconv normalizes it;
// span_guard holds every trace to 40 spans, so long agent loops have their
// chunk spans folded and their deepest spans dropped; an OTLP exporter sends
// the rest to the test's sink.
const conservationConfig = `
extensions:
  health_check:
    endpoint: 127.0.0.1:${env:OTELCOL_LLM_HEALTH_PORT}
receivers:
  llm_loadgen:
    mode: synthetic
    timing: as_fast_as_possible
    seed: 12
    requests: ${env:RELIABILITY_REQUESTS}
    arrival: {type: constant, rate: 1000}
    scenarios:
      - {type: chat, weight: 3}
      - {type: agent, weight: 1}
    agent: {depth: 1, fan_out: 4, min_steps: 2, max_steps: 8}
    stream: {span_per_chunk: true, max_chunk_spans: 32}
    faults:
      - {type: mid_stream, probability: 0.02}
      - {type: rate_limit, probability: 0.02, retry_after: 100ms, max_retries: 1}
    progress_interval: 0s
processors:
  memory_limiter:
    check_interval: 1s
    limit_mib: 1024
    spike_limit_mib: 256
  llm_semconv: {}
  span_guard:
    flush_timeout: 200ms
    trace_budget: {max_spans: 40, window: 1s}
    memory_limit_mib: 256
exporters:
  otlp_grpc:
    endpoint: ${env:RELIABILITY_SINK}
    tls: {insecure: true}
    sending_queue: {queue_size: 100000}
service:
  extensions: [health_check]
  telemetry:
    logs: {level: info}
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:OTELCOL_LLM_METRICS_PORT}
  pipelines:
    traces:
      receivers: [llm_loadgen]
      processors: [memory_limiter, llm_semconv, span_guard]
      exporters: [otlp_grpc]
`

// spanLedger is every count the conservation law needs, from the
// collector's own metrics.
type spanLedger struct {
	generated, loadgenRefused, loadgenDropped      float64
	limiterRefused                                 float64
	semconv                                        float64
	received, forwarded, folded, dropped, refused  float64
	held, tracked, summaries                       float64
	exported, exportFailed, enqueueFailed, inQueue float64
	droppedBy, refusedBy                           map[string]float64
}

func readLedger(m string) spanLedger {
	l := spanLedger{
		generated:      sumSeriesOrZero(m, "otelcol_llm_loadgen_emitted", `signal="traces"`),
		loadgenRefused: sumSeriesOrZero(m, "otelcol_llm_loadgen_refused", `signal="traces"`),
		loadgenDropped: sumSeriesOrZero(m, "otelcol_llm_loadgen_dropped", `signal="traces"`),
		limiterRefused: sumSeriesOrZero(m, "otelcol_processor_memory_limiter_refused_spans"),
		semconv:        sumSeriesOrZero(m, "otelcol_llm_semconv_spans"),
		received:       sumSeriesOrZero(m, "otelcol_span_guard_spans_received"),
		forwarded:      sumSeriesOrZero(m, "otelcol_span_guard_spans_forwarded"),
		folded:         sumSeriesOrZero(m, "otelcol_span_guard_spans_folded"),
		dropped:        sumSeriesOrZero(m, "otelcol_span_guard_spans_dropped"),
		refused:        sumSeriesOrZero(m, "otelcol_span_guard_spans_refused"),
		held:           sumSeriesOrZero(m, "otelcol_span_guard_held_spans"),
		tracked:        sumSeriesOrZero(m, "otelcol_span_guard_traces_tracked"),
		summaries:      sumSeriesOrZero(m, "otelcol_span_guard_summary_spans", `outcome="forwarded"`),
		exported:       sumSeriesOrZero(m, "otelcol_exporter_sent_spans"),
		exportFailed:   sumSeriesOrZero(m, "otelcol_exporter_send_failed_spans"),
		enqueueFailed:  sumSeriesOrZero(m, "otelcol_exporter_enqueue_failed_spans"),
		inQueue:        sumSeriesOrZero(m, "otelcol_exporter_queue_size"),
		droppedBy:      map[string]float64{},
		refusedBy:      map[string]float64{},
	}
	for _, r := range []string{"span_budget", "byte_budget", "span_too_large", "export_failed"} {
		l.droppedBy[r] = sumSeriesOrZero(m, "otelcol_span_guard_spans_dropped", `reason="`+r+`"`)
	}
	for _, r := range []string{"memory_limit", "rate_limit", "metadata_cardinality", "shutdown"} {
		l.refusedBy[r] = sumSeriesOrZero(m, "otelcol_span_guard_spans_refused", `reason="`+r+`"`)
	}
	return l
}

func (l spanLedger) String() string {
	return fmt.Sprintf("generated %.0f (loadgen refused %.0f, dropped %.0f; memory_limiter refused %.0f) span_guard received %.0f = forwarded %.0f + folded %.0f + dropped %.0f %v + refused %.0f %v; held %.0f, traces tracked %.0f, summaries %.0f; exporter sent %.0f, failed %.0f, enqueue failed %.0f, queued %.0f",
		l.generated, l.loadgenRefused, l.loadgenDropped, l.limiterRefused, l.received, l.forwarded, l.folded, l.dropped, l.droppedBy,
		l.refused, l.refusedBy, l.held, l.tracked, l.summaries, l.exported, l.exportFailed, l.enqueueFailed, l.inQueue)
}

// generatorState is how far llm_loadgen has come, from the collector's own
// metrics and log.
type generatorState struct {
	requests, emitted, refused float64
	finished                   bool
}

func readGenerator(t *testing.T, col *Collector) generatorState {
	t.Helper()
	if col.Exited() {
		t.Fatalf("collector exited: %v\n%s", col.err, col.Output())
	}
	m := selfMetrics(t, col)
	return generatorState{
		requests: sumSeriesOrZero(m, "otelcol_llm_loadgen_requests"),
		emitted:  sumSeriesOrZero(m, "otelcol_llm_loadgen_emitted", `signal="traces"`),
		refused:  sumSeriesOrZero(m, "otelcol_llm_loadgen_refused", `signal="traces"`),
		finished: strings.Contains(col.Output(), "llm_loadgen finished"),
	}
}

// TestReliabilityConservationUnderLoad runs llm_loadgen → llm_semconv →
// span_guard → OTLP as fast as the pipeline goes, with per-chunk spans and a
// per-trace budget small enough to fold and drop, and reconciles every span
// exactly: the spans llm_loadgen generated (its own count) equal the
// distinct spans the sink received (summary spans counted apart) plus what
// span_guard folded and dropped, by reason; every refusal was retried by the
// generator and shows on both sides; nothing arrived twice.
func TestReliabilityConservationUnderLoad(t *testing.T) {
	const requests = 1500
	sink := StartCountingSink(t, "", 0)
	t.Setenv("RELIABILITY_SINK", sink.Addr())
	t.Setenv("RELIABILITY_REQUESTS", fmt.Sprint(requests))
	col := StartCollector(t, "--config", "file:"+writeFile(t, "conservation.yaml", conservationConfig))
	col.WaitHealthy(t, time.Minute)
	start := time.Now()

	// How fast the generator goes is the machine's business: the test waits
	// for it as long as it makes progress.
	_, err := waitProgress(10*time.Minute, time.Minute, func() generatorState { return readGenerator(t, col) },
		func(g generatorState) bool { return g.finished })
	require.NoError(t, err, "the generator did not finish:\n%s", col.Output())
	generatedIn := time.Since(start)

	// Settled: every trace window released (summaries sent), no open batch,
	// the exporter's queue empty and the sink holding what it sent.
	var l spanLedger
	var c sinkCounts
	_, settled := waitSettled(2*time.Minute, time.Second, func() string {
		l, c = readLedger(selfMetrics(t, col)), sink.Counts()
		return fmt.Sprint(l, c)
	}, func(string) bool {
		return l.generated > 0 && l.held == 0 && l.tracked == 0 && l.inQueue == 0 &&
			l.received == l.forwarded+l.folded+l.dropped+l.refused &&
			float64(c.Spans) == l.exported && l.exported == l.forwarded+l.summaries
	})
	t.Logf("%d requests in %v; %s; sink: %d distinct spans, %d duplicates, %d summaries, %d requests",
		requests, generatedIn.Round(time.Millisecond), l, c.Unique, c.Duplicates, c.Summaries, c.Requests)
	require.True(t, settled, "pipeline did not settle: %s; sink %+v", l, c)

	// The conservation law, end to end and exactly.
	assert.Equal(t, l.generated, float64(c.Unique)+l.folded+l.dropped,
		"generated = received at the sink + folded + dropped")
	assert.Zero(t, c.Duplicates, "no span delivered twice")
	assert.Equal(t, float64(c.Summaries), l.summaries, "summary spans at the sink = summaries span_guard forwarded")
	// span_guard's own law, and every refusal accounted on both sides: the
	// generator retried each refused send, so span_guard saw the refused
	// spans once more than the generator counted them as emitted.
	assert.Equal(t, l.received, l.forwarded+l.folded+l.dropped+l.refused)
	assert.Equal(t, l.loadgenRefused, l.limiterRefused+l.refused, "refused at the generator = refused by memory_limiter + span_guard")
	assert.Equal(t, l.generated+l.refused, l.received, "span_guard saw every generated span (and each refused one again)")
	assert.Equal(t, l.received+l.limiterRefused, l.semconv, "llm_semconv saw every span that passed memory_limiter")
	assert.Zero(t, l.loadgenDropped, "the generator lost nothing")
	assert.Zero(t, l.exportFailed+l.enqueueFailed, "the exporter lost nothing")
	assert.Equal(t, l.forwarded, float64(c.Unique), "forwarded = distinct spans at the sink")
	// span_guard had work: it folded chunk spans and dropped agent spans
	// over budget, and nothing was lost to export failures.
	assert.Positive(t, l.folded, "chunk spans folded")
	assert.Positive(t, l.droppedBy["span_budget"], "spans over budget dropped")
	assert.Zero(t, l.droppedBy["export_failed"]+l.droppedBy["span_too_large"])
	assert.Equal(t, l.dropped, l.droppedBy["span_budget"]+l.droppedBy["byte_budget"])

	// Per trace, the summaries tell the same story: each summary's received
	// count equals what arrived of its trace plus what it folded and dropped.
	perTrace := map[[16]byte]int{}
	for k := range sink.Keys() {
		var tid [16]byte
		copy(tid[:], k[:16])
		perTrace[tid]++
	}
	summaryAttr := func(i int, key string) int64 {
		v, ok := sink.Summaries()[i].Attributes().Get(key)
		require.True(t, ok, "summary attribute %s", key)
		return v.Int()
	}
	summaries := sink.Summaries()
	require.NotEmpty(t, summaries)
	for i, s := range summaries {
		tid := [16]byte(s.TraceID())
		assert.Equal(t, summaryAttr(i, "span_guard.spans.received"),
			int64(perTrace[tid])+summaryAttr(i, "span_guard.spans.folded")+summaryAttr(i, "span_guard.spans.dropped"),
			"trace %x: summary received = forwarded + folded + dropped", tid)
	}

	require.NoError(t, col.Stop(t, 20*time.Second), "collector did not exit cleanly:\n%s", col.Output())
}
