package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// Run is what the receiver hands the runner of its mode: the validated
// configuration, the receiver's settings and the next consumer of each
// signal a pipeline takes (nil for the others). The receiver fills it
// before Start; the runner only reads it.
type Run struct {
	Config   *Config
	Settings receiver.Settings
	Traces   consumer.Traces
	Metrics  consumer.Metrics
	Logs     consumer.Logs
}
