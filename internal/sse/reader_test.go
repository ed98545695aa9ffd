package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type ev struct {
	Data, Type, ID string
	Comments       int
}

func readAll(t *testing.T, r io.Reader, max int) ([]ev, error) {
	t.Helper()
	rd := NewReader(r, max)
	var out []ev
	for i := 0; i < 10000; i++ {
		e, err := rd.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{string(e.Data), e.Type, e.ID, e.Comments})
	}
	t.Fatal("too many events")
	return nil, nil
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	tests := []struct {
		name  string
		in    string
		want  []ev
		err   error
		maxSz int
	}{
		{name: "lf", in: "data: a\n\ndata: b\n\n", want: []ev{{Data: "a"}, {Data: "b"}}, err: io.EOF},
		{name: "crlf", in: "data: a\r\n\r\ndata: b\r\n\r\n", want: []ev{{Data: "a"}, {Data: "b"}}, err: io.EOF},
		{name: "cr", in: "data: a\r\rdata: b\r\r", want: []ev{{Data: "a"}, {Data: "b"}}, err: io.EOF},
		{name: "multi-line data", in: "data: a\ndata:b\ndata:  c\n\n", want: []ev{{Data: "a\nb\n c"}}, err: io.EOF},
		{name: "comments and keep-alives", in: ": ping\n\n:\ndata: a\n\n", want: []ev{{Data: "a", Comments: 2}}, err: io.EOF},
		{name: "event and id", in: "event: error\nid: 7\ndata: {}\n\n", want: []ev{{Data: "{}", Type: "error", ID: "7"}}, err: io.EOF},
		{name: "no data field is not dispatched", in: "event: x\n\ndata: a\n\n", want: []ev{{Data: "a"}}, err: io.EOF},
		{name: "field without colon", in: "data\n\n", want: []ev{{Data: ""}}, err: io.EOF},
		{name: "unknown field ignored", in: "retry: 10\nfoo: bar\ndata: a\n\n", want: []ev{{Data: "a"}}, err: io.EOF},
		{name: "unterminated last event", in: "data: a\n\ndata: b\n", want: []ev{{Data: "a"}}, err: io.ErrUnexpectedEOF},
		{name: "partial line at eof", in: "data: a\n\ndata: b", want: []ev{{Data: "a"}}, err: io.ErrUnexpectedEOF},
		{name: "line over 64KiB", in: "data: " + long + "\n\n", want: []ev{{Data: long}}, err: io.EOF},
		{name: "too large", in: "data: " + long + "\n\n", err: ErrEventTooLarge, maxSz: 64 << 10},
		{name: "too large over lines", in: strings.Repeat("data: "+strings.Repeat("y", 1000)+"\n", 100) + "\n", err: ErrEventTooLarge, maxSz: 32 << 10},
		{name: "empty", in: "", err: io.EOF},
	}
	for _, tt := range tests {
		for _, mode := range []string{"whole", "onebyte"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if mode == "onebyte" {
					r = iotest.OneByteReader(r)
				}
				got, err := readAll(t, r, tt.maxSz)
				assert.Equal(t, tt.want, got)
				require.Error(t, err)
				assert.True(t, errors.Is(err, tt.err), "error %v, want %v", err, tt.err)
			})
		}
	}
}

// An event must be delivered as soon as its blank line arrives, without
// waiting for more input to fill a buffer.
func TestReaderDoesNotWaitToFill(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	rd := NewReader(pr, 0)
	go func() {
		_, _ = pw.Write([]byte("data: first\n\n"))
		// The writer then blocks until the reader consumes; nothing more
		// is written before the first event has been returned.
	}()
	e, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, "first", string(e.Data))
	assert.False(t, e.Time.IsZero())
	pw.Close()
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF)
}

func TestReaderBuffered(t *testing.T) {
	rd := NewReader(strings.NewReader("data: a\r\n\r\ndata: b\n\nxyz"), 0)
	_, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, len("data: b\n\nxyz"), rd.Buffered())
	_, err = rd.Next()
	require.NoError(t, err)
	assert.Equal(t, 3, rd.Buffered())

	rd = NewReader(strings.NewReader("data: a\r\n\r\n"), 0)
	_, err = rd.Next()
	require.NoError(t, err)
	assert.Equal(t, 0, rd.Buffered(), "the LF of the final CRLF is not left over")
}

