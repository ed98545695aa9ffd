package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
)

// foldOperatorID is the operator that folds continuation lines (tracebacks,
// panics, wrapped dumps) into the record they continue.
const foldOperatorID = "inference_log_fold"

// Bounds of one folded record: lines and bytes. A longer traceback is cut
// into several records; no line is lost.
const (
	foldMaxLines = 500
	foldMaxBytes = 256 << 10
	// foldMaxUnstarted bounds the lines folded while no record start has
	// been seen in a file (one that opens in the middle of a traceback).
	foldMaxUnstarted = 100
	// foldMaxSources bounds the files with a record pending; beyond it
	// every pending record is sent.
	foldMaxSources = 1000
)

var (
	// foldFlush is how long a record may take to arrive before it is sent
	// as it is: a record is flushed once its first line is this old (and
	// the last record of a file waits this long for a continuation). Long
	// enough for a traceback that a busy tailer reads over several polls;
	// stanza's recombine default.
	// (The tests, which write whole files at once, use a shorter one.)
	foldFlush = 5 * time.Second
)

// foldConfig builds the fold operator. It does what stanza's recombine
// operator does with is_first_entry, combine_with "\n", the file as the
// source identifier and overwrite_with "oldest" (the record keeps its first
// line's fields), with the record-start decision in Go: the preset's
// pattern, after a fast check of the preset's own header where it has one
// (a line with vLLM's logger header starts a record whatever the pattern
// says of it, which a test holds). A record of one line keeps its body as
// read, without a copy.
type foldConfig struct {
	helper.TransformerConfig
	starts func(line string) bool
}

// newFoldConfig folds the lines for which starts is false into the record
// before them.
func newFoldConfig(starts func(string) bool) operator.Config {
	return operator.NewConfig(&foldConfig{
		TransformerConfig: helper.NewTransformerConfig(foldOperatorID, foldOperatorID),
		starts:            starts,
	})
}

// compileFoldPattern checks a preset's continuation or record-start
// pattern, named by field.
func compileFoldPattern(field, pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return re, nil
}

func (c *foldConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	return &foldOperator{TransformerOperator: t, starts: c.starts, flushAfter: foldFlush, pending: map[string]*foldRecord{}}, nil
}

type foldOperator struct {
	helper.TransformerOperator
	starts     func(string) bool
	flushAfter time.Duration

	mu      sync.Mutex
	pending map[string]*foldRecord // by file
	stop    chan struct{}
	done    chan struct{}
}

// foldRecord is a record being folded: its first line's entry and, once a
// continuation came, the text so far.
type foldRecord struct {
	base    *entry.Entry
	body    strings.Builder // empty while the record is one line
	size    int             // bytes of the body so far
	lines   int
	first   time.Time // when its first line was read
	started bool      // it began with a record start
}

func (o *foldOperator) Start(_ operator.Persister) error {
	o.stop, o.done = make(chan struct{}), make(chan struct{})
	go o.flushLoop()
	return nil
}

func (o *foldOperator) Stop() error {
	if o.stop != nil {
		close(o.stop)
		<-o.done
		o.stop = nil
	}
	o.mu.Lock()
	var out []*entry.Entry
	for src := range o.pending {
		out = o.flush(src, out)
	}
	o.mu.Unlock()
	if len(out) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return o.WriteBatch(ctx, out)
	}
	return nil
}

// flushLoop sends the records whose first line is older than flushAfter.
func (o *foldOperator) flushLoop() {
	defer close(o.done)
	tick := time.NewTicker(o.flushAfter / 5)
	defer tick.Stop()
	for {
		select {
		case <-o.stop:
			return
		case now := <-tick.C:
			o.mu.Lock()
			var out []*entry.Entry
			for src, r := range o.pending {
				if now.Sub(r.first) >= o.flushAfter {
					out = o.flush(src, out)
				}
			}
			o.mu.Unlock()
			if len(out) > 0 {
				if err := o.WriteBatch(context.Background(), out); err != nil {
					o.Logger().Error("sending folded records", zap.Error(err))
				}
			}
		}
	}
}

func (o *foldOperator) Process(ctx context.Context, e *entry.Entry) error {
	return o.ProcessBatch(ctx, []*entry.Entry{e})
}

// ProcessBatch folds the entries in order and sends on, in one batch, the
// records they completed.
func (o *foldOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	o.mu.Lock()
	out := make([]*entry.Entry, 0, len(entries))
	for _, e := range entries {
		out = o.add(e, out)
	}
	o.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	return o.WriteBatch(ctx, out)
}

// add folds one entry, appending the records it completes to out.
func (o *foldOperator) add(e *entry.Entry, out []*entry.Entry) []*entry.Entry {
	src, _ := e.Attributes[attrFileName].(string)
	body, isText := e.Body.(string)
	if !isText {
		// Nothing to fold into or with: the record before it is complete.
		return append(o.flush(src, out), e)
	}
	r := o.pending[src]
	start := o.starts(body)
	if start || r == nil {
		out = o.flush(src, out)
		if len(o.pending) >= foldMaxSources {
			for s := range o.pending {
				out = o.flush(s, out)
			}
		}
		r = &foldRecord{base: e, size: len(body), lines: 1, first: e.ObservedTimestamp, started: start}
		o.pending[src] = r
	} else {
		if r.lines == 1 {
			r.body.WriteString(r.base.Body.(string))
		}
		r.body.WriteByte('\n')
		r.body.WriteString(body)
		r.size += 1 + len(body)
		r.lines++
	}
	if r.size > foldMaxBytes || r.lines >= foldMaxLines || !r.started && r.lines >= foldMaxUnstarted {
		out = o.flush(src, out)
	}
	return out
}

// flush completes the pending record of src, if any, onto out.
func (o *foldOperator) flush(src string, out []*entry.Entry) []*entry.Entry {
	r := o.pending[src]
	if r == nil {
		return out
	}
	delete(o.pending, src)
	if r.lines > 1 {
		r.base.Body = r.body.String()
	}
	return append(out, r.base)
}
