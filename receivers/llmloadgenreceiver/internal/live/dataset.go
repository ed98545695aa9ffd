package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"go.uber.org/zap"
)

// openDataset reads live.dataset, when set, and logs what it found.
func (r *Runner) openDataset() error {
	dc := r.lc.Dataset
	if dc.Path == "" {
		return nil
	}
	if dc.MaxInputTokens == 0 || dc.MaxInputTokens > r.prompts.maxIn {
		dc.MaxInputTokens = r.prompts.maxIn // prompt plus max_tokens fit the context window
	}
	ix, err := dataset.Open(dc, r.plan.LocalSeed()^0x9e3779b97f4a7c15)
	if err != nil {
		return fmt.Errorf("live.dataset: %w", err)
	}
	r.dataset = ix
	s := ix.Summary()
	r.workloadLine = describeDataset(ix.Name(), dc.Format, s)
	r.logger.Info("llm_loadgen live dataset read", zap.String("path", dc.Path), zap.String("format", dc.Format),
		zap.Int64("records", s.Records), zap.Int("kept", s.Kept), zap.Any("skipped", s.Skipped),
		zap.String("token_counts", "estimated (4 bytes per token)"))
	return nil
}

// describeDataset is the console line of a dataset read at start.
func describeDataset(name, format string, s dataset.Summary) string {
	line := fmt.Sprintf("llm_loadgen: dataset %s (%s): %d records, %d used", name, format, s.Records, s.Kept)
	reasons := make([]string, 0, len(s.Skipped))
	for r := range s.Skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for i, r := range reasons {
		sep := ", "
		if i == 0 {
			sep = "; skipped: "
		}
		line += fmt.Sprintf("%s%d %s", sep, s.Skipped[r], r)
	}
	return line + "; token counts estimated at 4 bytes per token"
}

// body renders request res: a dataset record, or a synthetic prompt of a
// sampled length.
func (r *Runner) body(res *liveResult) ([]byte, int, error) {
	if res.session != nil {
		return r.sessionBody(res)
	}
	if tr := res.traced; tr != nil {
		res.DatasetRow, res.MaxTokens = tr.row.Line, tr.row.OutputTokens
		return tr.body, tr.row.InputTokens, tr.err
	}
	if r.dataset == nil {
		return r.syntheticBody(res)
	}
	return r.datasetBody(res)
}

// syntheticBody renders a synthetic prompt of a sampled length, on a shared
// prefix group's system prompt when live.prompt.shared_prefix is set.
func (r *Runner) syntheticBody(res *liveResult) ([]byte, int, error) {
	r.inMu.Lock()
	want := r.inputs.Tokens(1)
	pb := r.prompts
	if r.shared != nil {
		g := r.groupRand.IntN(len(r.shared.groups))
		// The group's system prompt: shared.tokens under the estimate,
		// its exact count under a tokenizer.
		pb, res.PrefixGroup = r.shared.groups[g], g
		res.CacheableTokens = pb.baseTokens()
	}
	r.inMu.Unlock()
	return pb.build(res.Seq, want)
}

// datasetBody renders the dataset's next record, with its output length (or
// live.max_tokens) as max_tokens.
func (r *Runner) datasetBody(res *liveResult) ([]byte, int, error) {
	rec, err := r.dataset.Next()
	if err != nil {
		return nil, 0, err
	}
	res.DatasetRow, res.MaxTokens = rec.Row, rec.OutputTokens
	if res.MaxTokens == 0 {
		res.MaxTokens = r.lc.MaxTokens
	}
	body, err := r.prompts.buildMessages(rec.Messages, res.MaxTokens)
	return body, rec.InputTokens, err
}

// openTrace opens live.trace, when set, for replay.
func (r *Runner) openTrace() error {
	if r.lc.Trace.Path == "" {
		return nil
	}
	tr, err := dataset.OpenTrace(r.lc.Trace)
	if err != nil {
		return fmt.Errorf("live.trace: %w", err)
	}
	r.trace = tr
	tc := r.lc.Trace
	window := "to its end"
	if tc.Length > 0 {
		window = "for " + tc.Length.String()
	}
	loop := ""
	if tc.Loop {
		loop = ", looped"
	}
	r.workloadLine = fmt.Sprintf("llm_loadgen: replaying trace %s (%s) at %g× from %v %s%s; %d-token blocks per hash id, token counts estimated at 4 bytes per token",
		filepath.Base(tc.Path), tc.Format, tc.Speed, tc.Offset, window, loop, tc.BlockTokens)
	return nil
}

