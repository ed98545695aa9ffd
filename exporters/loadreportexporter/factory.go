package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"
)

// NewFactory returns the factory of the load_report exporter.
func NewFactory() exporter.Factory {
	f := &factory{shared: sharedcomponent.NewMap[*Config, *reportExporter]()}
	return exporter.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		exporter.WithTraces(f.createTraces, metadata.TracesStability),
		exporter.WithMetrics(f.createMetrics, metadata.MetricsStability),
	)
}

// factory keeps one reportExporter per configuration, shared by the traces
// and metrics exporters of that configuration. Each of them holds its own
// reference, so the report starts with the first and is finished (written,
// gated) when the last one shuts down.
type factory struct {
	shared *sharedcomponent.Map[*Config, *reportExporter]
}

// get returns the shared exporter of cfg and a new reference to it.
func (f *factory) get(cfg *Config, set exporter.Settings) (*reportExporter, []exporterhelper.Option, error) {
	c, err := f.shared.LoadOrStore(cfg, func() (*reportExporter, error) { return newReportExporter(cfg, set.TelemetrySettings) })
	if err != nil {
		return nil, nil, err
	}
	ref := c.NewRef()
	return c.Unwrap(), []exporterhelper.Option{
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithStart(ref.Start),
		exporterhelper.WithShutdown(ref.Shutdown),
	}, nil
}

func (f *factory) createTraces(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Traces, error) {
	cfg := c.(*Config)
	e, opts, err := f.get(cfg, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, e.consumeTraces, opts...)
}

func (f *factory) createMetrics(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Metrics, error) {
	cfg := c.(*Config)
	e, opts, err := f.get(cfg, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewMetrics(ctx, set, cfg, e.consumeMetrics, opts...)
}

func createDefaultConfig() *Config {
	return &Config{
		Directory: "/tmp/otelcol-llm-report",
		Interval:  10 * time.Second,
		Formats:   []string{FormatJSON, FormatMarkdown, FormatHTML, FormatCSV},
		Title:     "LLM load test report",
		Dimensions: DimensionsConfig{
			Target:   []string{genai.AttrServerAddress},
			Model:    []string{genai.AttrRequestModel, genai.AttrResponseModel},
			Scenario: []string{genai.AttrLoadgenScenario, "loadgen.scenario"},
		},
		// llm_loadgen's live and synthetic spellings among other clients'.
		CancelledErrorTypes: []string{genai.LoadgenErrorTypeCancelled, "canceled", genai.LoadgenErrorTypeContextCanceled, "context canceled", "client_cancelled", "client_canceled"},
		TargetRate: TargetRateConfig{
			Attributes: []string{genai.AttrLoadgenTargetRate},
			// The span attribute's name as a metric (a pipeline that turns
			// it into one), and llm_loadgen's own gauge.
			Metrics: []string{genai.AttrLoadgenTargetRate, genai.MetricLoadgenTargetRate},
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
		Shards:   defaultShardsConfig(),
		Baseline: BaselineConfig{Tolerance: 0.1, OnRegression: "fail"},
		Join:     JoinConfig{Hold: 30 * time.Second, MaxPending: 100_000},
		Saturation: SaturationConfig{KVCacheUsage: 0.95, Sustained: 10 * time.Second, Confidence: 0.95,
			GPUMemoryGrowth: 0},
	}
}
