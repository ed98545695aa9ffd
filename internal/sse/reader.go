package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultMaxEventBytes bounds the size of one event (all its lines) unless
// the caller chooses otherwise.
const DefaultMaxEventBytes = 4 << 20

// ErrEventTooLarge is returned when one event exceeds the reader's maximum.
var ErrEventTooLarge = errors.New("sse: event exceeds the maximum size")

// Event is one dispatched server-sent event.
type Event struct {
	// Data is the value of the event's data lines joined with '\n'. It is
	// valid until the next call to Next.
	Data []byte
	// Type is the value of the last "event" field, empty for the default
	// "message" type.
	Type string
	// ID is the value of the last "id" field.
	ID string
	// Time is when the event was dispatched by the parser.
	Time time.Time
	// Arrived is when the bytes that completed the event reached the host,
	// when the source knows (an ArrivalStamper: the kernel's receive
	// timestamp); zero otherwise. Time − Arrived is the client's own delay.
	Arrived time.Time
	// Comments counts the comment (keep-alive) lines seen since the previous event.
	Comments int
}

// ArrivalStamper is a source that knows when the bytes its last Read
// returned arrived (internal/httpstream's Body: the kernel's receive
// timestamp of the last segment, zero when it has none).
type ArrivalStamper interface {
	ReadTime() (kernel, user time.Time)
}

// Reader parses events from a stream.
type Reader struct {
	src      io.Reader
	stamper  ArrivalStamper // src, when it stamps its reads
	arrived  time.Time      // the kernel time of the last read
	buf      []byte         // raw bytes read from src
	start    int            // first unconsumed byte in buf
	end      int            // end of valid bytes in buf
	scanned  int            // bytes after start already known to hold no line terminator
	skipLF   bool           // the previous line ended in CR: a leading LF belongs to it
	max      int
	data     []byte
	hasData  bool
	typ      string
	id       string
	comments int
	now      func() time.Time
	err      error
}

// NewReader returns a Reader over src. maxEventBytes <= 0 selects
// DefaultMaxEventBytes.
func NewReader(src io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	r := &Reader{src: src, buf: make([]byte, initialBuffer), max: maxEventBytes, now: time.Now}
	r.stamper, _ = src.(ArrivalStamper)
	return r
}

// Reset makes the reader parse src from its start, keeping its buffers, so
// that one reader can serve many streams one after the other.
// Buffers that grew past maxKeptBuffer for a large event are dropped.
func (r *Reader) Reset(src io.Reader) {
	buf, data := r.buf, r.data[:0]
	if len(buf) > maxKeptBuffer {
		buf = make([]byte, initialBuffer)
	}
	if cap(data) > maxKeptBuffer {
		data = nil
	}
	*r = Reader{src: src, buf: buf, data: data, max: r.max, now: r.now}
	r.stamper, _ = src.(ArrivalStamper)
}

// maxKeptBuffer is the largest buffer Reset keeps.
const maxKeptBuffer = 64 << 10

// initialBuffer is a new reader's buffer: a few typical completion chunks
// (200–400 bytes each). It doubles when one line does not fit. A source
// that buffers itself (net/http's bufio, httpstream's connection buffer)
// hands over what it holds in buffer-sized reads without a system call, so
// a small buffer costs copies, not reads, and keeps an open stream small.
const initialBuffer = 1024

// ErrUnterminatedEvent is Next's error when the body ended cleanly inside
// an event (no blank line after its last field): the server stopped
// mid-event, which a truncated transport (io.ErrUnexpectedEOF from the body
// itself) is not. It wraps io.ErrUnexpectedEOF.
var ErrUnterminatedEvent = fmt.Errorf("%w: the stream ended inside an event", io.ErrUnexpectedEOF)

// Next returns the next event. At the end of the stream it returns io.EOF;
// a final event that was not terminated by a blank line is discarded, as the
// specification requires, and reported as ErrUnterminatedEvent.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.data = r.data[:0]
	r.hasData = false
	r.typ, r.id, r.comments = "", "", 0
	pending := false // a field line of the current event has been seen
	for {
		line, ok, err := r.line()
		if err != nil {
			if err == io.EOF && (pending || r.end > r.start) {
				err = ErrUnterminatedEvent
			}
			r.err = err
			return Event{}, err
		}
		if !ok {
			continue
		}
		if len(line) == 0 {
			if !pending {
				continue
			}
			if !r.hasData {
				// An event with no data field is not dispatched.
				pending = false
				r.typ, r.id = "", ""
				continue
			}
			return Event{Data: r.data, Type: r.typ, ID: r.id, Time: r.now(), Arrived: r.arrived, Comments: r.comments}, nil
		}
		if line[0] == ':' {
			r.comments++
			continue
		}
		pending = true
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// field takes one field line of the current event.
func (r *Reader) field(line []byte) error {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
		if len(r.data) > r.max {
			return fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, r.max)
		}
	case "event":
		r.typ = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id = string(value)
		}
	default:
		// "retry" and unknown fields carry nothing a client of a
		// completion stream needs; the grammar says to ignore them.
	}
	return nil
}

// Buffered returns the number of bytes read from the stream and not yet
// parsed, not counting the LF of a CRLF already consumed.
func (r *Reader) Buffered() int {
	n := r.end - r.start
	if r.skipLF && n > 0 && r.buf[r.start] == '\n' {
		n--
	}
	return n
}

// line returns the next complete line without its terminator. ok is false
// when more input had to be read and the caller should call again.
func (r *Reader) line() ([]byte, bool, error) {
	if r.skipLF && r.start < r.end {
		if r.buf[r.start] == '\n' {
			r.start++
		}
		r.skipLF = false
	}
	if r.start >= r.end {
		r.start, r.end, r.scanned = 0, 0, 0
	}
	window := r.buf[r.start:r.end]
	if i := indexEOL(window[r.scanned:]); i >= 0 {
		i += r.scanned
		line := window[:i]
		r.start += i + 1
		r.scanned = 0
		if window[i] == '\r' {
			r.skipLF = true
		}
		return line, true, nil
	}
	r.scanned = len(window)
	if r.end-r.start > r.max {
		return nil, false, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, r.max)
	}
	// Make room: slide the partial line to the front, grow when full.
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	n, err := r.src.Read(r.buf[r.end:])
	r.end += n
	if n > 0 {
		if r.stamper != nil {
			r.arrived, _ = r.stamper.ReadTime()
		}
		return nil, false, nil
	}
	if err == nil {
		return nil, false, nil
	}
	return nil, false, err
}

// indexEOL returns the index of the first CR or LF in b, or -1. Two
// vectorized byte searches beat one scan for either byte; searching block
// by block keeps a stream that ends its lines with CR alone from scanning
// the whole buffer for an LF at every line.
func indexEOL(b []byte) int {
	const block = 1024
	for off := 0; off < len(b); off += block {
		blk := b[off:min(off+block, len(b))]
		i := bytes.IndexByte(blk, '\n')
		if i >= 0 {
			blk = blk[:i]
		}
		if j := bytes.IndexByte(blk, '\r'); j >= 0 {
			return off + j
		}
		if i >= 0 {
			return off + i
		}
	}
	return -1
}
