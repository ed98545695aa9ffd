package synthetic

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

func (rd *renderer) chunkEvents(s *spanRec, sp ptrace.Span) {
	n := 0
	switch rd.cfg.Stream.ChunkEvents {
	case config.ChunkEventsFirst:
		n = min(1, s.chunks)
	case config.ChunkEventsAll:
		n = s.chunks
	}
	if n == 0 {
		return
	}
	ev := sp.Events()
	ev.EnsureCapacity(n)
	for i := range n {
		e := ev.AppendEmpty()
		e.SetName(rd.d.chunkEvent)
		e.SetTimestamp(pcommon.Timestamp(s.start + chunkOffset(s, i)))
		ttft := i == 0 && rd.d.attrs[fTTFT] != ""
		if k := b2i(n > 1) + b2i(ttft); k > 1 {
			e.Attributes().EnsureCapacity(k)
		}
		if n > 1 {
			e.Attributes().PutInt(attrChunkIdx, int64(i))
		}
		if ttft {
			e.Attributes().PutDouble(rd.d.attrs[fTTFT], s.ttft*rd.d.ttftScale)
		}
	}
}

// chunkSpanID derives the id of chunk span i from its parent's id without
// drawing from the generator: the parent's id with its last three bytes
// XORed with i+1. It never equals the parent's id (i+1 is not zero), the
// chunks of one parent never share one (up to 2^24-1 chunks), and it is
// never all-zero (the first byte is the parent's, which is odd).
func chunkSpanID(parent [8]byte, i int) [8]byte {
	n := uint32(i + 1)
	parent[5] ^= byte(n >> 16)
	parent[6] ^= byte(n)
	parent[7] ^= byte(n >> 8)
	return parent
}

func (rd *renderer) chunkSpans(r *request, s *spanRec, parent ptrace.Span, ss ptrace.SpanSlice) {
	n := s.chunks
	if c := rd.cfg.Stream.MaxChunkSpans; c > 0 && n > c {
		n = c
	}
	name := s.model.chunkSpan
	prev := s.start
	for i := range n {
		c := ss.AppendEmpty()
		c.SetTraceID(parent.TraceID())
		c.SetParentSpanID(parent.SpanID())
		c.SetSpanID(pcommon.SpanID(chunkSpanID(s.id, i)))
		c.SetName(name)
		c.SetKind(ptrace.SpanKindInternal)
		at := s.start + chunkOffset(s, i)
		c.SetStartTimestamp(pcommon.Timestamp(prev))
		c.SetEndTimestamp(pcommon.Timestamp(at))
		c.Attributes().PutInt(attrChunkIdx, int64(i))
		prev = at
		rd.spans++
	}
	_ = r
}