// runTrace replays live.trace: each row is sent at its timestamp (speed,
// window and loops applied) with a prompt built from its hash ids and its
// output length as max_tokens. Sharded, shard i sends rows i+1, i+1+count,
// ... of the trace, so the shards' union is the trace. It ends with the
// trace's window, the run's duration or request bound, or ctx. A reader
// goroutine builds the bodies ahead, so the scheduler only waits and sends;
// the schedule starts once the reader is a full lookahead ahead (or at
// start_at, the reader filling up to it), and an arming lead later, so
// that the rows at the trace's start, often many at one timestamp, are not
// sent late.
func (r *Runner) runTrace(ctx context.Context, start time.Time) {
	ctx, cancel := context.WithCancel(ctx)
	ahead := make(chan *tracedRequest, traceLookahead)
	filled := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		r.readTrace(ctx, ahead, filled)
	}()
	// The reader is done with the file before the replay ends (Shutdown
	// closes it after the scheduler returns).
	defer func() { cancel(); <-readDone }()
	select {
	case <-filled:
	case <-ctx.Done():
		return
	}
	if r.plan.StartAt.IsZero() { // else start_at, which the arming waits for
		start = time.Now().Add(r.armLead) // the first rows are armed ahead too
	}
	r.replay(ctx, ahead, start)
}

// traceArmLead is how long before its time a trace row is armed: its
// goroutine started, its concurrency slot and its connection taken (dialled
// if none is idle), and its request written on it but for the last byte
// (raw transport), so that at its time only that byte is left to write.
// Rows of one timestamp, which real traces have many of, then go out
// behind each other's one-byte writes only, not behind each other's setup
// and bodies (up to hundreds of KB each); 10 ms covers a burst of 16 new
// connections on a busy 2-core machine, where 2 ms did not.
const traceArmLead = 10 * time.Millisecond

// A traceGate is opened at its time and sends the rows armed for it.
type traceGate struct {
	at   time.Time
	rows int
	open chan struct{}
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
		r.sendArmed(ctx, sched, tr, g.open)
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
	close(g.open)
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
func (r *Runner) sendArmed(ctx context.Context, sched time.Time, tr *tracedRequest, gate <-chan struct{}) {
	res, ok := r.queue(sched, 0, tr, nil)
	if !ok {
		return
	}
	r.client.hold(r.reqCtx, res)
	if tr.err == nil {
		r.client.stage(r.reqCtx, res, tr.body)
	}
	select {
	case <-gate:
	case <-ctx.Done():
		select {
		case <-gate: // opened before the replay ended: send it
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

// traceLookahead is how many trace rows the reader builds ahead of their
// send times.
const traceLookahead = 64

// readTrace sends this shard's rows of the trace, bodies built, to ahead
// until the trace's window or the run's duration ends, or ctx does; it
// closes filled once ahead is full or it is done.
func (r *Runner) readTrace(ctx context.Context, ahead chan<- *tracedRequest, filled chan<- struct{}) {
	defer close(ahead)
	sent := 0
	defer func() {
		if sent < cap(ahead) {
			close(filled)
		}
	}()
	for n := int64(0); ; n++ {
		row, err := r.trace.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			r.logger.Error("llm_loadgen trace replay stopped", zap.Error(err))
			r.progress.print("llm_loadgen: trace replay stopped: " + err.Error())
			return
		}
		if r.plan.Sharded() && n%int64(r.plan.Count) != int64(r.plan.Index) {
			continue
		}
		if r.cfg.Duration > 0 && row.At >= r.cfg.Duration {
			return
		}
		tr := &tracedRequest{row: row}
		prompt := dataset.PromptFor(row, r.lc.Trace.BlockTokens)
		tr.body, tr.err = r.prompts.buildMessages([]dataset.Message{{Role: "user", Content: prompt}}, row.OutputTokens)
		select {
		case ahead <- tr:
		case <-ctx.Done():
			return
		}
		if sent++; sent == cap(ahead) {
			close(filled)
		}
	}
}

// tracedRequest is a trace row to send and its body, built ahead.
type tracedRequest struct {
	row  dataset.TraceRow
	body []byte
	err  error
}
