package spanguardprocessor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// randomSpan fills span with random content touching every field the
// encoded size depends on: empty and set ids, long and short strings (to
// cross varint length boundaries), negative kinds and codes, every value
// type nested in slices and maps, empty keys and empty values, events and
// links.
func randomSpan(r *rand.Rand, span ptrace.Span) {
	str := func() string {
		switch r.IntN(4) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("x", r.IntN(20))
		case 2:
			return strings.Repeat("y", 100+r.IntN(60)) // around 128
		default:
			return strings.Repeat("z", r.IntN(20000)) // around 16384
		}
	}
	if r.IntN(5) != 0 {
		var tid pcommon.TraceID
		binary.LittleEndian.PutUint64(tid[:], r.Uint64())
		span.SetTraceID(tid)
	}
	if r.IntN(5) != 0 {
		span.SetSpanID(spanID(r.Uint64()))
	}
	if r.IntN(2) != 0 {
		span.SetParentSpanID(spanID(r.Uint64()))
	}
	span.TraceState().FromRaw(str())
	if r.IntN(2) == 0 {
		span.SetFlags(r.Uint32())
	}
	span.SetName(str())
	span.SetKind(ptrace.SpanKind(r.IntN(9) - 2))
	if r.IntN(4) != 0 {
		span.SetStartTimestamp(pcommon.Timestamp(r.Uint64()))
	}
	if r.IntN(4) != 0 {
		span.SetEndTimestamp(pcommon.Timestamp(r.Uint64()))
	}
	count := func() uint32 {
		switch r.IntN(3) {
		case 0:
			return 0
		case 1:
			return uint32(r.IntN(300))
		default:
			return r.Uint32()
		}
	}
	var fill func(m pcommon.Map, depth int)
	var value func(v pcommon.Value, depth int)
	value = func(v pcommon.Value, depth int) {
		k := r.IntN(9)
		if depth > 2 && k >= 5 {
			k = r.IntN(5)
		}
		switch k {
		case 0:
			v.SetStr(str())
		case 1:
			v.SetInt([]int64{0, 1, -1, math.MaxInt64, math.MinInt64, r.Int64N(1 << 20)}[r.IntN(6)])
		case 2:
			v.SetDouble(r.Float64())
		case 3:
			v.SetBool(r.IntN(2) == 0)
		case 4:
			v.SetEmptyBytes().FromRaw([]byte(str()))
		case 5:
			s := v.SetEmptySlice()
			for i := r.IntN(4); i > 0; i-- {
				value(s.AppendEmpty(), depth+1)
			}
		case 6:
			fill(v.SetEmptyMap(), depth+1)
		case 7:
			// empty value: left as is
		default:
			v.SetStr(strings.Repeat("v", r.IntN(300)))
		}
	}
	fill = func(m pcommon.Map, depth int) {
		for i := r.IntN(10); i > 0; i-- {
			key := str()
			if r.IntN(20) != 0 && key == "" {
				key = "k"
			}
			value(m.PutEmpty(key), depth)
		}
	}
	fill(span.Attributes(), 0)
	span.SetDroppedAttributesCount(count())
	for i := r.IntN(4); i > 0; i-- {
		ev := span.Events().AppendEmpty()
		ev.SetName(str())
		if r.IntN(2) == 0 {
			ev.SetTimestamp(pcommon.Timestamp(r.Uint64()))
		}
		fill(ev.Attributes(), 0)
		ev.SetDroppedAttributesCount(count())
	}
	span.SetDroppedEventsCount(count())
	for i := r.IntN(4); i > 0; i-- {
		lk := span.Links().AppendEmpty()
		if r.IntN(3) != 0 {
			var tid pcommon.TraceID
			tid[3] = byte(r.IntN(255) + 1)
			lk.SetTraceID(tid)
		}
		if r.IntN(3) != 0 {
			lk.SetSpanID(spanID(r.Uint64() | 1))
		}
		lk.TraceState().FromRaw(str())
		fill(lk.Attributes(), 0)
		lk.SetDroppedAttributesCount(count())
		if r.IntN(2) == 0 {
			lk.SetFlags(r.Uint32())
		}
	}
	span.SetDroppedLinksCount(count())
	span.Status().SetMessage(str())
	span.Status().SetCode(ptrace.StatusCode(r.IntN(5) - 1))
}

