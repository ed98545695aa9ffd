package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// liveTelemetry is live mode's own telemetry, next to the shared counters
// of telemetry.go (emitted, refused, dropped items).
type liveTelemetry struct {
	requests  metric.Int64Counter
	dropped   metric.Int64Counter
	queueTime metric.Float64Histogram
	lag       metric.Float64Histogram
	inflight  metric.Int64UpDownCounter
	queued    metric.Int64UpDownCounter
	knee      metric.Float64Gauge

	resultAttrs sync.Map // error.type → the attribute set of requests
}

var liveSecondsBuckets = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newLiveTelemetry(set component.TelemetrySettings) (*liveTelemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &liveTelemetry{}
	t.requests = b.Counter("otelcol_llm_loadgen_live_requests", "{request}",
		"Live requests finished, by outcome (ok, error) and error.type.")
	t.dropped = b.Counter("otelcol_llm_loadgen_live_not_sent", "{request}",
		"Scheduled live requests that were never sent, by reason (queue_full).")
	t.queueTime = b.Histogram("otelcol_llm_loadgen_live_queue_time", "s",
		"Time a live request waited in the client-side queue for live.max_concurrency.", liveSecondsBuckets...)
	t.lag = b.Histogram("otelcol_llm_loadgen_live_schedule_lag", "s",
		"How late the scheduler started a live request after its scheduled send time.", liveSecondsBuckets...)
	t.inflight = b.UpDownCounter("otelcol_llm_loadgen_live_in_flight", "{request}",
		"Live requests sent and not finished.")
	t.queued = b.UpDownCounter("otelcol_llm_loadgen_live_queued", "{request}",
		"Live requests waiting for live.max_concurrency.")
	t.knee = b.FloatGauge("otelcol_llm_loadgen_live_sweep_knee", "{request}/s",
		"Highest request rate of the sweep that met the SLO without saturating.")
	return t, b.Err()
}

func (t *liveTelemetry) reasonAttrs(reason string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason)))
}

func (t *liveTelemetry) recordResult(res *liveResult) {
	opt, ok := t.resultAttrs.Load(res.ErrorType)
	if !ok {
		outcome := "ok"
		if res.ErrorType != "" {
			outcome = "error"
		}
		opt, _ = t.resultAttrs.LoadOrStore(res.ErrorType, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("outcome", outcome), attribute.String("error.type", res.ErrorType))))
	}
	t.requests.Add(context.Background(), 1, opt.(metric.AddOption))
}

// liveSummary keeps run totals and latency samples for the progress and
// final log lines.
type liveSummary struct {
	mu       sync.Mutex
	ok, errs int64
	byType   map[string]int64
	ttft     []float64
	tpot     []float64
	tokens   int64
	first    time.Time
	last     time.Time
}

// maxSummarySamples bounds the memory the summary's percentiles use.
const maxSummarySamples = 1 << 20

func (s *liveSummary) add(res *liveResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byType == nil {
		s.byType = map[string]int64{}
	}
	if s.first.IsZero() || res.Scheduled.Before(s.first) {
		s.first = res.Scheduled
	}
	if res.End.After(s.last) {
		s.last = res.End
	}
	if res.ErrorType != "" {
		s.errs++
		s.byType[res.ErrorType]++
		return
	}
	s.ok++
	s.tokens += int64(res.OutputTokens)
	if len(s.ttft) < maxSummarySamples && !res.FirstToken.IsZero() {
		s.ttft = append(s.ttft, res.ttft().Seconds())
	}
	if d := res.tpot(); d > 0 && len(s.tpot) < maxSummarySamples {
		s.tpot = append(s.tpot, d.Seconds())
	}
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func (s *liveSummary) log(logger *zap.Logger, final bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ttft := append([]float64(nil), s.ttft...)
	tpot := append([]float64(nil), s.tpot...)
	sort.Float64s(ttft)
	sort.Float64s(tpot)
	wall := s.last.Sub(s.first).Seconds()
	rate, tokRate := 0.0, 0.0
	if wall > 0 {
		rate, tokRate = float64(s.ok)/wall, float64(s.tokens)/wall
	}
	msg := "llm_loadgen live progress"
	if final {
		msg = "llm_loadgen live run finished"
	}
	logger.Info(msg, zap.Int64("ok", s.ok), zap.Int64("errors", s.errs), zap.Any("errors_by_type", s.byType),
		zap.Float64("completed_per_s", rate), zap.Float64("output_tokens_per_s", tokRate),
		zap.Float64("ttft_p50_s", quantile(ttft, 0.5)), zap.Float64("ttft_p99_s", quantile(ttft, 0.99)),
		zap.Float64("tpot_p50_s", quantile(tpot, 0.5)), zap.Float64("tpot_p99_s", quantile(tpot, 0.99)))
}

// describe is the run's last line on the console: "llm_loadgen: run
// finished: 1,502 requests in 61.0 s (1,499 ok, 3 errors)".
func (s *liveSummary) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	wall := 0.0
	if !s.first.IsZero() && s.last.After(s.first) {
		wall = s.last.Sub(s.first).Seconds()
	}
	return fmt.Sprintf("llm_loadgen: run finished: %s requests in %s (%s ok, %s errors)",
		humanfmt.Int(s.ok+s.errs), humanfmt.Seconds(wall), humanfmt.Int(s.ok), humanfmt.Int(s.errs))
}
