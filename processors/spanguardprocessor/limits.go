package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Attributes the processor writes on spans it changes.
const (
	attrTruncatedKeys      = "span_guard.truncated.keys"
	attrTruncatedOrigBytes = "span_guard.truncated.original_bytes"
	attrOriginalParent     = "span_guard.original_parent_span_id"
	attrCompositeCount     = "span_guard.composite.count"
	attrCompositeSum       = "span_guard.composite.duration_sum_ns"
	attrCompositeMin       = "span_guard.composite.duration_min_ns"
	attrCompositeMax       = "span_guard.composite.duration_max_ns"
	attrCompositeStrategy  = "span_guard.composite.strategy"
)

// limitResult counts what one application of the span limits changed.
type limitResult struct {
	truncated            int // attribute values cut
	attrs, events, links int // items removed by the caps
	changed              bool
}

func (r *limitResult) add(o limitResult) {
	r.truncated += o.truncated
	r.attrs += o.attrs
	r.events += o.events
	r.links += o.links
	r.changed = r.changed || o.changed
}

// spanLimits applies ladder step 2: value truncation with a marker and the
// original length recorded, then caps on attributes, events and links.
type spanLimits struct {
	maxValue            int
	marker              string
	maxAttrs, maxEvents int
	maxLinks            int
}

func newSpanLimits(cfg SpanLimitsConfig) spanLimits {
	return spanLimits{
		maxValue:  cfg.MaxAttributeBytes,
		marker:    cfg.TruncationMarker,
		maxAttrs:  cfg.MaxAttributes,
		maxEvents: cfg.MaxEvents,
		maxLinks:  cfg.MaxLinks,
	}
}

// apply enforces the limits on span and reports what it removed or cut.
func (l spanLimits) apply(span ptrace.Span) limitResult {
	var res limitResult
	attrs := span.Attributes()
	res.truncated += l.truncateMap(attrs, true)
	if n := capMap(attrs, l.maxAttrs); n > 0 {
		span.SetDroppedAttributesCount(span.DroppedAttributesCount() + uint32(n))
		res.attrs += n
	}

	events := span.Events()
	if l.maxEvents > 0 && events.Len() > l.maxEvents {
		n, i := events.Len()-l.maxEvents, 0
		events.RemoveIf(func(ptrace.SpanEvent) bool { i++; return i > l.maxEvents })
		span.SetDroppedEventsCount(span.DroppedEventsCount() + uint32(n))
		res.events += n
	}
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		res.truncated += l.truncateMap(ev.Attributes(), true)
		if n := capMap(ev.Attributes(), l.maxAttrs); n > 0 {
			ev.SetDroppedAttributesCount(ev.DroppedAttributesCount() + uint32(n))
			res.attrs += n
		}
	}

	links := span.Links()
	if l.maxLinks > 0 && links.Len() > l.maxLinks {
		n, i := links.Len()-l.maxLinks, 0
		links.RemoveIf(func(ptrace.SpanLink) bool { i++; return i > l.maxLinks })
		span.SetDroppedLinksCount(span.DroppedLinksCount() + uint32(n))
		res.links += n
	}
	for i := 0; i < links.Len(); i++ {
		lk := links.At(i)
		res.truncated += l.truncateMap(lk.Attributes(), false)
		if n := capMap(lk.Attributes(), l.maxAttrs); n > 0 {
			lk.SetDroppedAttributesCount(lk.DroppedAttributesCount() + uint32(n))
			res.attrs += n
		}
	}
	res.changed = res.truncated+res.attrs+res.events+res.links > 0
	return res
}

// truncateMap cuts every over-long value of m (recursing into slices and
// maps). With record set, the cut keys and their original byte lengths are
// appended to m under attrTruncatedKeys/attrTruncatedOrigBytes.
func (l spanLimits) truncateMap(m pcommon.Map, record bool) int {
	if l.maxValue <= 0 || m.Len() == 0 {
		return 0
	}
	var keys []string
	var orig []int64
	count := 0
	for k, v := range m.All() {
		if k == attrTruncatedKeys || k == attrTruncatedOrigBytes {
			continue
		}
		n, o := l.truncateValue(v)
		if n > 0 {
			count += n
			keys = append(keys, k)
			orig = append(orig, int64(o))
		}
	}
	if record && len(keys) > 0 {
		ks := m.PutEmptySlice(attrTruncatedKeys)
		os := m.PutEmptySlice(attrTruncatedOrigBytes)
		for i := range keys {
			ks.AppendEmpty().SetStr(keys[i])
			os.AppendEmpty().SetInt(orig[i])
		}
	}
	return count
}

// truncateValue cuts v (or the strings and byte arrays inside it) to the
// limit; it returns how many values it cut and their summed original length.
func (l spanLimits) truncateValue(v pcommon.Value) (cut, origBytes int) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := v.Str()
		if len(s) > l.maxValue {
			v.SetStr(truncateString(s, l.maxValue, l.marker))
			return 1, len(s)
		}
	case pcommon.ValueTypeBytes:
		b := v.Bytes()
		if b.Len() > l.maxValue {
			n := b.Len()
			b.FromRaw(append([]byte(nil), b.AsRaw()[:l.maxValue]...))
			return 1, n
		}
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			c, o := l.truncateValue(s.At(i))
			cut += c
			origBytes += o
		}
	case pcommon.ValueTypeMap:
		for _, mv := range v.Map().All() {
			c, o := l.truncateValue(mv)
			cut += c
			origBytes += o
		}
	}
	return cut, origBytes
}

// truncateString cuts s to at most limit bytes including the marker, on a
// UTF-8 boundary.
func truncateString(s string, limit int, marker string) string {
	cut := limit - len(marker)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// capMap keeps the first limit attributes of m (the processor's own markers
// always stay) and returns how many it removed.
func capMap(m pcommon.Map, limit int) int {
	if limit <= 0 || m.Len() <= limit {
		return 0
	}
	kept, removed := 0, 0
	m.RemoveIf(func(k string, _ pcommon.Value) bool {
		if k == attrTruncatedKeys || k == attrTruncatedOrigBytes {
			return false
		}
		if kept < limit {
			kept++
			return false
		}
		removed++
		return true
	})
	return removed
}