// TestSpanSizeMatchesMarshaler checks the processor's sizer against the
// pdata protobuf sizer on fixed and random spans.
func TestSpanSizeMatchesMarshaler(t *testing.T) {
	for _, td := range benchRequests(2, 5, 20) {
		forEachSpan([]ptrace.Traces{td}, func(_ pcommon.Resource, s ptrace.Span) {
			require.Equal(t, marshaler.SpanSize(s), spanSize(s))
		})
	}
	empty := ptrace.NewSpan()
	assert.Equal(t, marshaler.SpanSize(empty), spanSize(empty), "empty span")
	for seed := uint64(0); seed < 3000; seed++ {
		span := ptrace.NewSpan()
		randomSpan(rand.New(rand.NewPCG(seed, 11)), span)
		require.Equal(t, marshaler.SpanSize(span), spanSize(span), "seed %d", seed)
	}
}

// TestSpanSizeDictionaryReference: a dictionary reference that the public
// API does not show (KeyValue.key_strindex with no key) is measured with the
// pdata sizer, so the size stays exact.
func TestSpanSizeDictionaryReference(t *testing.T) {
	field := func(num byte, body []byte) []byte {
		return append([]byte{num<<3 | 2, byte(len(body))}, body...)
	}
	anyValue := field(1, []byte("x"))                                            // string_value: "x"
	kv := append(field(2, anyValue), 3<<3, 5)                                    // value, key_strindex: 5
	span := field(1, []byte(strings.Repeat("\x01", 16)))                         // trace_id
	span = append(span, field(2, []byte("\x02\x02\x02\x02\x02\x02\x02\x02"))...) // span_id
	span = append(span, field(5, []byte("s"))...)                                // name
	span = append(span, field(9, kv)...)                                         // attributes
	req := field(1, field(2, field(2, span)))                                    // resource_spans.scope_spans.spans
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(req)
	require.NoError(t, err)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	require.Equal(t, 1, s.Attributes().Len())
	assert.Equal(t, marshaler.SpanSize(s), spanSize(s))
}

// FuzzSpanSize compares the processor's sizer with the pdata sizer on random
// spans.
func FuzzSpanSize(f *testing.F) {
	for _, seed := range []uint64{0, 1, 7, 1 << 33} {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], seed)
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var seed [16]byte
		copy(seed[:], data)
		r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])^uint64(len(data))))
		span := ptrace.NewSpan()
		randomSpan(r, span)
		if want, got := marshaler.SpanSize(span), spanSize(span); got != want {
			t.Fatalf("spanSize %d, pdata %d", got, want)
		}
	})
}

// TestMeasureSpanWithinLimits checks that measureSpan reports a span within
// its limits exactly when applying the limits would change nothing (where
// the sizer is exact), on random spans under several limits, and on the
// truncation markers, which are not cut at the top level but are inside a
// nested map.
func TestMeasureSpanWithinLimits(t *testing.T) {
	check := func(t *testing.T, span ptrace.Span, lim spanLimits) {
		t.Helper()
		size, within := measureSpan(span, &lim)
		_, exact := measureSpan(span, nil)
		require.Equal(t, spanSize(span), size)
		limited := ptrace.NewSpan()
		span.CopyTo(limited)
		res := lim.apply(limited)
		if within {
			require.False(t, res.changed, "within the limits, but apply changed the span")
			require.Equal(t, marshaler.SpanSize(span), marshaler.SpanSize(limited))
		} else if exact {
			require.True(t, res.changed, "not within the limits, but apply changed nothing")
		}
	}
	limits := []spanLimits{
		{maxValue: 16384, marker: "…", maxAttrs: 128, maxEvents: 128, maxLinks: 128},
		{maxValue: 100, marker: "…", maxAttrs: 5, maxEvents: 2, maxLinks: 2},
		{maxValue: 0, maxAttrs: 3},
		{maxValue: 10},
		{},
	}
	for seed := uint64(0); seed < 2000; seed++ {
		span := ptrace.NewSpan()
		randomSpan(rand.New(rand.NewPCG(seed, 5)), span)
		for _, lim := range limits {
			check(t, span, lim)
		}
	}
	long := strings.Repeat("m", 200)
	marker := ptrace.NewSpan()
	marker.Attributes().PutStr(attrTruncatedKeys, long)
	marker.Attributes().PutEmptySlice(attrTruncatedOrigBytes).AppendEmpty().SetStr(long)
	_, within := measureSpan(marker, &limits[1])
	assert.True(t, within, "the top-level truncation markers are not cut")
	check(t, marker, limits[1])
	nested := ptrace.NewSpan()
	nested.Attributes().PutEmptyMap("m").PutStr(attrTruncatedKeys, long)
	_, within = measureSpan(nested, &limits[1])
	assert.False(t, within, "a nested value named like a marker is cut")
	check(t, nested, limits[1])
}
