package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// runner is one mode's traffic source. A loadgen starts its runner once,
// however many signals it serves, and shuts it down once.
type runner interface {
	Start(ctx context.Context, host component.Host) error
	Shutdown(ctx context.Context) error
}

// runnerFactories builds the runner of each mode. Live mode registers its
// constructor from its own files.
var runnerFactories = map[string]func(*loadgen) (runner, error){
	modeSynthetic: newSyntheticRunner,
}

// loadgen is one configured llm_loadgen receiver. The collector creates it
// once per signal (traces, metrics, logs); all of them share this instance so
// that the metrics and logs describe the same requests as the traces.
type loadgen struct {
	cfg *Config
	set receiver.Settings

	// Next consumers; nil for a signal that no pipeline takes.
	traces  consumer.Traces
	metrics consumer.Metrics
	logs    consumer.Logs

	mu       sync.Mutex
	refs     int // signal instances created and not shut down
	started  bool
	runner   runner
	shutdown bool
}

var (
	registryMu sync.Mutex
	registry   = map[*Config]*loadgen{}
)

// handle is what the collector sees for one signal; it forwards the
// lifecycle to the shared loadgen.
type handle struct {
	l    *loadgen
	once sync.Once
}

func acquire(set receiver.Settings, cfg *Config, attach func(*loadgen)) (*handle, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	l, ok := registry[cfg]
	if !ok {
		l = &loadgen{cfg: cfg, set: set}
		registry[cfg] = l
	}
	attach(l)
	l.refs++
	return &handle{l: l}, nil
}

// Start starts the shared generator on the first call.
func (h *handle) Start(ctx context.Context, host component.Host) error {
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.shutdown {
		return nil
	}
	newRunner, ok := runnerFactories[l.cfg.Mode]
	if !ok {
		return fmt.Errorf("llm_loadgen: mode %q is not available in this build", l.cfg.Mode)
	}
	r, err := newRunner(l)
	if err != nil {
		return err
	}
	if err := r.Start(ctx, host); err != nil {
		return err
	}
	l.runner = r
	l.started = true
	return nil
}

// Shutdown stops the shared generator when the first signal shuts down (the
// collector shuts all of them down together) and releases the instance when
// the last one does. It is safe without Start and when called twice.
func (h *handle) Shutdown(ctx context.Context) error {
	var err error
	h.once.Do(func() {
		l := h.l
		l.mu.Lock()
		if l.runner != nil && !l.shutdown {
			err = l.runner.Shutdown(ctx)
		}
		l.shutdown = true
		l.mu.Unlock()

		registryMu.Lock()
		l.refs--
		if l.refs == 0 && registry[l.cfg] == l {
			delete(registry, l.cfg)
		}
		registryMu.Unlock()
	})
	return err
}
