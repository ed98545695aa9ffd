package live

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/httpstream"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

// traceArmLead is how long before its time a trace row is armed: its
// goroutine started, its concurrency slot and its connection taken (dialled
// if none is idle), and its request written on it but for the last byte
// (raw transport), so that at its time only that byte is left to write.
// Rows of one timestamp, which real traces have many of, then go out
// behind each other's one-byte writes only, not behind each other's setup
// and bodies (up to hundreds of KB each); 10 ms covers a burst of 16 new
// connections on a busy 2-core machine, where 2 ms did not.
const traceArmLead = 10 * time.Millisecond

// A traceGate is opened at its time and sends the rows armed for it. As it
// opens the gate, the scheduler itself writes the last byte of each staged
// request, one after another, while the rows' goroutines, woken, race it
// to write their own: a burst goes out at once, without waiting for the
// goroutines to be scheduled, and still goes out when the scheduler loses
// its core halfway (on loopback the byte that completes a request wakes
// the server, which the kernel may run on the sender's core).
type traceGate struct {
	at   time.Time
	rows int
	open chan struct{}

	mu     sync.Mutex
	opened bool
	staged []*liveResult // rows staged and waiting, for the scheduler to send
}

// wait adds res, staged, to the rows the scheduler sends when it opens g;
// false when g is already open (res sends itself).
func (g *traceGate) wait(res *liveResult) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return false
	}
	g.staged = append(g.staged, res)
	return true
}

// leave takes res back from the rows the scheduler sends; false when g
// opened first (res is being sent).
func (g *traceGate) leave(res *liveResult) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return false
	}
	g.staged = slices.DeleteFunc(g.staged, func(o *liveResult) bool { return o == res })
	return true
}

// take marks g open and returns the staged rows waiting for it.
func (g *traceGate) take() []*liveResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opened = true
	rows := g.staged
	g.staged = nil
	return rows
}

// replay arms each row armLead (traceArmLead) before its time and opens each
// timestamp's gate at that time, in time order, until the rows run out (or
// the request bound is reached) and every armed row is sent, or ctx ends.
func (r *Runner) replay(ctx context.Context, ahead <-chan *tracedRequest, start time.Time) {
	pc := r.newPacer()
	defer pc.close()
	begin := r.readyAt.Add(-loadgen.SkipSlack)
	var gates []*traceGate
	var next *tracedRequest
	more, opened := true, start
	for {
		if next == nil && more {
			if len(gates) == 0 {
				next, more = <-ahead
			} else {
				select { // the reader is behind: open the due gate meanwhile
				case next, more = <-ahead:
				default:
				}
			}
		}
		switch {
		case next != nil && (len(gates) == 0 || !start.Add(next.row.At-r.armLead).After(gates[0].at)):
			armed, ok := r.arm(ctx, pc, start.Add(next.row.At), begin, next, &gates)
			if !ok {
				return
			}
			next, more = nil, more && armed
		case len(gates) > 0:
			if !r.openGate(ctx, pc, gates[0], opened) {
				return
			}
			opened = gates[0].at
			gates = gates[1:]
		default:
			return
		}
	}
}

// arm starts row tr's request, due at sched, on a goroutine that waits at
// the gate for sched. armed is false once the run's request bound is
// reached; ok is false when ctx ended.
func (r *Runner) arm(ctx context.Context, pc *pacer, sched, begin time.Time, tr *tracedRequest, gates *[]*traceGate) (armed, ok bool) {
	if sched.Before(begin) {
		r.skipLate(sched)
		return true, true
	}
	if !r.ticket() {
		return false, true
	}
	if !pc.wait(ctx, sched.Add(-r.armLead)) {
		return false, false
	}
	var g *traceGate
	if n := len(*gates); n > 0 && (*gates)[n-1].at.Equal(sched) {
		g = (*gates)[n-1]
	} else {
		g = &traceGate{at: sched, open: make(chan struct{})}
		*gates = append(*gates, g)
	}
	g.rows++
	r.inflight.Add(1)
	go func() {
		defer r.inflight.Done()
		r.sendArmed(ctx, sched, tr, g)
	}()
	return true, true
}

// gateSpin is how long before a gate's time the scheduler stops sleeping
// and spins, at most: a woken scheduler may wait for a core (the mark
// phase of the garbage collector, the streams being read), and a
// millisecond covers that on a busy machine. It is a quarter of the time
// since the gate before at most, so that it costs at most a quarter of a
// core however dense the trace, and never less than live.pacer.spin.
const gateSpin = time.Millisecond

// openGate waits for g's time and sends its rows; false when ctx ended
// first. The schedule lag is recorded for each of them.
func (r *Runner) openGate(ctx context.Context, pc *pacer, g *traceGate, prev time.Time) bool {
	spin := min(gateSpin, g.at.Sub(prev)/4)
	if !pc.waitSpin(ctx, g.at, max(spin, pc.spin)) {
		return false
	}
	lag := time.Since(g.at).Seconds()
	rows := g.take()
	conns := make([]*httpstream.Held, len(rows))
	for i, res := range rows {
		conns[i] = r.client.stagedConn(res) // before the rows wake and take them
	}
	close(g.open)
	for _, h := range conns {
		r.client.sendStaged(h)
	}
	for range g.rows {
		r.tel.Live.Lag.Record(context.Background(), lag)
		r.sched.Record(lag)
	}
	return true
}

// sendArmed queues trace row tr's request, takes its connection and writes
// the request on it but for its last byte, waits for gate and sends that
// byte. When the replay ends first (ctx), the request is finished as
// cancelled, unsent: the server never had all of it.
func (r *Runner) sendArmed(ctx context.Context, sched time.Time, tr *tracedRequest, g *traceGate) {
	res, ok := r.queue(sched, 0, tr, nil)
	if !ok {
		return
	}
	r.client.hold(r.reqCtx, res)
	if tr.err == nil {
		r.client.stage(r.reqCtx, res, tr.body)
	}
	waiting := res.staged != nil && g.wait(res)
	select {
	case <-g.open:
	case <-ctx.Done():
		if waiting && !g.leave(res) {
			<-g.open // the scheduler is sending it
			break
		}
		select {
		case <-g.open: // opened before the replay ended: send it
		default:
			r.client.unhold(res)
			r.release()
			res.End = time.Now()
			res.fail(errTypeCancelled, errors.New("the replay ended before the row's time"))
			r.finish(res)
			return
		}
	}
	r.dispatch(res)
}
