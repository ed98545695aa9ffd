// Package dataset reads the prompt datasets of live mode: ShareGPT-format
// conversation files and OpenAI-style JSONL request files. A file is read
// once, streaming, at start: every record is decoded and checked (an invalid
// one is an error naming the file, line and field, or is skipped and
// counted), filtered by its estimated prompt length, and indexed by byte
// offset; a seeded reservoir keeps at most MaxRecords of them, so memory is
// bounded whatever the file's size. Requests then read their record back
// from the file by offset.
package dataset // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Formats of a dataset file.
const (
	FormatShareGPT = "sharegpt" // a JSON array of {"conversations": [{"from", "value"}]}
	FormatJSONL    = "jsonl"    // one request per line: {"messages"} or {"prompt"}, optional max_tokens / output_tokens
)

// Orders in which requests take records.
const (
	OrderRandom     = "random"     // drawn with the run's seed
	OrderSequential = "sequential" // file order, wrapping around
)

// Reasons a record is skipped, as Summary counts them.
const (
	SkipNoUserTurn = "no_user_turn" // nothing to send as the prompt
	SkipTooShort   = "too_short"    // estimated prompt below min_input_tokens
	SkipTooLong    = "too_long"     // estimated prompt above max_input_tokens
	SkipInvalid    = "invalid"      // malformed, with skip_invalid set
	SkipReservoir  = "not_sampled"  // over max_records, left out of the reservoir
)

// BytesPerToken is the prompt-length estimate without a tokenizer (English
// text averages about four bytes per token).
const BytesPerToken = 4

// Config selects and filters a dataset.
type Config struct {
	// Path is the dataset file; empty means no dataset.
	Path string `mapstructure:"path"`
	// Format is sharegpt or jsonl.
	Format string `mapstructure:"format"`
	// MinInputTokens and MaxInputTokens (0: no bound) filter records by
	// their estimated prompt length.
	MinInputTokens int `mapstructure:"min_input_tokens"`
	MaxInputTokens int `mapstructure:"max_input_tokens"`
	// MaxRecords bounds the records held (their offsets); a larger file is
	// sampled down with the run's seed.
	MaxRecords int `mapstructure:"max_records"`
	// Order is random or sequential.
	Order string `mapstructure:"order"`
	// SkipInvalid skips malformed records (counted) instead of failing.
	SkipInvalid bool `mapstructure:"skip_invalid"`
}

// Validate reports every invalid setting, naming the field under prefix.
func (c *Config) Validate(prefix string) error {
	if c.Path == "" {
		return nil
	}
	var errs []error
	if c.Format != FormatShareGPT && c.Format != FormatJSONL {
		errs = append(errs, fmt.Errorf("%s.format: %q is not one of %q, %q", prefix, c.Format, FormatShareGPT, FormatJSONL))
	}
	if c.Order != OrderRandom && c.Order != OrderSequential {
		errs = append(errs, fmt.Errorf("%s.order: %q is not one of %q, %q", prefix, c.Order, OrderRandom, OrderSequential))
	}
	if c.MinInputTokens < 0 || c.MaxInputTokens < 0 {
		errs = append(errs, fmt.Errorf("%s.min_input_tokens, max_input_tokens: must be >= 0, got %d and %d", prefix, c.MinInputTokens, c.MaxInputTokens))
	}
	if c.MaxInputTokens > 0 && c.MinInputTokens > c.MaxInputTokens {
		errs = append(errs, fmt.Errorf("%s.min_input_tokens: %d is above max_input_tokens %d", prefix, c.MinInputTokens, c.MaxInputTokens))
	}
	if c.MaxRecords < 1 {
		errs = append(errs, fmt.Errorf("%s.max_records: must be >= 1, got %d", prefix, c.MaxRecords))
	}
	return errors.Join(errs...)
}

// Message is one chat message of a record.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Record is one request of a dataset.
type Record struct {
	// Row is the record's 1-based line (jsonl) or array element (sharegpt).
	Row int64
	// Messages are the prompt: everything up to the last user turn (jsonl),
	// or the system and first human turn (sharegpt).
	Messages []Message
	// OutputTokens is the output length the record asks for: max_tokens or
	// output_tokens (jsonl), or the recorded answer's estimated length
	// (sharegpt); 0 when it has none.
	OutputTokens int
	// InputTokens is the prompt's estimated length (BytesPerToken).
	InputTokens int
	// Turns are a ShareGPT conversation's later human turns, in order, for
	// multi-turn sessions (empty for jsonl and single-turn conversations).
	Turns []Turn
}

// Turn is one later human turn of a conversation: its text, and the
// estimated length of the answer the conversation recorded for it (0:
// none).
type Turn struct {
	User         string
	OutputTokens int
}

// Summary is what reading the file found.
type Summary struct {
	Records int64            // records in the file
	Kept    int              // records requests draw from
	Skipped map[string]int64 // by reason
}

type entry struct {
	off int64
	n   int32
	row int64
}

// Index is an open dataset: the offsets of its kept records.
type Index struct {
	path    string
	format  string
	f       *os.File
	entries []entry
	summary Summary

	mu  sync.Mutex
	rng *rand.Rand
	seq int
	ord string
}

// Open reads the dataset cfg names, keeping at most cfg.MaxRecords records
// sampled with seed.
func Open(cfg Config, seed uint64) (*Index, error) {
	f, err := os.Open(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	ix := &Index{
		path: cfg.Path, format: cfg.Format, f: f, ord: cfg.Order,
		summary: Summary{Skipped: map[string]int64{}},
		rng:     rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc908)),
	}
	sc := scanner{ix: ix, cfg: cfg, res: rand.New(rand.NewPCG(seed^0xbb67ae8584caa73b, seed))}
	if err := sc.scan(); err != nil {
		f.Close()
		return nil, err
	}
	// The reservoir holds its records in no particular order; sequential
	// requests follow the file.
	slices.SortFunc(ix.entries, func(a, b entry) int { return int(a.off - b.off) })
	ix.summary.Kept = len(ix.entries)
	if len(ix.entries) == 0 {
		f.Close()
		return nil, fmt.Errorf("dataset %s: no usable record among %d (skipped: %v)", cfg.Path, ix.summary.Records, ix.summary.Skipped)
	}
	return ix, nil
}

// Summary reports what reading the file found.
func (ix *Index) Summary() Summary { return ix.summary }

// Name is the file's base name, for telemetry.
func (ix *Index) Name() string { return filepath.Base(ix.path) }

// Next returns the next request's record: drawn with the seed (random) or
// in file order (sequential).
func (ix *Index) Next() (Record, error) {
	ix.mu.Lock()
	var i int
	if ix.ord == OrderSequential {
		i = ix.seq % len(ix.entries)
		ix.seq++
	} else {
		i = ix.rng.IntN(len(ix.entries))
	}
	ix.mu.Unlock()
	return ix.read(ix.entries[i])
}

func (ix *Index) read(e entry) (Record, error) {
	buf := make([]byte, e.n)
	if _, err := ix.f.ReadAt(buf, e.off); err != nil {
		return Record{}, fmt.Errorf("dataset %s: reading record %d: %w", ix.path, e.row, err)
	}
	rec, _, err := decode(ix.format, buf)
	if err != nil {
		return Record{}, ix.errAt(e, err)
	}
	rec.Row = e.row
	return rec, nil
}

// Close closes the file.
func (ix *Index) Close() error { return ix.f.Close() }
