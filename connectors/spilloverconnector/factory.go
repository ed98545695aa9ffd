package spilloverconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector/internal/metadata"
)

// NewFactory returns the spillover connector factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithTracesToTraces(createTracesToTraces, metadata.TracesToTracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{RetryPrimaryAfter: 5 * time.Second}
}

func createTracesToTraces(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Traces) (connector.Traces, error) {
	c := cfg.(*Config)
	router, ok := next.(connector.TracesRouterAndConsumer)
	if !ok {
		return nil, fmt.Errorf("spillover: the connector must feed the pipelines %q and %q", c.Primary, c.Spill)
	}
	primary, err := router.Consumer(c.Primary)
	if err != nil {
		return nil, fmt.Errorf("primary: %q: %w (list spillover among its receivers)", c.Primary, err)
	}
	spill, err := router.Consumer(c.Spill)
	if err != nil {
		return nil, fmt.Errorf("spill: %q: %w (list spillover among its receivers)", c.Spill, err)
	}
	if n := len(router.PipelineIDs()); n != 2 {
		return nil, fmt.Errorf("spillover: feeds %d pipelines %v; it must feed exactly primary %q and spill %q", n, router.PipelineIDs(), c.Primary, c.Spill)
	}
	return newConnector(set, c, primary, spill)
}
