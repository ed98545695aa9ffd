package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanSize is the protobuf-encoded size of span, exactly as
// ptrace.ProtoMarshaler.SpanSize computes it, at a fraction of its cost: it
// reads the span once through the public API and sums field sizes with
// branch-predicted varint lengths.
//
// Two fields of the OTLP messages (KeyValue.key_strindex and
// AnyValue.string_value_strindex, dictionary references meant for profiles)
// are not visible through the public API. Where one may be present (an
// attribute with an empty key, or a value of no known type) the span is
// measured with the pdata sizer instead, so the result stays exact.
func spanSize(span ptrace.Span) int {
	n, _ := measureSpan(span, nil)
	return n
}

// measureSpan is spanSize; with lim set it also reports whether lim.apply
// would leave the span as it is (within), so that a span within its limits,
// the usual case, has its attributes read once rather than once for the
// limits and once for the size.
func measureSpan(span ptrace.Span, lim *spanLimits) (size int, within bool) {
	var maxValue, maxAttrs int
	if lim != nil {
		maxValue, maxAttrs = lim.maxValue, lim.maxAttrs
	}
	within = true
	// capped reports whether a map is over the attribute cap.
	capped := func(m pcommon.Map) bool { return maxAttrs > 0 && m.Len() > maxAttrs }
	n := idField(!span.TraceID().IsEmpty(), 16) + idField(!span.SpanID().IsEmpty(), 8) +
		idField(!span.ParentSpanID().IsEmpty(), 8)
	n += strField(len(span.TraceState().AsRaw()))
	if span.Flags() != 0 {
		n += 5 + 1
	}
	n += strField(len(span.Name()))
	if k := span.Kind(); k != 0 {
		n += 1 + sov(uint64(k))
	}
	if span.StartTimestamp() != 0 {
		n += 9
	}
	if span.EndTimestamp() != 0 {
		n += 9
	}
	attrs := span.Attributes()
	a, ok, over := mapSize(attrs, maxValue, true)
	if !ok {
		return marshaler.SpanSize(span), false
	}
	within = within && !over && !capped(attrs)
	n += a
	n += countField(span.DroppedAttributesCount())
	events := span.Events()
	if lim != nil && lim.maxEvents > 0 && events.Len() > lim.maxEvents {
		within = false
	}
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		e := strField(len(ev.Name()))
		if ev.Timestamp() != 0 {
			e += 9
		}
		a, ok, over := mapSize(ev.Attributes(), maxValue, true)
		if !ok {
			return marshaler.SpanSize(span), false
		}
		within = within && !over && !capped(ev.Attributes())
		e += a + countField(ev.DroppedAttributesCount())
		n += 1 + sov(uint64(e)) + e
	}
	n += countField(span.DroppedEventsCount())
	links := span.Links()
	if lim != nil && lim.maxLinks > 0 && links.Len() > lim.maxLinks {
		within = false
	}
	for i := 0; i < links.Len(); i++ {
		lk := links.At(i)
		l := idField(!lk.TraceID().IsEmpty(), 16) + idField(!lk.SpanID().IsEmpty(), 8)
		l += strField(len(lk.TraceState().AsRaw()))
		a, ok, over := mapSize(lk.Attributes(), maxValue, true)
		if !ok {
			return marshaler.SpanSize(span), false
		}
		within = within && !over && !capped(lk.Attributes())
		l += a + countField(lk.DroppedAttributesCount())
		if lk.Flags() != 0 {
			l += 5
		}
		n += 1 + sov(uint64(l)) + l
	}
	n += countField(span.DroppedLinksCount())
	st := span.Status()
	s := strField(len(st.Message()))
	if c := st.Code(); c != 0 {
		s += 1 + sov(uint64(c))
	}
	n += 1 + sov(uint64(s)) + s
	return n, within
}

// sov is the length of v as a protobuf varint.
func sov(v uint64) int {
	if v < 1<<7 {
		return 1
	}
	if v < 1<<14 {
		return 2
	}
	return varintLen(v)
}

