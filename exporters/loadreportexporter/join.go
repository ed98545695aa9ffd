package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The per-request join of client and server spans. A load generator's
// client span (llm_loadgen sends its traceparent) and the inference server's
// SERVER span for the same request (vLLM, SGLang, mockllm; any GenAI SERVER
// span) reach the collector separately and in either order. Each waits here
// for its partner: a server span whose parent is the client span, or, when
// a proxy's span sits between them, the only one of the other side in the
// same trace. A joined pair becomes one request's decomposition
// (decompose.go) in the client's run. A span that waits longer than
// join.hold, that is pushed out by join.max_pending, or that still waits at
// the end of the run is counted as unjoined, by side and reason.

// JoinConfig bounds the spans that wait for their partner.
type JoinConfig struct {
	// Hold is how long a client or server span waits for the other side.
	Hold time.Duration `mapstructure:"hold"`
	// MaxPending is the number of spans waiting at once, both sides
	// together; the oldest is given up when it is reached. 0 turns the
	// join off.
	MaxPending int `mapstructure:"max_pending"`
}

func (j JoinConfig) validate() []error {
	var errs []error
	if j.Hold <= 0 {
		errs = append(errs, fmt.Errorf("join.hold: %v must be positive (how long a span waits for its partner)", j.Hold))
	}
	if j.MaxPending < 0 || j.MaxPending > 10_000_000 {
		errs = append(errs, fmt.Errorf("join.max_pending: %d must be 0 (off) to 10000000", j.MaxPending))
	}
	return errs
}

// Reasons a span stays unjoined.
const (
	unjoinedTimeout = "timeout" // waited join.hold
	unjoinedEvicted = "evicted" // pushed out by join.max_pending
	unjoinedRunEnd  = "run_end" // still waiting when the final report was built
)

// clientSide is what a client span contributes to its request's
// decomposition, in seconds.
type clientSide struct {
	st      *state
	spanID  pcommon.SpanID
	ttft    float64 // scheduled (or span start) → first content chunk; NaN: none
	e2e     float64 // scheduled (or span start) → last chunk
	queue   float64 // client-side queue
	connect float64 // DNS + TCP connect + TLS
}

// serverSide is what a server span contributes, in seconds on the server's
// clock; NaN where the span does not say.
type serverSide struct {
	parent  pcommon.SpanID
	ttft    float64
	queue   float64
	prefill float64
	decode  float64
	e2e     float64
}

// waiter is a span waiting for its partner.
type waiter struct {
	trace  pcommon.TraceID
	at     time.Time
	client *clientSide // exactly one of client and server is set
	server *serverSide
	done   bool // joined or given up; still in the FIFO until it reaches the front
}

// joiner holds the waiting spans of every run. It is guarded by the
// exporter's lock.
type joiner struct {
	cfg     JoinConfig
	byTrace map[pcommon.TraceID][]*waiter
	fifo    []*waiter // arrival order; done entries are skipped
	waiting int

	serverSpans    int64
	serverWaiting  int64
	unjoinedServer map[string]int64
	// joinedTel and unjoinedTel are for the exporter's own telemetry
	// ({side, reason} → count), taken after each call.
	joinedTel   int64
	unjoinedTel map[[2]string]int64
}

func newJoiner(cfg JoinConfig) *joiner {
	return &joiner{cfg: cfg, byTrace: map[pcommon.TraceID][]*waiter{}, unjoinedServer: map[string]int64{}}
}

func (j *joiner) enabled() bool { return j != nil && j.cfg.MaxPending > 0 }

// addClient offers a client span; it joins a waiting server span or waits.
func (j *joiner) addClient(trace pcommon.TraceID, c *clientSide, now time.Time) {
	c.st.joinState().clientSpans++
	j.expire(now)
	if w := j.partner(trace, c.spanID, true); w != nil {
		j.serverWaiting--
		j.join(c, w.server, w.server.parent == c.spanID)
		j.finish(w)
		return
	}
	j.wait(&waiter{trace: trace, at: now, client: c})
	c.st.joinState().waitingClients++
}

