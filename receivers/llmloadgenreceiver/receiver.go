package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"
)

// runner is one mode's traffic source. A loadgen starts its runner once,
// however many signals it serves, and shuts it down once.
type runner interface {
	Start(ctx context.Context, host component.Host) error
	Shutdown(ctx context.Context) error
}

// newRunner builds the runner of the configured mode.
func newRunner(run *Run) (runner, error) {
	switch run.Config.Mode {
	case ModeSynthetic:
		return newSyntheticRunner(run)
	case ModeLive:
		return newLiveRunner(run)
	}
	return nil, fmt.Errorf("llm_loadgen: mode %q is not available in this build", run.Config.Mode)
}

// loadgen is one configured llm_loadgen receiver. The collector creates it
// once per signal (traces, metrics, logs); all of them share this instance so
// that the metrics and logs describe the same requests as the traces.
type loadgen struct {
	// run is handed to the runner; its next consumers are set under mu
	// before Start, one per signal a pipeline takes.
	run Run

	mu     sync.Mutex
	runner runner // set by Start
}

// loadgens holds one loadgen per configuration (internal/sharedcomponent).
var loadgens = sharedcomponent.NewMap[*Config, *loadgen]()

// handle is what the collector sees for one signal. All signals of one
// configuration share one reference to the loadgen, so the first signal's
// Shutdown stops the generator (the collector shuts all of them down
// together) and later ones do nothing.
type handle struct {
	*sharedcomponent.Component[*loadgen]
	l *loadgen
}

func acquire(set receiver.Settings, cfg *Config, attach func(*loadgen)) (*handle, error) {
	c, err := loadgens.LoadOrStore(cfg, func() (*loadgen, error) { return &loadgen{run: Run{Config: cfg, Settings: set}}, nil })
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
func (l *loadgen) Start(ctx context.Context, host component.Host) error {
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
func (l *loadgen) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	r := l.runner
	l.mu.Unlock()
	return r.Shutdown(ctx)
}
