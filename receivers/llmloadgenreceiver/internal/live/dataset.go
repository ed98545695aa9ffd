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
