package dataset // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
)

// maxRecordBytes bounds one record (a JSONL line, a ShareGPT element).
const maxRecordBytes = 64 << 20

// scanner reads a dataset file once and fills the index.
type scanner struct {
	ix     *Index
	cfg    Config
	res    *rand.Rand // the reservoir's draws
	usable int64      // records that passed the filters
}

func (s *scanner) scan() error {
	r := bufio.NewReaderSize(s.ix.f, 64<<10)
	if s.cfg.Format == FormatShareGPT {
		return s.scanShareGPT(r)
	}
	return s.scanJSONL(r)
}

func (s *scanner) scanJSONL(r *bufio.Reader) error {
	var off, line int64
	for {
		b, err := readLine(r)
		line++
		start := off
		off += int64(len(b))
		if len(b) > maxRecordBytes {
			return fmt.Errorf("dataset %s:%d: the line is longer than %d MiB", s.cfg.Path, line, maxRecordBytes>>20)
		}
		if rec := bytes.TrimSpace(b); len(rec) > 0 {
			lead := int64(bytes.Index(b, rec))
			if e := s.add(entry{off: start + lead, n: int32(len(rec)), row: line}, rec); e != nil {
				return e
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataset %s:%d: %w", s.cfg.Path, line, err)
		}
	}
}

// readLine returns the next line with its newline, reading at most a little
// over maxRecordBytes of it.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		b, err := r.ReadSlice('\n')
		out = append(out, b...)
		if !errors.Is(err, bufio.ErrBufferFull) || len(out) > maxRecordBytes {
			if errors.Is(err, bufio.ErrBufferFull) {
				err = nil
			}
			return out, err
		}
	}
}

func (s *scanner) scanShareGPT(r *bufio.Reader) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return fmt.Errorf("dataset %s:1: a ShareGPT file is a JSON array of conversations", s.cfg.Path)
	}
	var row int64
	for dec.More() {
		row++
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return s.ix.errAt(entry{off: s.ix.valueStart(dec.InputOffset()), row: row}, fmt.Errorf("invalid JSON: %w", err))
		}
		end := dec.InputOffset()
		if len(raw) > maxRecordBytes {
			return s.ix.errAt(entry{off: end - int64(len(raw)), row: row}, fmt.Errorf("the conversation is larger than %d MiB", maxRecordBytes>>20))
		}
		if e := s.add(entry{off: end - int64(len(raw)), n: int32(len(raw)), row: row}, raw); e != nil {
			return e
		}
	}
	if _, err := dec.Token(); err != nil {
		return s.ix.errAt(entry{off: dec.InputOffset(), row: row + 1}, fmt.Errorf("invalid JSON: %w", err))
	}
	return nil
}

// add checks one record and offers it to the reservoir.
func (s *scanner) add(e entry, b []byte) error {
	s.ix.summary.Records++
	rec, skip, err := decode(s.cfg.Format, b)
	if err != nil {
		if !s.cfg.SkipInvalid {
			return s.ix.errAt(e, err)
		}
		skip = SkipInvalid
	}
	if skip == "" {
		skip = s.lengthSkip(rec.InputTokens)
	}
	if skip != "" {
		s.ix.summary.Skipped[skip]++
		return nil
	}
	s.offer(e)
	return nil
}

// lengthSkip says why a record of in input tokens is outside the configured
// bounds, or "" when it is within them.
func (s *scanner) lengthSkip(in int) string {
	switch {
	case in < s.cfg.MinInputTokens:
		return SkipTooShort
	case s.cfg.MaxInputTokens > 0 && in > s.cfg.MaxInputTokens:
		return SkipTooLong
	}
	return ""
}

// offer adds a usable record to the reservoir sample of max_records: kept
// while there is room, then in place of a random earlier one.
func (s *scanner) offer(e entry) {
	s.usable++
	if len(s.ix.entries) < s.cfg.MaxRecords {
		s.ix.entries = append(s.ix.entries, e)
		return
	}
	s.ix.summary.Skipped[SkipReservoir]++
	if j := s.res.Int64N(s.usable); j < int64(s.cfg.MaxRecords) {
		s.ix.entries[j] = e
	}
}

// errAt names the file and line of a record's error (and its element
// number in a ShareGPT array).
func (ix *Index) errAt(e entry, err error) error {
	if ix.format == FormatJSONL {
		return fmt.Errorf("dataset %s:%d: %w", ix.path, e.row, err)
	}
	return fmt.Errorf("dataset %s:%d (conversation %d): %w", ix.path, ix.lineOf(e.off), e.row, err)
}

// valueStart skips the separators after byte off: where the next array
// element begins.
func (ix *Index) valueStart(off int64) int64 {
	var b [1]byte
	for {
		if _, err := ix.f.ReadAt(b[:], off); err != nil {
			return off
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n', ',':
			off++
		default:
			return off
		}
	}
}

// lineOf counts the lines before byte off of the file.
func (ix *Index) lineOf(off int64) int64 {
	line := int64(1)
	buf := make([]byte, 1<<16)
	for pos := int64(0); pos < off; {
		n, err := ix.f.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		line += int64(bytes.Count(buf[:n], []byte{'\n'}))
		pos += int64(n)
		if err != nil || n == 0 {
			break
		}
	}
	return line
}
