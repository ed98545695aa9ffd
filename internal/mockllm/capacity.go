package mockllm

import (
	"container/list"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// errQueueFull is returned by admit when MaxQueue requests already wait.
var errQueueFull = errors.New("mockllm: queue full")

// engine is the capacity model: MaxRunning slots, handed out in arrival
// order to a queue of at most MaxQueue waiters. A released slot goes
// straight to the oldest waiter, so no later arrival can overtake it.
type engine struct {
	maxRunning, maxQueue int

	mu      sync.Mutex
	waiters list.List // of *waiter, oldest first

	// running, queued, maxQueued and rejected are written under mu when
	// maxRunning > 0 (running alone, atomically, when it is 0) and read
	// without it.
	running, queued, maxQueued, rejected atomic.Int64
}

type waiter struct {
	ready   chan struct{} // closed when the slot is handed over
	granted bool          // under engine.mu
}

func newEngine(maxRunning, maxQueue int) *engine {
	return &engine{maxRunning: maxRunning, maxQueue: maxQueue}
}

// admit takes a slot, waiting for one in FIFO order while ctx lasts. It
// returns how long the request waited (0 when a slot was free at once) and
// the function that gives the slot back, to be called exactly once when the
// response ends. The error is errQueueFull, or ctx's error when the client
// went away while queued.
func (e *engine) admit(ctx context.Context) (time.Duration, func(), error) {
	if e.maxRunning == 0 {
		e.running.Add(1)
		return 0, func() { e.running.Add(-1) }, nil
	}
	e.mu.Lock()
	if e.running.Load() < int64(e.maxRunning) && e.waiters.Len() == 0 {
		e.running.Add(1)
		e.mu.Unlock()
		return 0, e.release, nil
	}
	if e.maxQueue > 0 && e.waiters.Len() >= e.maxQueue {
		e.rejected.Add(1)
		e.mu.Unlock()
		return 0, nil, errQueueFull
	}
	start := time.Now()
	w := &waiter{ready: make(chan struct{})}
	el := e.waiters.PushBack(w)
	if q := e.queued.Add(1); q > e.maxQueued.Load() {
		e.maxQueued.Store(q)
	}
	e.mu.Unlock()

	select {
	case <-w.ready:
		return time.Since(start), e.release, nil
	case <-ctx.Done():
	}
	e.mu.Lock()
	if w.granted {
		// The slot arrived together with the cancellation: pass it on.
		e.mu.Unlock()
		e.release()
	} else {
		e.waiters.Remove(el)
		e.queued.Add(-1)
		e.mu.Unlock()
	}
	return time.Since(start), nil, ctx.Err()
}

// release hands the slot to the oldest waiter, or frees it.
func (e *engine) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	front := e.waiters.Front()
	if front == nil {
		e.running.Add(-1)
		return
	}
	w := e.waiters.Remove(front).(*waiter)
	e.queued.Add(-1)
	w.granted = true
	close(w.ready)
}

// slowdown is the factor of the next inter-token gap: decoding slows as the
// batch fills.
func (e *engine) slowdown(batchSlowdown float64) float64 {
	if e.maxRunning == 0 || batchSlowdown == 0 {
		return 1
	}
	return 1 + batchSlowdown*float64(e.running.Load())/float64(e.maxRunning)
}

// slowed scales an inter-token gap by the batch slowdown factor f.
func slowed(d time.Duration, f float64) time.Duration {
	if f == 1 {
		return d
	}
	return time.Duration(float64(d) * f)
}

// admit waits for an engine slot for a completion request. It returns the
// slot's release, or false when the request ended instead: refused with a
// 503 because the queue is full, or left by its client while queued.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, rec *Record, span trace.Span) (func(), bool) {
	wait, release, err := s.eng.admit(r.Context())
	if wait > 0 || err != nil {
		// The TTFT clock starts when the slot is granted: Received+QueueWait.
		rec.QueueWait = time.Since(rec.Received)
		span.SetAttributes(attribute.Float64("mockllm.queue_wait_s", rec.QueueWait.Seconds()))
	}
	switch {
	case errors.Is(err, errQueueFull):
		rec.QueueFull = true
		span.SetAttributes(attribute.Bool("mockllm.queue_full", true))
		writeOverloaded(w, rec, span)
		return nil, false
	case err != nil:
		rec.ClientGone = true
		return nil, false
	}
	return release, true
}
