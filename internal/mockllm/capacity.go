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

// engine is the capacity model: MaxRunning slots and, with a KV budget,
// KVCacheTokens tokens of KV cache, handed out in arrival order to a queue
// of at most MaxQueue waiters. A request is admitted when a slot is free and
// its prompt fits in the free KV cache; every token it generates takes one
// more. When a token does not fit, the newest running request is preempted,
// as vLLM's scheduler does: its KV cache is freed, it goes back to the front
// of the queue, and when it is admitted again it recomputes its prompt and
// the tokens it had generated before it streams on. A freed slot or KV
// space goes to the oldest waiter first, so no later arrival can overtake it.
type engine struct {
	maxRunning, maxQueue int
	kvBudget             int // tokens; 0: no KV limit

	mu      sync.Mutex
	waiters list.List // of *waiter, oldest first (preempted requests in front)
	batch   list.List // of *slot, running, oldest admission first
	kvUsed  int

	// running, queued, maxQueued, rejected, preemptions and kvTokens are
	// written under mu when the engine has a limit (running alone,
	// atomically, when it has none) and read without it.
	running, queued, maxQueued, rejected, preemptions, kvTokens atomic.Int64
}

// slot is one admitted request's hold on the engine: its place in the batch
// and the KV-cache tokens it holds.
type slot struct {
	e           *engine
	el          *list.Element // in e.batch while running
	kv          int           // KV tokens held, under e.mu
	w           *waiter       // its way back in while preempted
	wel         *list.Element // w in e.waiters
	preemptions int           // times preempted, under e.mu
}

type waiter struct {
	ready   chan struct{} // closed when the slot is handed over
	need    int           // KV tokens to admit it
	sl      *slot
	granted bool // under engine.mu
}

func newEngine(maxRunning, maxQueue, kvTokens int) *engine {
	return &engine{maxRunning: maxRunning, maxQueue: maxQueue, kvBudget: kvTokens}
}

func (e *engine) limited() bool { return e.maxRunning > 0 || e.kvBudget > 0 }

// admitKV takes a slot for a request whose prompt needs need KV tokens,
// waiting for one in FIFO order while ctx lasts. It returns how long the
// request waited (0 when it was admitted at once) and its slot, whose
// release is to be called exactly once when the response ends. The error
// is errQueueFull, or ctx's error when the client went away while queued.
func (e *engine) admitKV(ctx context.Context, need int) (time.Duration, *slot, error) {
	sl := &slot{e: e}
	if !e.limited() {
		e.running.Add(1)
		return 0, sl, nil
	}
	need = min(need, e.kvBudget)
	e.mu.Lock()
	if e.waiters.Len() == 0 && e.fits(need) {
		e.grant(sl, need)
		e.mu.Unlock()
		return 0, sl, nil
	}
	if e.maxQueue > 0 && e.waiters.Len() >= e.maxQueue {
		e.rejected.Add(1)
		e.mu.Unlock()
		return 0, nil, errQueueFull
	}
	start := time.Now()
	w := &waiter{ready: make(chan struct{}), need: need, sl: sl}
	sl.w, sl.wel = w, e.waiters.PushBack(w)
	e.noteQueued()
	e.mu.Unlock()
	if err := sl.wait(ctx, w); err != nil {
		return time.Since(start), nil, err
	}
	return time.Since(start), sl, nil
}

// fits reports whether a request needing need KV tokens can run now.
func (e *engine) fits(need int) bool {
	return (e.maxRunning == 0 || e.running.Load() < int64(e.maxRunning)) &&
		(e.kvBudget == 0 || e.kvUsed+need <= e.kvBudget)
}

// grant puts sl into the running batch with need KV tokens.
func (e *engine) grant(sl *slot, need int) {
	e.running.Add(1)
	e.kvUsed += need
	e.kvTokens.Store(int64(e.kvUsed))
	sl.kv = need
	sl.el = e.batch.PushBack(sl)
}

func (e *engine) noteQueued() {
	if q := e.queued.Add(1); q > e.maxQueued.Load() {
		e.maxQueued.Store(q)
	}
}

// wait blocks until w, sl's waiter, is granted, or ctx ends (the waiter is
// then removed, or the slot passed on when it arrived together with the
// end).
func (sl *slot) wait(ctx context.Context, w *waiter) error {
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	e := sl.e
	e.mu.Lock()
	if w.granted {
		e.mu.Unlock()
		sl.release()
		return ctx.Err()
	}
	e.waiters.Remove(sl.wel)
	sl.w, sl.wel = nil, nil
	e.queued.Add(-1)
	e.dispatch() // the front may have been what held the others back
	e.mu.Unlock()
	return ctx.Err()
}

