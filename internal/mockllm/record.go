package mockllm

import (
	"context"
	"sync"
	"time"
)

// Record is the ground truth of one request: what the server planned and
// what it actually did, with the server's own clock.
type Record struct {
	ID           string
	Endpoint     string // "/v1/chat/completions", ...
	Model        string
	Stream       bool
	IncludeUsage bool
	// Traceparent and Tracestate are the W3C headers the request carried.
	Traceparent string
	Tracestate  string
	Fault       string
	Status      int

	PromptTokens int
	// CachedTokens are the prompt's leading tokens the prefix cache served
	// (Config.PrefixCacheBlockTokens), which took no prefill time.
	CachedTokens int
	// CacheSeq is the request's place in the prefix cache's order of
	// lookups (1 for the first; 0 with the cache off): requests that arrive
	// together may look it up in another order than Received's.
	CacheSeq int64
	// PlannedTokens is the completion length the latency model chose;
	// SentTokens is how many were written before the response ended.
	PlannedTokens int
	SentTokens    int
	SentChunks    int
	FinishReason  string
	PlannedTTFT   time.Duration
	PlannedITL    time.Duration // mean of the planned gaps

	Received time.Time // the request's body was read to its end
	// Arrived is when the kernel received the request's last byte (Linux,
	// HTTP/1.1; zero elsewhere): Received less the time this process took
	// to read it, which a busy server's runtime can make milliseconds.
	Arrived time.Time
	// QueueWait is how long the request waited for an engine slot
	// (Config.MaxRunning): its TTFT clock started at Received+QueueWait.
	// 0 when a slot was free at once.
	QueueWait time.Duration
	// QueueFull is set when the request was refused with a 503 because
	// Config.MaxQueue requests were already waiting.
	QueueFull bool
	// Preemptions is how often the engine preempted the request to free KV
	// cache (Config.KVCacheTokens); PreemptedFor the time it waited to be
	// admitted again, Recompute the time spent recomputing its tokens.
	Preemptions  int
	PreemptedFor time.Duration
	Recompute    time.Duration
	HeadersAt    time.Time // response headers flushed
	// FirstContentAt is when the first chunk with content was handed to the
	// connection (just before its write and flush).
	FirstContentAt time.Time
	// LastContentAt is the same for the last content chunk.
	LastContentAt time.Time
	// ChunkTimes are the flush times of every content chunk (when
	// Config.RecordTokenTimes is set).
	ChunkTimes []time.Time
	EndAt      time.Time
	DoneSent   bool // "data: [DONE]" was written
	ClientGone bool // the client went away before the end

	// Session is the request's "user" field, SessionTurn its turn in that
	// session (1 for the first the server saw); HistoryChecked is set from
	// the second turn on, HistoryOK when the messages carried the server's
	// answer to the turn before, verbatim.
	Session        string
	SessionTurn    int
	HistoryChecked bool
	HistoryOK      bool
}

// TTFT is the server-side time to first content chunk, from the moment the
// request's body was read (as a server's own TTFT counts); 0 when no
// content was sent.
func (r *Record) TTFT() time.Duration {
	if r.FirstContentAt.IsZero() {
		return 0
	}
	return r.FirstContentAt.Sub(r.Received)
}

// WireTTFT is the time to first content chunk as the network saw it: from
// the kernel's receipt of the request's last byte to the chunk's write.
// This is what a client can measure, and the truth its TTFT is compared
// with; it falls back to TTFT where Arrived is unknown.
func (r *Record) WireTTFT() time.Duration {
	if r.Arrived.IsZero() || r.FirstContentAt.IsZero() {
		return r.TTFT()
	}
	return r.FirstContentAt.Sub(r.Arrived)
}

// ITLs are the gaps between consecutive content chunks.
func (r *Record) ITLs() []time.Duration {
	if len(r.ChunkTimes) < 2 {
		return nil
	}
	out := make([]time.Duration, len(r.ChunkTimes)-1)
	for i := 1; i < len(r.ChunkTimes); i++ {
		out[i-1] = r.ChunkTimes[i].Sub(r.ChunkTimes[i-1])
	}
	return out
}

type entry struct {
	rec  Record
	done chan struct{}
}

// history keeps the most recent records, oldest evicted first.
type history struct {
	mu    sync.Mutex
	max   int
	byID  map[string]*entry
	order []string
	head  int
}

func newHistory(max int) *history {
	return &history{max: max, byID: map[string]*entry{}}
}

func (h *history) add(e *entry) {
	if h.max == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.order) < h.max {
		h.order = append(h.order, e.rec.ID)
	} else {
		delete(h.byID, h.order[h.head])
		h.order[h.head] = e.rec.ID
		h.head = (h.head + 1) % h.max
	}
	h.byID[e.rec.ID] = e
}

// finish publishes the final state of a request's record.
func (h *history) finish(e *entry, rec *Record) {
	h.mu.Lock()
	e.rec = *rec
	h.mu.Unlock()
	close(e.done)
}

func (h *history) get(ctx context.Context, id string) (Record, bool) {
	h.mu.Lock()
	e, ok := h.byID[id]
	h.mu.Unlock()
	if !ok {
		return Record{}, false
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return Record{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := e.rec
	r.ChunkTimes = append([]time.Time(nil), e.rec.ChunkTimes...)
	return r, true
}

func (h *history) all() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Record, 0, len(h.byID))
	for _, e := range h.byID {
		select {
		case <-e.done:
			r := e.rec
			r.ChunkTimes = append([]time.Time(nil), e.rec.ChunkTimes...)
			out = append(out, r)
		default:
		}
	}
	return out
}
