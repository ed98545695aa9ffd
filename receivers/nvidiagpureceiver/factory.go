package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

// NewFactory returns the factory of the nvidia_gpu receiver.
func NewFactory() receiver.Factory {
	return newFactory(loadNVML)
}

// loadNVML returns the NVML library the configuration asks for; it is not
// loaded until Init.
func loadNVML(cfg *Config) nvml.Interface {
	if cfg.LibraryPath != "" {
		return nvml.New(nvml.WithLibraryPath(cfg.LibraryPath))
	}
	return nvml.New()
}

// newFactory builds the factory on an NVML provider (tests pass a mock).
func newFactory(newLib func(*Config) nvml.Interface) receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		receiver.WithMetrics(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			return createMetrics(set, cfg.(*Config), next, newLib)
		}, metadata.MetricsStability),
		receiver.WithLogs(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
			return createLogs(set, cfg.(*Config), next, newLib)
		}, metadata.LogsStability),
	)
}

func createDefaultConfig() *Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 10 * time.Second
	metrics := make(map[string]MetricConfig, len(metricDefs))
	for _, d := range metricDefs {
		metrics[d.name] = MetricConfig{Enabled: d.enabled}
	}
	return &Config{
		ControllerConfig:  cc,
		OnMissing:         onMissingWarn,
		InitRetryInterval: time.Minute,
		MIG:               true,
		Processes:         ProcessesConfig{ProcRoot: "/proc"},
		Kubernetes:        KubernetesConfig{Timeout: time.Second},
		Events: EventsConfig{
			Enabled:     true,
			Types:       append([]string(nil), defaultEventTypes...),
			WaitTimeout: time.Second,
		},
		Metrics: metrics,
	}
}
