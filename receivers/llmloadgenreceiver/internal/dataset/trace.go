package dataset // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Trace formats.
const (
	// TraceFormatMooncake is the Mooncake trace format: one JSON object per
	// line with timestamp (ms; the replay's time 0 is the first line's, as
	// for the other formats, so an excerpt cut from the middle of a trace
	// starts at once), input_length and
	// output_length (tokens) and hash_ids (one id per block of the prompt;
	// equal ids at the same position are a shared prefix).
	TraceFormatMooncake = "mooncake"
	// TraceFormatAzure is the Azure LLM inference trace format: CSV with a
	// header naming TIMESTAMP, ContextTokens and GeneratedTokens (the
	// multimodal trace of 2025 adds NumImages; columns are found by name)
	// and a date-time per row, spelled as each release does:
	// "2023-11-16 18:15:46.6805900" (2023), "2024-05-10 00:00:00.009930+00:00"
	// (2024, the fraction absent on a whole second), "2024-10-15T12:00:00.269Z"
	// (2025). No prefix information.
	TraceFormatAzure = "azure"
	// TraceFormatBurstGPT is the BurstGPT trace format: CSV with the header
	// Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
	// (seconds from the first day's midnight); later releases insert
	// Session ID and Elapsed time, so columns are found by name. No prefix
	// information.
	TraceFormatBurstGPT = "burstgpt"
)

// The columns a replay needs, by format: the time, the prompt's and the
// output's tokens.
var (
	burstGPTColumns = []string{"Timestamp", "Request tokens", "Response tokens"}
	azureColumns    = []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}
)

// azureHeader is the Azure trace's header line of 2023 and 2024;
// azureTimes the layouts of its timestamps (a layout's ".999999999" also
// takes a time without a fraction).
const azureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens"

var azureTimes = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano}

// utf8BOM is the byte-order mark a spreadsheet tool may write at the start
// of a CSV file.
var utf8BOM = []byte("\uFEFF")

// TraceConfig selects a request trace to replay.
type TraceConfig struct {
	// Path is the trace file.
	Path string `mapstructure:"path"`
	// Format is mooncake, azure or burstgpt.
	Format string `mapstructure:"format"`
	// Speed divides the trace's time: 2 replays it twice as fast.
	Speed float64 `mapstructure:"speed"`
	// Offset skips the trace's first part; Length (0: to the end) bounds
	// the window replayed, both in trace time from the first row.
	Offset time.Duration `mapstructure:"offset"`
	Length time.Duration `mapstructure:"length"`
	// Loop replays the window again when it ends, until the run's duration
	// or request bound.
	Loop bool `mapstructure:"loop"`
	// BlockTokens is the prompt tokens one hash id stands for (512 in the
	// Mooncake traces).
	BlockTokens int `mapstructure:"block_tokens"`
}

// Validate reports every invalid setting, naming the field under prefix.
func (c *TraceConfig) Validate(prefix string) error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, fmt.Errorf("%s.path: a trace file is required", prefix))
	}
	if c.Format != TraceFormatMooncake && c.Format != TraceFormatAzure && c.Format != TraceFormatBurstGPT {
		errs = append(errs, fmt.Errorf("%s.format: %q is not one of %q, %q, %q", prefix, c.Format, TraceFormatMooncake, TraceFormatAzure, TraceFormatBurstGPT))
	}
	if !(c.Speed > 0) || c.Speed > 1e6 {
		errs = append(errs, fmt.Errorf("%s.speed: must be > 0 and at most 1e6, got %v", prefix, c.Speed))
	}
	if c.Offset < 0 || c.Length < 0 {
		errs = append(errs, fmt.Errorf("%s.offset, length: must be >= 0, got %v and %v", prefix, c.Offset, c.Length))
	}
	if c.BlockTokens < 1 {
		errs = append(errs, fmt.Errorf("%s.block_tokens: must be >= 1, got %d", prefix, c.BlockTokens))
	}
	if c.Loop && c.Length == 0 {
		// Looping needs to know where the window ends before reading it all.
		errs = append(errs, fmt.Errorf("%s.loop: needs %s.length (the window replayed each time)", prefix, prefix))
	}
	return errors.Join(errs...)
}

// TraceRow is one request of a trace.
type TraceRow struct {
	Line int64 // 1-based line of the file
	// At is when to send it, from the replay's start (speed applied,
	// offset removed, loops added).
	At           time.Duration
	InputTokens  int
	OutputTokens int
	HashIDs      []int64
}

