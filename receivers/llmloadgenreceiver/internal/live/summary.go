package live

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
)

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