// addServer offers a server span; it joins a waiting client span or waits.
func (j *joiner) addServer(trace pcommon.TraceID, s *serverSide, now time.Time) {
	j.serverSpans++
	j.expire(now)
	if w := j.partner(trace, s.parent, false); w != nil {
		w.client.st.joinState().waitingClients--
		j.join(w.client, s, w.client.spanID == s.parent)
		j.finish(w)
		return
	}
	j.wait(&waiter{trace: trace, at: now, server: s})
	j.serverWaiting++
}

// partner finds the waiting span of the other side in trace: the one whose
// span id (wantServer: whose parent id) is link, else the only one there is.
func (j *joiner) partner(trace pcommon.TraceID, link pcommon.SpanID, wantServer bool) *waiter {
	var only *waiter
	n := 0
	for _, w := range j.byTrace[trace] {
		switch {
		case wantServer && w.server != nil:
			if w.server.parent == link {
				return w
			}
		case !wantServer && w.client != nil:
			if w.client.spanID == link {
				return w
			}
		default:
			continue
		}
		only = w
		n++
	}
	if n == 1 {
		return only
	}
	return nil
}

func (j *joiner) join(c *clientSide, s *serverSide, byParent bool) {
	js := c.st.joinState()
	js.joined++
	if !byParent {
		js.joinedByTrace++
	}
	j.joinedTel++
	js.add(c, s)
}

// wait queues w, giving up the oldest waiting span when join.max_pending is
// reached.
func (j *joiner) wait(w *waiter) {
	for j.waiting >= j.cfg.MaxPending && j.popOldest(unjoinedEvicted) {
	}
	j.byTrace[w.trace] = append(j.byTrace[w.trace], w)
	if len(j.fifo) > 2*j.waiting+1024 {
		j.compact()
	}
	j.fifo = append(j.fifo, w)
	j.waiting++
}

// compact drops the joined entries from the FIFO, so that it holds at most
// about twice the waiting spans however long join.hold is.
func (j *joiner) compact() {
	kept := j.fifo[:0]
	for _, w := range j.fifo {
		if !w.done {
			kept = append(kept, w)
		}
	}
	clear(j.fifo[len(kept):])
	j.fifo = kept
}

// expire gives up the spans that have waited join.hold by now.
func (j *joiner) expire(now time.Time) {
	for len(j.fifo) > 0 {
		w := j.fifo[0]
		if !w.done && now.Sub(w.at) < j.cfg.Hold {
			return
		}
		j.popOldest(unjoinedTimeout)
	}
}

// popOldest removes the front of the FIFO, counting it as unjoined for
// reason if it still waited. It reports whether anything was removed.
func (j *joiner) popOldest(reason string) bool {
	if len(j.fifo) == 0 {
		return false
	}
	w := j.fifo[0]
	j.fifo[0] = nil
	j.fifo = j.fifo[1:]
	if len(j.fifo) == 0 {
		j.fifo = nil // let the backing array go
	}
	if !w.done {
		j.giveUp(w, reason)
		j.finish(w)
	}
	return true
}

func (j *joiner) giveUp(w *waiter, reason string) {
	side := "server"
	if w.client != nil {
		side = "client"
		js := w.client.st.joinState()
		js.waitingClients--
		js.unjoinedClient[reason]++
	} else {
		j.serverWaiting--
		j.unjoinedServer[reason]++
	}
	if j.unjoinedTel == nil {
		j.unjoinedTel = map[[2]string]int64{}
	}
	j.unjoinedTel[[2]string{side, reason}]++
}

// finish marks w done and takes it out of its trace's list.
func (j *joiner) finish(w *waiter) {
	w.done = true
	j.waiting--
	list := j.byTrace[w.trace]
	for i, x := range list {
		if x == w {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(j.byTrace, w.trace)
	} else {
		j.byTrace[w.trace] = list
	}
}

// takeTelemetry returns and clears the joins and the unjoined spans
// ({side, reason}) since the last call, for the exporter's own telemetry.
func (j *joiner) takeTelemetry() (joined int64, unjoined map[[2]string]int64) {
	joined, unjoined = j.joinedTel, j.unjoinedTel
	j.joinedTel, j.unjoinedTel = 0, nil
	return joined, unjoined
}

// giveUpAll counts every waiting span as unjoined for reason: the run is
// over and no partner will come.
func (j *joiner) giveUpAll(reason string) {
	for j.popOldest(reason) {
	}
}
