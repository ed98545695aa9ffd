package teeconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector"

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-llm/otelcol-llm/connectors/teeconnector/internal/metadata"
)

// NewFactory returns the tee connector factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithTracesToTraces(createTracesToTraces, metadata.TracesToTracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{}
}

// createTracesToTraces takes one consumer per configured pipeline from the
// router, and refuses a layout in which the connector would feed a pipeline
// it was not told about (that pipeline would get nothing) or a reader that
// modifies data (the owner would see its changes).
func createTracesToTraces(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Traces) (connector.Traces, error) {
	c := cfg.(*Config)
	router, ok := next.(connector.TracesRouterAndConsumer)
	if !ok {
		return nil, fmt.Errorf("tee: the connector must feed the pipelines %v and %q", c.Readers, c.Owner)
	}
	readers := make([]reader, len(c.Readers))
	for i, id := range c.Readers {
		cons, err := router.Consumer(id)
		if err != nil {
			return nil, fmt.Errorf("readers[%d]: %q: %w (list tee among its receivers)", i, id, err)
		}
		if cons.Capabilities().MutatesData {
			return nil, fmt.Errorf("readers[%d]: %q modifies spans (a processor or connector in it mutates data); "+
				"a reader must only read, so make it the owner or move the mutating component after the tee", i, id)
		}
		readers[i] = reader{id: id, next: cons}
	}
	owner, err := router.Consumer(c.Owner)
	if err != nil {
		return nil, fmt.Errorf("owner: %q: %w (list tee among its receivers)", c.Owner, err)
	}
	for _, id := range router.PipelineIDs() {
		if id != c.Owner && !slices.Contains(c.Readers, id) {
			return nil, fmt.Errorf("tee: pipeline %q lists the connector among its receivers but is neither a reader nor the owner", id)
		}
	}
	return newConnector(set, readers, owner)
}

// reader is one reader pipeline: its id names it in the connector's logs
// and telemetry.
type reader struct {
	id   pipeline.ID
	next consumer.Traces
}
