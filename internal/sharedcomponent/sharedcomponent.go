// Package sharedcomponent keeps one instance of a component per key (its
// configuration), shared by the pipelines of every signal that name that
// configuration, and runs the instance's lifecycle once. It follows the
// collector's own go.opentelemetry.io/collector/internal/sharedcomponent,
// which other modules cannot import, and adds references so that a component
// can choose whether its signals stop the instance with the first Shutdown or
// with the last.
//
// The rules:
//
//   - Map.LoadOrStore returns the key's Component, creating the instance with
//     create on first use; when create fails nothing is stored. Every caller
//     gets the same *Component until the entry leaves the map.
//   - A Component is one reference to the instance; Component.NewRef returns
//     another one. Signals that share one reference (core's way) stop the
//     instance with the first Shutdown; signals with a reference each stop it
//     with the last.
//   - The instance is started once, by the first Start of any reference. A
//     Start error is kept: that Start and every later one return it, and the
//     instance is not started again (the collector aborts its startup on the
//     first error anyway).
//   - A reference whose Start succeeded is running until its Shutdown; a
//     second Start of it does nothing.
//   - The instance is shut down once, when the last running reference shuts
//     down, and only if its Start succeeded: a Shutdown without Start, or after
//     a failed Start, does not reach the instance.
//   - A reference shuts down once: a later Shutdown, or a Start after it, does
//     nothing and returns nil. A stopped instance is never started again.
//   - Whenever a Shutdown leaves no reference running (the instance stopped,
//     or was never started), the entry leaves the map, so the next
//     LoadOrStore for the key creates a fresh instance.
//   - Map and Component are safe for concurrent use. The instance's Start and
//     Shutdown run under the instance's lock, so they never overlap; create
//     runs under the map's lock and must not use the map.
//
// Two differences from core: core's Shutdown reaches the instance even
// without a successful Start, and core wraps the host to forward component
// status to every pipeline; here the instance gets the first Start's host.
package sharedcomponent // import "github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Map keeps one instance per key.
type Map[K comparable, V component.Component] struct {
	mu      sync.Mutex
	entries map[K]*Component[V]
}

// NewMap returns an empty Map.
func NewMap[K comparable, V component.Component]() *Map[K, V] {
	return &Map[K, V]{entries: map[K]*Component[V]{}}
}

// LoadOrStore returns the key's Component, creating its instance with create
// if the key has none.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.entries[key]; ok {
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{in: &instance[V]{v: v}}
	c.in.remove = func() { m.remove(key, c) }
	m.entries[key] = c
	return c, nil
}

// Len returns the number of keys that have an instance.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

func (m *Map[K, V]) remove(key K, c *Component[V]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries[key] == c {
		delete(m.entries, key)
	}
}

// instance is the shared component and its lifecycle.
type instance[V component.Component] struct {
	mu       sync.Mutex
	v        V
	tried    bool  // v.Start was called
	startErr error // what v.Start returned
	running  int   // references started and not shut down
	stopped  bool  // v.Shutdown was called
	remove   func()
}

type refState uint8

const (
	refIdle refState = iota
	refRunning
	refDone
)

// Component is one reference to a shared instance. It is a
// component.Component itself.
type Component[V component.Component] struct {
	in    *instance[V]
	state refState // guarded by in.mu
}

var _ component.Component = (*Component[component.Component])(nil)

// Unwrap returns the shared instance.
func (c *Component[V]) Unwrap() V {
	return c.in.v
}

// NewRef returns a new reference to c's instance, which counts on its own.
func (c *Component[V]) NewRef() *Component[V] {
	return &Component[V]{in: c.in}
}

// Start starts the instance if no reference started it before.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	in := c.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if c.state != refIdle || in.stopped {
		return nil
	}
	if !in.tried {
		in.tried = true
		in.startErr = in.v.Start(ctx, host)
	}
	if in.startErr != nil {
		return in.startErr
	}
	c.state = refRunning
	in.running++
	return nil
}

// Shutdown releases this reference, shutting the instance down if it was the
// last running one.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	in := c.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if c.state == refDone {
		return nil
	}
	wasRunning := c.state == refRunning
	c.state = refDone
	var err error
	if wasRunning {
		in.running--
		if in.running == 0 {
			in.stopped = true
			err = in.v.Shutdown(ctx)
		}
	}
	if in.running == 0 {
		in.remove()
	}
	return err
}
