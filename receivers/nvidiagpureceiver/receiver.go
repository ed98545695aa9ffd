package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

// handle ties one receiver's Start/Shutdown to the shared session, so that a
// receiver shut down twice, or without being started, releases nothing twice.
type handle struct {
	s       *session
	mu      sync.Mutex
	started bool
	onStart func()
}

func (h *handle) start(ctx context.Context, host component.Host) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return nil
	}
	if h.onStart != nil {
		h.onStart()
	}
	if err := h.s.acquire(ctx, host); err != nil {
		return err
	}
	h.started = true
	return nil
}

func (h *handle) shutdown(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		return nil
	}
	h.started = false
	return h.s.release(ctx)
}

// createMetrics builds the metrics receiver: the collector's scraper
// controller driving one scraper over all GPUs.
func createMetrics(set receiver.Settings, cfg *Config, next consumer.Metrics, newLib func(*Config) nvml.Interface) (receiver.Metrics, error) {
	s, err := sessionFor(cfg, set.TelemetrySettings, newLib)
	if err != nil {
		return nil, err
	}
	h := &handle{s: s}
	gs := newGPUScraper(s)
	sc, err := scraper.NewMetrics(gs.scrape, scraper.WithStart(h.start), scraper.WithShutdown(h.shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&cfg.ControllerConfig, set, next, scraperhelper.AddMetricsScraper(metadata.Type, sc))
}

// logsReceiver emits the events of the event-set goroutine as log records.
type logsReceiver struct {
	h *handle
}

func createLogs(set receiver.Settings, cfg *Config, next consumer.Logs, newLib func(*Config) nvml.Interface) (receiver.Logs, error) {
	s, err := sessionFor(cfg, set.TelemetrySettings, newLib)
	if err != nil {
		return nil, err
	}
	return &logsReceiver{h: &handle{s: s, onStart: func() { s.setLogsConsumer(next) }}}, nil
}

func (r *logsReceiver) Start(ctx context.Context, host component.Host) error {
	return r.h.start(ctx, host)
}

func (r *logsReceiver) Shutdown(ctx context.Context) error {
	r.h.mu.Lock()
	started := r.h.started
	r.h.mu.Unlock()
	if started {
		r.h.s.setLogsConsumer(nil)
	}
	return r.h.shutdown(ctx)
}