// A reset reader parses a new stream as a new reader would, whatever state
// the last stream left it in.
func TestReaderReset(t *testing.T) {
	second := "data: x\r\n\r\nevent: e\nid: 7\ndata: y\n\n"
	want := collect(t, NewReader(strings.NewReader(second), 0))
	require.Len(t, want, 2)
	for _, first := range []string{
		"data: a\r", // a CR whose LF never came
		"data: partial event",
		"data: " + strings.Repeat("z", 100<<10) + "\n\n", // grows the buffers
		"",
	} {
		rd := NewReader(strings.NewReader(first), 0)
		for range 3 {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
		rd.Reset(strings.NewReader(second))
		assert.Equal(t, want, collect(t, rd), "after %.20q", first)
		assert.LessOrEqual(t, len(rd.buf), maxKeptBuffer)
	}
}

func collect(t *testing.T, rd *Reader) []Event {
	t.Helper()
	var out []Event
	for range 10 {
		e, err := rd.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			return out
		}
		e.Data = append([]byte(nil), e.Data...)
		e.Time = time.Time{}
		out = append(out, e)
	}
	t.Fatal("too many events")
	return nil
}

func TestReaderErrorIsSticky(t *testing.T) {
	rd := NewReader(iotest.ErrReader(errors.New("boom")), 0)
	_, err := rd.Next()
	require.EqualError(t, err, "boom")
	_, err = rd.Next()
	require.EqualError(t, err, "boom")
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\n\r\n", ": c\rdata:x\r\r", "event: e\nid: 1\ndata: {\"a\":1}\n\n", "data: [DONE]\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := NewReader(strings.NewReader(string(in)), 1<<16)
		total := 0
		for i := 0; i <= len(in); i++ {
			e, err := rd.Next()
			if err != nil {
				return
			}
			total += len(e.Data)
			if total > len(in) {
				t.Fatalf("events carry more data (%d) than the input (%d)", total, len(in))
			}
		}
		t.Fatalf("more events than input bytes")
	})
}

func TestIndexEOL(t *testing.T) {
	for _, s := range []string{"", "abc", "a\nb", "a\rb", "a\r\nb", "ab\n\r", "\n", "\r", strings.Repeat("x", 100) + "\r" + strings.Repeat("y", 50) + "\n",
		strings.Repeat("x", 1024) + "\r", strings.Repeat("x", 1023) + "\n", strings.Repeat("x", 3000) + "\n\r", strings.Repeat("x", 2048)} {
		assert.Equal(t, strings.IndexAny(s, "\r\n"), indexEOL([]byte(s)), "%q", s)
	}
}

// BenchmarkReaderNext reads a completion stream: a comment, 64 chunk events
// and [DONE], LF-terminated, through one reader Reset per stream.
func BenchmarkReaderNext(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(": ping\n\n")
	for range 64 {
		sb.WriteString("data: " + chunkSamples[1] + "\n\n")
	}
	sb.WriteString("event: done\nid: 65\ndata: [DONE]\n\n")
	stream := sb.String()
	src := strings.NewReader(stream)
	rd := NewReader(src, 0)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(stream)
		rd.Reset(src)
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}

// stampedSource returns one chunk per Read and stamps each read with its
// own arrival time, as a kernel-timestamping body does.
type stampedSource struct {
	chunks []string
	stamps []time.Time
	last   time.Time
}

func (s *stampedSource) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks, s.last, s.stamps = s.chunks[1:], s.stamps[0], s.stamps[1:]
	return n, nil
}

func (s *stampedSource) ReadTime() (kernel, user time.Time) { return s.last, time.Now() }

// An event's arrival is the stamp of the read that delivered its final
// byte: events that came in one read share it, an event split over two
// reads takes the second's.
func TestReaderArrival(t *testing.T) {
	t0 := time.Unix(1000, 0)
	src := &stampedSource{
		chunks: []string{"data: a\n\ndata: b\n\ndata: c\n", "\n", "data: d\n\n"},
		stamps: []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)},
	}
	r := NewReader(src, 0)
	want := map[string]time.Time{"a": t0, "b": t0, "c": t0.Add(time.Second), "d": t0.Add(2 * time.Second)}
	for range 4 {
		ev, err := r.Next()
		require.NoError(t, err)
		assert.Equal(t, want[string(ev.Data)], ev.Arrived, "event %s", ev.Data)
	}
	_, err := r.Next()
	require.ErrorIs(t, err, io.EOF)

	// A source without stamps leaves Arrived zero.
	r.Reset(strings.NewReader("data: x\n\n"))
	ev, err := r.Next()
	require.NoError(t, err)
	assert.True(t, ev.Arrived.IsZero())
}