// TraceReader streams a trace's rows in time order; it holds one line at a
// time, whatever the file's size.
type TraceReader struct {
	cfg   TraceConfig
	f     *os.File
	r     *bufio.Reader
	line  int64
	last  time.Duration // previous row's time from the first row, to check the order
	first time.Time     // the first row's date-time (azure)
	cols  []int         // the format's columns' positions (azure, burstgpt)
	ncols int           // the header's fields (azure, burstgpt)
	// layout is the azureTimes layout the previous row parsed with, tried
	// first.
	layout int
	base   time.Duration // the first row's time (mooncake, burstgpt)
	based  bool
	pass   int   // loops done
	rows   int64 // rows returned in this pass
}

// OpenTrace opens a trace file for replay.
func OpenTrace(cfg TraceConfig) (*TraceReader, error) {
	f, err := os.Open(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return &TraceReader{cfg: cfg, f: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

// Close closes the file.
func (t *TraceReader) Close() error { return t.f.Close() }

// Next returns the next row of the window, or io.EOF after its last (and,
// with loop, never; a window with no row is an error).
func (t *TraceReader) Next() (TraceRow, error) {
	for {
		row, err := t.read()
		if err == io.EOF && t.cfg.Loop {
			if err := t.rewind(); err != nil {
				return TraceRow{}, err
			}
			continue
		}
		if err != nil {
			return TraceRow{}, err
		}
		at := t.last // the row's time from the first row
		if at < t.cfg.Offset {
			continue
		}
		if t.cfg.Length > 0 && at >= t.cfg.Offset+t.cfg.Length {
			if !t.cfg.Loop {
				return TraceRow{}, io.EOF
			}
			if err := t.rewind(); err != nil {
				return TraceRow{}, err
			}
			continue
		}
		t.rows++
		if err := t.replayTime(&row, at); err != nil {
			return TraceRow{}, err
		}
		return row, nil
	}
}

// replayTime sets when row, at at from the first row, is sent: its time
// into the window over all passes so far, divided by the speed.
func (t *TraceReader) replayTime(row *TraceRow, at time.Duration) error {
	window := at - t.cfg.Offset + time.Duration(t.pass)*t.cfg.Length
	scaled := float64(window) / t.cfg.Speed
	if scaled >= float64(math.MaxInt64) || window < 0 {
		return fmt.Errorf("trace %s: line %d: %v into the replay at speed %v is beyond what a run can wait for", t.cfg.Path, row.Line, window, t.cfg.Speed)
	}
	row.At = time.Duration(scaled)
	return nil
}

// rewind starts the next pass of a looped window; a pass that found no
// row in the window is an error (looping would never send anything).
func (t *TraceReader) rewind() error {
	if t.rows == 0 {
		return fmt.Errorf("trace %s: no request in the window offset %v, length %v", t.cfg.Path, t.cfg.Offset, t.cfg.Length)
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("trace %s: %w", t.cfg.Path, err)
	}
	t.r.Reset(t.f)
	t.line, t.last, t.rows, t.first, t.based = 0, 0, 0, time.Time{}, false
	t.pass++
	return nil
}

// read decodes the next non-blank line.
func (t *TraceReader) read() (TraceRow, error) {
	for {
		b, err := readLine(t.r)
		if len(b) > 0 {
			t.line++
		}
		if len(b) > maxRecordBytes {
			return TraceRow{}, fmt.Errorf("trace %s:%d: the line is longer than %d MiB", t.cfg.Path, t.line, maxRecordBytes>>20)
		}
		if t.line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		if rec := bytes.TrimSpace(b); len(rec) > 0 {
			if t.line == 1 && t.cfg.Format != TraceFormatMooncake {
				if err := t.header(rec); err != nil {
					return TraceRow{}, fmt.Errorf("trace %s:1: %w", t.cfg.Path, err)
				}
				continue
			}
			return t.decodeRecord(rec)
		}
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("trace %s:%d: %w", t.cfg.Path, t.line, err)
			}
			return TraceRow{}, err
		}
	}
}

// decodeRecord decodes one non-blank record in the trace's format, naming
// the file and line of an error.
func (t *TraceReader) decodeRecord(rec []byte) (TraceRow, error) {
	var row TraceRow
	var err error
	switch t.cfg.Format {
	case TraceFormatAzure:
		row, err = t.decodeAzure(rec)
	case TraceFormatBurstGPT:
		row, err = t.decodeBurstGPT(rec)
	default:
		row, err = t.decode(rec)
	}
	if err != nil {
		return TraceRow{}, fmt.Errorf("trace %s:%d: %w", t.cfg.Path, t.line, err)
	}
	return row, nil
}

// mooncakeLine is one line of a Mooncake trace as it is written.
type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *float64 `json:"input_length"`
	OutputLength *float64 `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
}

// unmarshalMooncake parses a Mooncake line, naming a syntax error or the
// field of the wrong type.
func unmarshalMooncake(b []byte) (mooncakeLine, error) {
	var r mooncakeLine
	if err := json.Unmarshal(b, &r); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return r, fmt.Errorf("invalid JSON: %w", err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return r, fmt.Errorf("%s: must be a number (hash_ids: a list of whole numbers), got %s", te.Field, te.Value)
		}
		return r, fmt.Errorf("a trace line is a JSON object: %w", err)
	}
	return r, nil
}

// whole is field's value v as a whole number of at least lo (and at most
// 2^50); v is nil when the field is missing.
func whole(field string, v *float64, lo float64) (int64, error) {
	if v == nil {
		return 0, fmt.Errorf("%s: missing", field)
	}
	if *v < lo || *v != float64(int64(*v)) || *v > 1<<50 {
		return 0, fmt.Errorf("%s: must be a whole number >= %v, got %v", field, lo, *v)
	}
	return int64(*v), nil
}

func (t *TraceReader) decode(b []byte) (TraceRow, error) {
	r, err := unmarshalMooncake(b)
	if err != nil {
		return TraceRow{}, err
	}
	ts, err := whole("timestamp", r.Timestamp, 0)
	if err != nil {
		return TraceRow{}, err
	}
	at := time.Duration(ts) * time.Millisecond
	if !t.based {
		t.base, t.based = at, true
	}
	if err := t.inOrder("timestamp", at-t.base); err != nil {
		return TraceRow{}, err
	}
	in, err := whole("input_length", r.InputLength, 1)
	if err != nil {
		return TraceRow{}, err
	}
	out, err := whole("output_length", r.OutputLength, 1)
	if err != nil {
		return TraceRow{}, err
	}
	if err := lengths("input_length, output_length", in, out); err != nil {
		return TraceRow{}, err
	}
	if blocks := (in + int64(t.cfg.BlockTokens) - 1) / int64(t.cfg.BlockTokens); int64(len(r.HashIDs)) > blocks {
		return TraceRow{}, fmt.Errorf("hash_ids: %d ids for %d tokens, more than one per %d-token block", len(r.HashIDs), in, t.cfg.BlockTokens)
	}
	return TraceRow{Line: t.line, InputTokens: int(in), OutputTokens: int(out), HashIDs: r.HashIDs}, nil
}

// decodeAzure reads one row of an Azure trace by its header's columns.
func (t *TraceReader) decodeAzure(b []byte) (TraceRow, error) {
	f := strings.Split(string(b), ",")
	if len(f) != t.ncols {
		return TraceRow{}, fmt.Errorf("a row has the header's %d fields, got %d", t.ncols, len(f))
	}
	ts, err := t.azureTime(strings.TrimSpace(f[t.cols[0]]))
	if err != nil {
		return TraceRow{}, err
	}
	if t.first.IsZero() {
		t.first = ts
	}
	if err := t.inOrder("TIMESTAMP", ts.Sub(t.first)); err != nil {
		return TraceRow{}, err
	}
	var n [2]int64
	for i, col := range t.cols[1:] {
		v, err := strconv.ParseInt(strings.TrimSpace(f[col]), 10, 64)
		if err != nil || v < 0 {
			return TraceRow{}, fmt.Errorf("%s: must be a whole number >= 0, got %q", azureColumns[i+1], f[col])
		}
		n[i] = v
	}
	if err := lengths("ContextTokens, GeneratedTokens", n[0], n[1]); err != nil {
		return TraceRow{}, err
	}
	// A row that asks for no output is sent for one token: a request always
	// generates at least one.
	return TraceRow{Line: t.line, InputTokens: int(max(n[0], 1)), OutputTokens: int(max(n[1], 1))}, nil
}

// azureTime parses a TIMESTAMP in any of the releases' spellings; one
// without a zone is UTC.
func (t *TraceReader) azureTime(s string) (time.Time, error) {
	for i := range azureTimes {
		l := (t.layout + i) % len(azureTimes)
		if ts, err := time.Parse(azureTimes[l], s); err == nil {
			t.layout = l
			return ts, nil
		}
	}
	return time.Time{}, fmt.Errorf("TIMESTAMP: %q is not a date-time like 2023-11-16 18:15:46.6805900, 2024-05-10 00:00:00.009930+00:00 or 2024-10-15T12:00:00.269Z", s)
}

// header checks a CSV trace's header line and finds the format's columns.
func (t *TraceReader) header(rec []byte) error {
	want, format := burstGPTColumns, "a BurstGPT"
	if t.cfg.Format == TraceFormatAzure {
		want, format = azureColumns, "an Azure"
	}
	names := strings.Split(string(rec), ",")
	t.cols, t.ncols = make([]int, len(want)), len(names)
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	for i, col := range want {
		t.cols[i] = slices.Index(names, col)
		if t.cols[i] < 0 {
			return fmt.Errorf("%s trace's header names the columns %s; %q is missing from %q", format, strings.Join(want, ", "), col, clip(rec))
		}
	}
	return nil
}

// decodeBurstGPT reads one row of a BurstGPT trace by its header's
// columns: the time in seconds (from the first row on: a file of the second
// release starts 61 days in), the request and response tokens. A row
// with no request tokens (7.9 % of the published file) is sent with a
// one-token prompt, and one with no response (a failure the trace kept)
// for one token: the arrival is the trace's either way.
func (t *TraceReader) decodeBurstGPT(b []byte) (TraceRow, error) {
	f := strings.Split(string(b), ",")
	if len(f) != t.ncols {
		return TraceRow{}, fmt.Errorf("a row has the header's %d fields, got %d", t.ncols, len(f))
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(f[t.cols[0]]), 64)
	if err != nil || secs < 0 || math.IsInf(secs, 0) || secs > 1e9 {
		return TraceRow{}, fmt.Errorf("Timestamp: must be seconds >= 0, got %q", f[t.cols[0]])
	}
	at := time.Duration(secs * float64(time.Second))
	if !t.based {
		t.base, t.based = at, true
	}
	if err := t.inOrder("Timestamp", at-t.base); err != nil {
		return TraceRow{}, err
	}
	var n [2]int64
	for i, col := range t.cols[1:] {
		v, err := strconv.ParseInt(strings.TrimSpace(f[col]), 10, 64)
		if err != nil || v < 0 {
			return TraceRow{}, fmt.Errorf("%s: must be a whole number >= 0, got %q", burstGPTColumns[i+1], f[col])
		}
		n[i] = v
	}
	if err := lengths("Request tokens, Response tokens", n[0], n[1]); err != nil {
		return TraceRow{}, err
	}
	return TraceRow{Line: t.line, InputTokens: int(max(n[0], 1)), OutputTokens: int(max(n[1], 1))}, nil
}

// inOrder checks that a row's time is not before the previous row's.
// maxTraceSpan bounds a trace's time from its first row: far beyond any
// real trace, and far from time.Duration's limit of about 292 years, which
// a timestamp difference saturates at.
const maxTraceSpan = 100 * 365 * 24 * time.Hour

func (t *TraceReader) inOrder(field string, at time.Duration) error {
	if at > maxTraceSpan || at < -maxTraceSpan {
		return fmt.Errorf("%s: %v from the first line; a trace spans at most 100 years", field, at)
	}
	if at < t.last {
		return fmt.Errorf("%s: %v from the first line is before the previous line's %v; a trace is in time order", field, at, t.last)
	}
	t.last = at
	return nil
}

func lengths(fields string, in, out int64) error {
	if in > 1<<24 || out > 1<<24 {
		return fmt.Errorf("%s: at most 16777216 tokens, got %d and %d", fields, in, out)
	}
	return nil
}

// blockWords fill a block's text; which word comes next depends only on
// the block's id.
var blockWords = []string{" cache", " block", " prefix", " token", " shared", " model", " serve", " request",
	" tensor", " layer", " batch", " decode", " prefill", " queue", " memory", " page"}

// PromptFor renders row's prompt: one text of blockTokens tokens (at
// BytesPerToken bytes each) per hash id, the same bytes for the same id,
// cut so that the user message is row.InputTokens long under the chat
// estimate (MessageOverhead plus BytesPerToken bytes per token). Rows whose
// hash_ids share a prefix send byte-identical prompt prefixes.
func PromptFor(row TraceRow, blockTokens int) string {
	want := max(row.InputTokens-MessageOverhead, 1) * BytesPerToken
	blockBytes := blockTokens * BytesPerToken
	out := make([]byte, 0, want+blockBytes)
	for i := 0; len(out) < want; i++ {
		// A block past the end of a short hash_ids list is the row's own.
		id := -(row.Line<<20 | int64(i)) - 1
		if i < len(row.HashIDs) {
			id = row.HashIDs[i]
		}
		out = appendBlock(out, id, blockBytes)
	}
	return string(out[:want])
}

// appendBlock appends block id's text, exactly n bytes.
func appendBlock(out []byte, id int64, n int) []byte {
	start := len(out)
	out = fmt.Appendf(out, "[block %d]", id)
	x := uint64(id)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	for len(out)-start < n {
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 29
		out = append(out, blockWords[x%uint64(len(blockWords))]...)
	}
	return out[:start+n]
}
