package teeconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector"

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pipeline"
)

// Config is the tee connector configuration.
type Config struct {
	// Readers are the traces pipelines that see each batch first, one
	// after another, on the batch itself. A reader must not modify the
	// spans (a reader pipeline whose consumers declare that they mutate
	// data is refused when the collector starts) and must be done with
	// the batch when it returns: connectors that derive metrics
	// (llm_metrics, spanmetrics, count), not exporters with a sending
	// queue, which keep the batch after they return.
	Readers []pipeline.ID `mapstructure:"readers"`
	// Owner is the traces pipeline that gets each batch last and may
	// modify it (span_guard's pipeline in builtin:gateway).
	Owner pipeline.ID `mapstructure:"owner"`
}

// Validate reports every invalid setting, naming the field.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Readers) == 0 {
		errs = append(errs, errors.New("readers: at least one traces pipeline is required (e.g. [traces/genai])"))
	}
	seen := map[pipeline.ID]bool{}
	for i, id := range c.Readers {
		field := fmt.Sprintf("readers[%d]", i)
		if err := checkTraces(field, id); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[id] {
			errs = append(errs, fmt.Errorf("%s: %q is listed twice", field, id))
		}
		seen[id] = true
	}
	if err := checkTraces("owner", c.Owner); err != nil {
		errs = append(errs, err)
	} else if seen[c.Owner] {
		errs = append(errs, fmt.Errorf("owner: %q is also a reader; the owner must be another pipeline", c.Owner))
	}
	return errors.Join(errs...)
}

func checkTraces(field string, id pipeline.ID) error {
	switch {
	case id == pipeline.ID{}:
		return fmt.Errorf("%s: a traces pipeline is required (e.g. traces/guarded)", field)
	case id.Signal() != pipeline.SignalTraces:
		return fmt.Errorf("%s: %q is a %s pipeline; tee feeds traces pipelines only", field, id, id.Signal())
	}
	return nil
}