// release frees sl's slot and KV tokens and admits the waiters that now
// fit, oldest first.
func (sl *slot) release() {
	e := sl.e
	if !e.limited() {
		e.running.Add(-1)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if sl.el != nil {
		e.leave(sl)
	}
	e.dispatch()
}

// leave takes sl out of the running batch and frees its KV tokens.
func (e *engine) leave(sl *slot) {
	e.batch.Remove(sl.el)
	sl.el = nil
	e.running.Add(-1)
	e.kvUsed -= sl.kv
	e.kvTokens.Store(int64(e.kvUsed))
	sl.kv = 0
}

// dispatch admits waiters from the front while they fit.
func (e *engine) dispatch() {
	for front := e.waiters.Front(); front != nil; front = e.waiters.Front() {
		w := front.Value.(*waiter)
		if !e.fits(w.need) {
			return
		}
		e.waiters.Remove(front)
		e.queued.Add(-1)
		w.sl.wel = nil
		e.grant(w.sl, w.need)
		w.granted = true
		close(w.ready)
	}
}

// grow takes n more KV tokens for sl's next output tokens. It returns false
// when sl was preempted (before or by this call): the caller waits in resume
// before it sends anything more. Without a KV budget it always succeeds.
func (sl *slot) grow(n int) bool {
	e := sl.e
	if e.kvBudget == 0 {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if sl.el == nil {
		return false
	}
	for e.kvUsed+n > e.kvBudget {
		victim := e.batch.Back().Value.(*slot)
		e.preempt(victim)
		if victim == sl {
			return false
		}
	}
	e.kvUsed += n
	e.kvTokens.Store(int64(e.kvUsed))
	sl.kv += n
	return true
}

// preempt frees v's KV cache and puts it at the front of the queue, to be
// admitted again with all the tokens it held (recomputed).
func (e *engine) preempt(v *slot) {
	need := v.kv
	e.leave(v)
	v.preemptions++
	e.preemptions.Add(1)
	v.w = &waiter{ready: make(chan struct{}), need: need, sl: v}
	v.wel = e.waiters.PushFront(v.w)
	e.noteQueued()
}

// resume waits, after a preemption, until sl is admitted again. It returns
// the tokens to recompute, or false when ctx ended first (sl is then out of
// the engine; release is still safe to call).
func (sl *slot) resume(ctx context.Context) (int, bool) {
	sl.e.mu.Lock()
	w := sl.w
	sl.e.mu.Unlock()
	if w == nil {
		return 0, false // not preempted: nothing to wait for
	}
	if err := sl.wait(ctx, w); err != nil {
		return 0, false
	}
	sl.e.mu.Lock()
	defer sl.e.mu.Unlock()
	return sl.kv, true
}

// slowdown is the factor of the next inter-token gap: decoding slows as the
// batch fills.
func (e *engine) slowdown(batchSlowdown float64) float64 {
	if e.maxRunning == 0 || batchSlowdown == 0 {
		return 1
	}
	return 1 + batchSlowdown*float64(e.running.Load())/float64(e.maxRunning)
}

// prefill is the request's time to first token from its admission: the
// planned TTFT, slowed like a decode step by the batch it joins (a prefill
// shares the engine's steps with the running batch). A TTFT forced by the
// request's header is taken as it is.
func (s *Server) prefill(p plan) time.Duration {
	if p.forcedTTFT {
		return p.ttft
	}
	return slowed(p.ttft, s.eng.slowdown(s.cfg.BatchSlowdown))
}

// slowed scales an inter-token gap by the batch slowdown factor f.
func slowed(d time.Duration, f float64) time.Duration {
	if f == 1 {
		return d
	}
	return time.Duration(float64(d) * f)
}

// admit waits for an engine slot for a completion request, with KV room
// for its prompt. It returns the slot, or false when the request ended instead: refused with a
// 503 because the queue is full, or left by its client while queued.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, rec *Record, span trace.Span) (*slot, bool) {
	wait, sl, err := s.eng.admitKV(r.Context(), rec.PromptTokens)
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
	return sl, true
}

// running reports whether sl holds its place in the batch (false once
// preempted, until resumed).
func (sl *slot) running() bool {
	e := sl.e
	if e.kvBudget == 0 {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return sl.el != nil
}