// idField is a trace or span id field: always written, empty when unset.
func idField(set bool, size int) int {
	if set {
		return 2 + size
	}
	return 2
}

// strField is a string or bytes field of length l (omitted when empty).
func strField(l int) int {
	if l == 0 {
		return 0
	}
	return 1 + sov(uint64(l)) + l
}

// countField is a uint32 varint field (omitted when zero).
func countField(v uint32) int {
	if v == 0 {
		return 0
	}
	return 1 + sov(uint64(v))
}

// mapSize is the size of m's entries as repeated KeyValue fields; ok is false
// where a hidden dictionary reference may be present. With maxValue > 0,
// over reports whether the span limits would cut a value of m: a string or
// byte array longer than maxValue, at any depth. In a span's, event's or
// link's own attributes (item set) the truncation markers are not cut, as
// in spanLimits.truncateMap; in a nested map everything is.
func mapSize(m pcommon.Map, maxValue int, item bool) (n int, ok, over bool) {
	for k, v := range m.All() {
		if len(k) == 0 {
			return 0, false, false
		}
		var vs int
		// Most values are non-empty strings: one type check instead of two.
		if l := len(v.Str()); l > 0 {
			vs = 1 + sov(uint64(l)) + l
			if maxValue > 0 && l > maxValue && !(item && isTruncationMarker(k)) {
				over = true
			}
		} else {
			switch v.Type() {
			case pcommon.ValueTypeStr:
				vs = 2
			case pcommon.ValueTypeInt:
				vs = 1 + sov(uint64(v.Int()))
			case pcommon.ValueTypeDouble:
				vs = 9
			case pcommon.ValueTypeBool:
				vs = 2
			default:
				var ok, long bool
				if vs, ok, long = valueSize(v, maxValue); !ok {
					return 0, false, false
				}
				if long && !(item && isTruncationMarker(k)) {
					over = true
				}
			}
		}
		if len(k)+vs < 124 { // every length below fits in one varint byte
			n += 6 + len(k) + vs
			continue
		}
		kv := 1 + sov(uint64(len(k))) + len(k) + 1 + sov(uint64(vs)) + vs
		n += 1 + sov(uint64(kv)) + kv
	}
	return n, true, over
}

// isTruncationMarker reports whether k is one of the attributes that record
// a truncation (truncateMap leaves their values alone).
func isTruncationMarker(k string) bool { return k == attrTruncatedKeys || k == attrTruncatedOrigBytes }

// valueSize is the encoded size of an AnyValue's body; with maxValue > 0,
// long reports whether it holds a string or byte array longer than maxValue
// (what spanLimits.truncateValue cuts).
func valueSize(v pcommon.Value, maxValue int) (n int, ok, long bool) {
	isLong := func(l int) bool { return maxValue > 0 && l > maxValue }
	switch v.Type() {
	case pcommon.ValueTypeStr:
		l := len(v.Str())
		return 1 + sov(uint64(l)) + l, true, isLong(l)
	case pcommon.ValueTypeInt:
		return 1 + sov(uint64(v.Int())), true, false
	case pcommon.ValueTypeDouble:
		return 9, true, false
	case pcommon.ValueTypeBool:
		return 2, true, false
	case pcommon.ValueTypeBytes:
		l := v.Bytes().Len()
		return 1 + sov(uint64(l)) + l, true, isLong(l)
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			e, ok, l := valueSize(s.At(i), maxValue)
			if !ok {
				return 0, false, false
			}
			n += 1 + sov(uint64(e)) + e
			long = long || l
		}
		return 1 + sov(uint64(n)) + n, true, long
	case pcommon.ValueTypeMap:
		n, ok, over := mapSize(v.Map(), maxValue, false)
		if !ok {
			return 0, false, false
		}
		return 1 + sov(uint64(n)) + n, true, over
	}
	// Empty: either no value at all or a dictionary reference that the
	// public API does not show.
	return 0, false, false
}
