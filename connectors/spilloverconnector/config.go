package spilloverconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector"

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pipeline"
)

// Config is the spillover connector configuration.
type Config struct {
	// Primary is the traces pipeline that gets every batch first. Its
	// exporter should send synchronously (sending_queue and
	// retry_on_failure disabled), so that a refusal comes back to the
	// connector instead of being retried in memory.
	Primary pipeline.ID `mapstructure:"primary"`
	// Spill is the traces pipeline that gets every batch the primary
	// refused with a retryable error, typically an exporter to the same
	// backend whose sending queue is on file_storage.
	Spill pipeline.ID `mapstructure:"spill"`
	// RetryPrimaryAfter is how long, after a refusal, batches go straight
	// to the spill pipeline before the primary is tried again.
	RetryPrimaryAfter time.Duration `mapstructure:"retry_primary_after"`
}

// Validate reports every invalid setting, naming the field.
func (c *Config) Validate() error {
	var errs []error
	for _, p := range []struct {
		field string
		id    pipeline.ID
	}{{"primary", c.Primary}, {"spill", c.Spill}} {
		switch {
		case p.id == pipeline.ID{}:
			errs = append(errs, fmt.Errorf("%s: a traces pipeline is required (e.g. traces/upstream)", p.field))
		case p.id.Signal() != pipeline.SignalTraces:
			errs = append(errs, fmt.Errorf("%s: %q is a %s pipeline; spillover routes traces only", p.field, p.id, p.id.Signal()))
		}
	}
	if c.Primary != (pipeline.ID{}) && c.Primary == c.Spill {
		errs = append(errs, fmt.Errorf("spill: %q is also the primary pipeline; they must differ", c.Spill))
	}
	if c.RetryPrimaryAfter <= 0 {
		errs = append(errs, fmt.Errorf("retry_primary_after: must be positive, got %v", c.RetryPrimaryAfter))
	}
	return errors.Join(errs...)
}
