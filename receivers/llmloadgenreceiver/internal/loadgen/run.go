// Package loadgen holds what llm_loadgen's synthetic and live modes share:
// the Run the receiver hands a mode, the arrival processes and samplers, the
// shard plan of a distributed run, the one delivery loop and the one
// telemetry struct.
package loadgen

import (
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// Run is what the receiver hands the runner of its mode: the validated
// configuration, the receiver's settings and the next consumer of each
// signal a pipeline takes (nil for the others). The receiver fills it
// before Start; the runner only reads it.
type Run struct {
	Config   *config.Config
	Settings receiver.Settings
	Traces   consumer.Traces
	Metrics  consumer.Metrics
	Logs     consumer.Logs
}
