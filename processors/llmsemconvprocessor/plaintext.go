package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// jsonKeys are the official attributes whose value must be JSON.
var jsonKeys = [...]string{attrInputMessages, attrOutputMsgs, attrSystemInstr, attrToolDefs}

const (
	attrInvalidPrefix = genai.SemconvAttrInvalidPrefix
	attrWrappedText   = genai.SemconvAttrWrappedText
)

// fixPlainContent makes the official JSON attributes of an item valid JSON.
// Hand-written instrumentation often puts the prompt or completion string
// itself in gen_ai.input.messages / gen_ai.output.messages /
// gen_ai.system_instructions; such a value is rebuilt as the convention's
// JSON holding one text part (input: one user message; output: one assistant
// message whose finish_reason is the span's first (array or scalar), else stop; system: one
// text part), and the attribute is listed in otelcol_llm.semconv.wrapped_text.
// gen_ai.tool.definitions that is not JSON cannot be rebuilt: it moves to
// otelcol_llm.semconv.invalid.gen_ai.tool.definitions. Both count as
// invalid_value. It runs before the content policy, which then polices the
// rebuilt value like any other.
//
// Only values that came from elsewhere are checked: attributes that were on
// the item when it was scanned or written from a foreign value, not the
// messages this processor rebuilt.
func (n *normalizer) fixPlainContent(it *item, d int, s *scratch, st *batchStats, sc *scan) bool {
	attrs := it.attrs
	var wrapped []string
	moved := false
	for g, k := range jsonKeys {
		id := n.t.jsonIDs[g]
		present := id < n.t.nTracked && sc.present[id>>6]&(1<<(id&63)) != 0
		if s.jsonValid&(1<<g) != 0 || !present && s.jsonRaw&(1<<g) == 0 {
			continue
		}
		v, ok := attrs.Get(k)
		if !ok || v.Type() != pcommon.ValueTypeStr || jsonscan.Valid(v.Str()) {
			continue
		}
		st.attr(d, attrInvalid)
		text := v.Str()
		b := s.textJSON[:0]
		switch k {
		case attrInputMessages:
			b = append(b, `[{"role":"user","parts":[{"type":"text","content":`...)
			b = appendString(b, text)
			b = append(b, `}]}]`...)
		case attrOutputMsgs:
			finish := "stop"
			if fr, ok := attrs.Get(attrFinishReasons); ok {
				switch {
				case fr.Type() == pcommon.ValueTypeSlice && fr.Slice().Len() > 0 && fr.Slice().At(0).AsString() != "":
					finish = fr.Slice().At(0).AsString()
				case fr.Type() == pcommon.ValueTypeStr && fr.Str() != "":
					finish = fr.Str()
				}
			}
			b = append(b, `[{"role":"assistant","parts":[{"type":"text","content":`...)
			b = appendString(b, text)
			b = append(b, `}],"finish_reason":`...)
			b = appendString(b, finish)
			b = append(b, `}]`...)
		case attrSystemInstr:
			b = append(b, `[{"type":"text","content":`...)
			b = appendString(b, text)
			b = append(b, `}]`...)
		default:
			attrs.Remove(k)
			attrs.PutStr(attrInvalidPrefix+k, text)
			moved = true
			continue
		}
		s.textJSON = b
		v.SetStr(string(b))
		wrapped = append(wrapped, k)
	}
	if len(wrapped) > 0 && !it.noAnnotate {
		l := attrs.PutEmptySlice(attrWrappedText)
		l.EnsureCapacity(len(wrapped))
		for _, k := range wrapped {
			l.AppendEmpty().SetStr(k)
		}
	}
	return moved || len(wrapped) > 0
}
