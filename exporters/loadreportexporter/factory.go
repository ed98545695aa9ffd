package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
)

// NewFactory returns the factory of the load_report exporter.
func NewFactory() exporter.Factory {
	f := &factory{shared: map[*Config]*reportExporter{}}
	return exporter.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		exporter.WithTraces(f.createTraces, metadata.TracesStability),
		exporter.WithMetrics(f.createMetrics, metadata.MetricsStability),
	)
}

// factory keeps one reportExporter per configuration, shared by the traces
// and metrics exporters of that configuration.
type factory struct {
	mu     sync.Mutex
	shared map[*Config]*reportExporter
}

func (f *factory) get(cfg *Config, set exporter.Settings) (*reportExporter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.shared[cfg]; ok {
		return e, nil
	}
	e, err := newReportExporter(cfg, set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	f.shared[cfg] = e
	return e, nil
}

func (f *factory) options(cfg *Config, e *reportExporter) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(func(ctx context.Context) error {
			err := e.shutdown(ctx)
			f.mu.Lock()
			if e.stopped() {
				delete(f.shared, cfg)
			}
			f.mu.Unlock()
			return err
		}),
	}
}

func (f *factory) createTraces(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Traces, error) {
	cfg := c.(*Config)
	e, err := f.get(cfg, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, e.consumeTraces, f.options(cfg, e)...)
}

func (f *factory) createMetrics(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Metrics, error) {
	cfg := c.(*Config)
	e, err := f.get(cfg, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewMetrics(ctx, set, cfg, e.consumeMetrics, f.options(cfg, e)...)
}

func createDefaultConfig() *Config {
	return &Config{
		Directory: "/tmp/otelcol-llm-report",
		Interval:  10 * time.Second,
		Formats:   []string{FormatJSON, FormatMarkdown, FormatHTML, FormatCSV},
		Title:     "LLM load test report",
		Dimensions: DimensionsConfig{
			Target:   []string{"server.address"},
			Model:    []string{"gen_ai.request.model", "gen_ai.response.model"},
			Scenario: []string{"llm_loadgen.scenario", "loadgen.scenario"},
		},
		CancelledErrorTypes: []string{"cancelled", "canceled", "context_canceled", "context canceled", "client_cancelled", "client_canceled"},
		TargetRate: TargetRateConfig{
			Attributes: []string{"llm_loadgen.target_rate"},
			Metrics:    []string{"llm_loadgen.target_rate", "otelcol_llm_loadgen_target_rate"},
		},
		Goodput: GoodputConfig{TTFT: 2100 * time.Millisecond},
		SLOs:    defaultSLOs(),
		Exit:    ExitConfig{OnVerdict: "none", MinRequests: 20, NoData: "fail"},
		Limits: LimitsConfig{
			MaxGroups:          200,
			MaxErrorTypes:      32,
			RelativeAccuracy:   0.01,
			MaxSketchBins:      2048,
			TimelineResolution: time.Second,
			MaxTimelinePoints:  600,
			MaxSeries:          20000,
		},
		Shards: defaultShardsConfig(),
	}
}
