package live

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

// The sweep watches the server's own /metrics during each step (the names
// of internal/servermetrics' table: vLLM, SGLang, TGI, llama.cpp) and stops
// on its saturation signals before the client's latency shows them: a KV
// cache that stays full, preemptions, or a waiting queue that grows.

// Stop reasons of a sweep step on the server's signals.
const (
	sweepKVCacheFull = "kv_cache_full"
	sweepPreemptions = "preemptions"
	sweepQueueGrows  = "queue_growing"
)

// serverPoint is one scrape during a step.
type serverPoint struct {
	at time.Time
	s  servermetrics.Sample
}

// serverWatch scrapes the server's /metrics during one step.
type serverWatch struct {
	cfg    config.SweepServerConfig
	client *http.Client
	tel    *loadgen.LiveInstruments
	logger *zap.Logger

	mu     sync.Mutex
	points []serverPoint
	warned bool // a failed scrape was logged
}

func newServerWatch(cfg config.SweepServerConfig, tel *loadgen.LiveInstruments, logger *zap.Logger) *serverWatch {
	if cfg.MetricsURL == "" {
		return nil
	}
	return &serverWatch{cfg: cfg, client: &http.Client{Timeout: cfg.Interval}, tel: tel, logger: logger}
}

// watch scrapes at once and every interval until ctx ends; the points of
// the previous step are forgotten.
func (w *serverWatch) watch(ctx context.Context) {
	w.mu.Lock()
	w.points = nil
	w.mu.Unlock()
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		w.scrape(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *serverWatch) scrape(ctx context.Context) {
	s, err := w.fetch(ctx)
	outcome := "ok"
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		outcome = "error"
		w.mu.Lock()
		first := !w.warned
		w.warned = true
		w.mu.Unlock()
		if first {
			w.logger.Warn("llm_loadgen sweep: the server's metrics could not be read; its signals are not watched while this lasts",
				zap.String("metrics_url", w.cfg.MetricsURL), zap.Error(err))
		}
	case s.Server == "":
		outcome = "unknown_server"
	default:
		w.mu.Lock()
		w.points = append(w.points, serverPoint{at: time.Now(), s: s})
		w.mu.Unlock()
	}
	w.tel.ServerScrapes.Add(context.Background(), 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", outcome))))
}

func (w *serverWatch) fetch(ctx context.Context) (servermetrics.Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.cfg.MetricsURL, nil)
	if err != nil {
		return servermetrics.Sample{}, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return servermetrics.Sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return servermetrics.Sample{}, fmt.Errorf("GET %s: %s", w.cfg.MetricsURL, resp.Status)
	}
	return servermetrics.Read(io.LimitReader(resp.Body, 64<<20))
}

// verdict is the first saturation signal of the step's points ("" for
// none) and what it was.
func (w *serverWatch) verdict() (string, string) {
	w.mu.Lock()
	pts := append([]serverPoint(nil), w.points...)
	w.mu.Unlock()
	if len(pts) < 2 {
		return "", ""
	}
	if why := w.kvFull(pts); why != "" {
		return sweepKVCacheFull, why
	}
	if w.cfg.Preemptions {
		first, okF := pts[0].s.Counters[servermetrics.Preemptions]
		last, okL := pts[len(pts)-1].s.Counters[servermetrics.Preemptions]
		if okF && okL && last != first {
			n := last - first
			if last < first {
				n = last // the server restarted
			}
			return sweepPreemptions, fmt.Sprintf("the server preempted %.0f requests during the step", n)
		}
	}
	if w.cfg.QueueGrowth {
		if why := w.queueGrows(pts); why != "" {
			return sweepQueueGrows, why
		}
	}
	return "", ""
}

func (w *serverWatch) kvFull(pts []serverPoint) string {
	if w.cfg.KVCacheUsage == 0 {
		return ""
	}
	var start time.Time
	for _, p := range pts {
		v, ok := p.s.Gauges[servermetrics.KVCache]
		if !ok || v < w.cfg.KVCacheUsage {
			start = time.Time{}
			continue
		}
		if start.IsZero() {
			start = p.at
		}
		if d := p.at.Sub(start); d >= w.cfg.Sustained {
			return fmt.Sprintf("KV-cache usage at or above %.0f %% for %v", w.cfg.KVCacheUsage*100, d.Round(time.Millisecond))
		}
	}
	return ""
}

func (w *serverWatch) queueGrows(pts []serverPoint) string {
	var xs, ys []float64
	for _, p := range pts {
		if v, ok := p.s.Gauges[servermetrics.Waiting]; ok {
			xs = append(xs, p.at.Sub(pts[0].at).Seconds())
			ys = append(ys, v)
		}
	}
	f, ok := servermetrics.FitSlope(xs, ys, w.cfg.Confidence)
	if !ok || !f.Rising(xs[len(xs)-1], 1) {
		return ""
	}
	return fmt.Sprintf("the server's waiting queue grew %.2f ± %.2f requests/s, to %.0f", f.Slope, f.Margin, ys[len(ys)-1])
}
