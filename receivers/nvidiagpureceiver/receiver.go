package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"
	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

// createMetrics builds the metrics receiver: the collector's scraper
// controller driving one scraper over all GPUs.
func createMetrics(set receiver.Settings, cfg *Config, next consumer.Metrics, newLib func(*Config) nvml.Interface) (receiver.Metrics, error) {
	shared, err := sessionFor(cfg, set.TelemetrySettings, newLib)
	if err != nil {
		return nil, err
	}
	ref := shared.NewRef()
	gs := newGPUScraper(shared.Unwrap())
	sc, err := scraper.NewMetrics(gs.scrape, scraper.WithStart(ref.Start), scraper.WithShutdown(ref.Shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&cfg.ControllerConfig, set, next, scraperhelper.AddMetricsScraper(metadata.Type, sc))
}

// logsReceiver emits the events of the event-set goroutine as log records.
type logsReceiver struct {
	ref  *sharedcomponent.Component[*session]
	next consumer.Logs
}

func createLogs(set receiver.Settings, cfg *Config, next consumer.Logs, newLib func(*Config) nvml.Interface) (receiver.Logs, error) {
	shared, err := sessionFor(cfg, set.TelemetrySettings, newLib)
	if err != nil {
		return nil, err
	}
	return &logsReceiver{ref: shared.NewRef(), next: next}, nil
}

// Start attaches the logs consumer, then starts the session (or joins the
// running one).
func (r *logsReceiver) Start(ctx context.Context, host component.Host) error {
	r.ref.Unwrap().setLogsConsumer(r.next)
	return r.ref.Start(ctx, host)
}

// Shutdown detaches the logs consumer, then releases the session.
func (r *logsReceiver) Shutdown(ctx context.Context) error {
	r.ref.Unwrap().setLogsConsumer(nil)
	return r.ref.Shutdown(ctx)
}
