package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/live"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/synthetic"
)

// runner is one mode's traffic source. An instance starts its runner once,
// however many signals it serves, and shuts it down once.
type runner interface {
	Start(ctx context.Context, host component.Host) error
	Shutdown(ctx context.Context) error
}

// newRunner builds the runner of the configured mode.
func newRunner(run *loadgen.Run) (runner, error) {
	switch run.Config.Mode {
	case config.ModeSynthetic:
		return synthetic.New(run)
	case config.ModeLive:
		return live.New(run)
	}
	return nil, fmt.Errorf("llm_loadgen: mode %q is not available in this build", run.Config.Mode)
}

// instance is one configured llm_loadgen receiver. The collector creates it
// once per signal (traces, metrics, logs); all of them share this instance so
// that the metrics and logs describe the same requests as the traces.
type instance struct {
	// run is handed to the runner; its next consumers are set under mu
	// before Start, one per signal a pipeline takes.
	run loadgen.Run

	mu     sync.Mutex
	runner runner // set by Start
}

// instances holds one instance per configuration (internal/sharedcomponent).
var instances = sharedcomponent.NewMap[*config.Config, *instance]()

// handle is what the collector sees for one signal. All signals of one
// configuration share one reference to the instance, so the first signal's
// Shutdown stops the generator (the collector shuts all of them down
// together) and later ones do nothing.
type handle struct {
	*sharedcomponent.Component[*instance]
	l *instance
}

func acquire(set receiver.Settings, cfg *config.Config, attach func(*instance)) (*handle, error) {
	c, err := instances.LoadOrStore(cfg, func() (*instance, error) { return &instance{run: loadgen.Run{Config: cfg, Settings: set}}, nil })
	if err != nil {
		return nil, err
	}
	l := c.Unwrap()
	l.mu.Lock()
	attach(l)
	l.mu.Unlock()
	return &handle{Component: c, l: l}, nil
}

// Start starts the generator; the registry calls it once for all signals.
func (l *instance) Start(ctx context.Context, host component.Host) error {
	l.mu.Lock()
	run := l.run
	l.mu.Unlock()
	r, err := newRunner(&run)
	if err != nil {
		return err
	}
	if err := r.Start(ctx, host); err != nil {
		return err
	}
	l.mu.Lock()
	l.runner = r
	l.mu.Unlock()
	return nil
}

// Shutdown stops the generator; the registry calls it once, and only after
// a successful Start.
func (l *instance) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	r := l.runner
	l.mu.Unlock()
	return r.Shutdown(ctx)
}
