package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Derived attributes in the project namespace (no GenAI equivalent).
const (
	attrTTFC             = genai.AttrTimeToFirstChunk
	attrTimePerOutToken  = genai.SemconvAttrTimePerOutputToken
	attrOutTokensPerSec  = genai.SemconvAttrOutputTokensPerSecond
	attrCostTotal        = genai.SemconvAttrCostUSD
	attrCostInput        = genai.SemconvAttrCostInputUSD
	attrCostOutput       = genai.SemconvAttrCostOutputUSD
	attrCostPriceModel   = genai.SemconvAttrCostPriceModel
	attrUsageInput       = genai.AttrUsageInputTokens
	attrUsageOutput      = genai.AttrUsageOutputTokens
	attrUsageCacheRead   = genai.AttrUsageCacheReadInputTokens
	eventMessageSynthKey = "span events"
)

// eventSource is the synthetic message source of per-message span events.
var (
	eventInputSource  = &msgSource{direction: dirInput, layout: layoutChatJSON, order: 1 << 30}
	eventOutputSource = &msgSource{direction: dirOutput, layout: layoutChatJSON, order: 1 << 30}
)

// collectEvents turns the per-message span events of OTel GenAI <= v1.36
// (gen_ai.user.message, gen_ai.choice, ...) and OpenLIT's content events
// into a chat message source. They are removed with the originals.
func (n *normalizer) collectEvents(it *item, s *scratch) {
	evs := it.span.Events()
	if evs.Len() == 0 {
		return
	}
	var in, out []any
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		ei, ok := n.t.events[ev.Name()]
		if !ok {
			continue
		}
		msgs := eventMessages(ev.Name(), ev.Attributes(), ei.direction)
		if ei.direction == dirOutput {
			out = append(out, msgs...)
		} else {
			in = append(in, msgs...)
		}
	}
	if len(in) > 0 {
		s.msgs.exact = append(s.msgs.exact, exactMsg{src: eventInputSource, key: eventMessageSynthKey, value: marshalJSON(in)})
	}
	if len(out) > 0 {
		s.msgs.exact = append(s.msgs.exact, exactMsg{src: eventOutputSource, key: eventMessageSynthKey, value: marshalJSON(out)})
	}
}

// eventMessages returns the chat messages, as generic JSON values, of the
// message event name (direction dir) with attributes a; none when a content
// event holds no content.
func eventMessages(name string, a pcommon.Map, dir direction) []any {
	switch name {
	case "gen_ai.content.prompt", "gen_ai.content.completion":
		return contentEventMessages(a, dir)
	case "gen_ai.choice":
		return []any{choiceEventMessage(a)}
	}
	// gen_ai.<role>.message: the role is in the name.
	msg := map[string]any{"role": strings.TrimSuffix(strings.TrimPrefix(name, "gen_ai."), ".message")}
	if c, ok := a.Get("content"); ok {
		msg["content"] = c.AsString()
	}
	if id, ok := a.Get("id"); ok {
		msg["tool_call_id"] = id.AsString()
	}
	if tc, ok := a.Get("tool_calls"); ok {
		msg["tool_calls"] = rawOf(tc)
	}
	return []any{msg}
}

// contentEventMessages reads OpenLIT's gen_ai.content.prompt and
// gen_ai.content.completion events: chat JSON when the value is one (and
// names no system message), else one message of the direction's role.
func contentEventMessages(a pcommon.Map, dir direction) []any {
	key := "gen_ai.prompt"
	if dir == dirOutput {
		key = "gen_ai.completion"
	}
	v, ok := a.Get(key)
	if !ok {
		return nil
	}
	if msgs, sys, ok := messagesFromJSON(v.AsString(), dir); ok && len(sys) == 0 {
		out := make([]any, 0, len(msgs))
		for _, m := range msgs {
			out = append(out, map[string]any{"role": m.Role, "parts": partsToAny(m.Parts)})
		}
		return out
	}
	return []any{map[string]any{"role": defaultRole(dir), "content": v.AsString()}}
}

// choiceEventMessage reads a gen_ai.choice event: its message (a map, chat
// JSON of one message, or plain text) and finish reason.
func choiceEventMessage(a pcommon.Map) map[string]any {
	msg := map[string]any{"role": "assistant"}
	if m, ok := a.Get("message"); ok {
		var inner map[string]any
		if m.Type() == pcommon.ValueTypeMap {
			inner = m.Map().AsRaw()
		} else if msgs, _, ok := messagesFromJSON(m.AsString(), dirOutput); ok && len(msgs) == 1 {
			inner = map[string]any{"role": msgs[0].Role, "parts": partsToAny(msgs[0].Parts)}
		} else {
			inner = map[string]any{"content": m.AsString()}
		}
		for k, v := range inner {
			msg[k] = v
		}
		if _, ok := msg["role"].(string); !ok {
			msg["role"] = "assistant"
		}
	}
	if f, ok := a.Get("finish_reason"); ok {
		msg["finish_reason"] = f.AsString()
	}
	return msg
}

func partsToAny(parts []msgPart) []any {
	var out []any
	if err := json.Unmarshal(appendParts(nil, parts), &out); err != nil {
		return nil
	}
	return out
}

// buildMessages writes gen_ai.input.messages / output.messages /
// system_instructions / tool.definitions from the collected sources.
func (n *normalizer) buildMessages(it *item, s *scratch, st *batchStats) {
	var finish []string
	if v, ok := it.attrs.Get(attrFinishReasons); ok && v.Type() == pcommon.ValueTypeSlice {
		finish = s.finish[:0]
		for i := 0; i < v.Slice().Len(); i++ {
			finish = append(finish, v.Slice().At(i).AsString())
		}
		s.finish = finish
	} else {
		for _, w := range s.writes {
			if w.target == attrFinishReasons {
				finish = w.v.strs()
			}
		}
	}
	fr := n.t.values["finish_reason"]
	mapFinish := func(f string) string {
		if m, ok := lookupLower(fr, f); ok {
			return m
		}
		return f
	}
	b := s.msgs.build(finish, mapFinish)
	for _, k := range b.invalid {
		if k == eventMessageSynthKey {
			continue
		}
		s.unmapped = append(s.unmapped, k)
		st.attr(n.dialectOfKey(k), attrInvalid)
	}
	add := func(g int, value string, keys []string) {
		target, tid := jsonKeys[g], n.t.jsonIDs[g]
		if value == "" {
			return
		}
		src := keys
		if slices.Contains(keys, eventMessageSynthKey) {
			src = nil
			for _, k := range keys {
				if k != eventMessageSynthKey {
					src = append(src, k)
				}
			}
		}
		// Under a content policy other than keep, the foreign originals must
		// not survive next to the policed official attribute.
		if g := contentGroupOf(target); g != groupNone && n.policy.active_&(1<<g) != 0 {
			n.forceRemove(s, src)
		}
		dl := -1
		if len(src) > 0 {
			dl = n.dialectOf(s, src[0])
		}
		s.writes = append(s.writes, pendingWrite{tid: tid, dialect: dl, target: target, v: val{s: value}, priority: defaultPriority, srcKeys: src, srcKeyIx: s.indexes(src), altID: -1, srcIdx: -1, validJSON: true})
		for range src[min(1, len(src)):] {
			st.attr(dl, attrMapped)
		}
	}
	add(0, b.input, b.inputKeys) // jsonKeys order
	add(2, b.system, nil)
	add(1, b.output, b.outputKeys)
	add(3, b.tools, b.toolKeys)
	if len(b.finishReasons) > 0 && len(finish) == 0 {
		s.writes = append(s.writes, pendingWrite{tid: n.t.finishID, dialect: -1, target: attrFinishReasons, v: val{kind: typeStringArray, arr: b.finishReasons}, priority: 50, altID: -1, srcIdx: -1})
	}
	// Per-message events that went into the messages are removed with the originals.
	if n.cfg.RemoveOriginals && it.isSpan && it.span.Events().Len() > 0 {
		_, hasIn := it.attrs.Get(attrInputMessages)
		_, hasOut := it.attrs.Get(attrOutputMsgs)
		if (hasIn && !n.cfg.Overwrite) || (hasOut && !n.cfg.Overwrite) {
			return
		}
		it.span.Events().RemoveIf(func(ev ptrace.SpanEvent) bool {
			_, ok := n.t.events[ev.Name()]
			return ok
		})
	}
}

// spanFacts are the official attributes finishSpan reads, found in one pass
// over the attributes instead of one search each.
type spanFacts struct {
	op, model, ttfc, outTok     pcommon.Value
	hasOp, hasModel, hasTTFC    bool
	hasOutTok, hasTPOT, hasRate bool
}

func (f *spanFacts) gather(attrs pcommon.Map) {
	// The first of duplicate keys counts, as with Map.Get.
	first := func(dst *pcommon.Value, has *bool, v pcommon.Value) {
		if !*has {
			*dst, *has = v, true
		}
	}
	attrs.Range(func(k string, v pcommon.Value) bool {
		switch k {
		case attrOperationName:
			first(&f.op, &f.hasOp, v)
		case attrRequestModel:
			first(&f.model, &f.hasModel, v)
		case attrTTFC:
			first(&f.ttfc, &f.hasTTFC, v)
		case attrUsageOutput:
			first(&f.outTok, &f.hasOutTok, v)
		case attrTimePerOutToken:
			f.hasTPOT = true
		case attrOutTokensPerSec:
			f.hasRate = true
		}
		return true
	})
}

// finishSpan fixes the span name and kind and derives timing and cost.
func (n *normalizer) finishSpan(it *item, d int, s *scratch) bool {
	changed := false
	attrs := it.attrs
	var f spanFacts
	f.gather(attrs)
	if !f.hasOp {
		return false
	}
	op := f.op.Str()
	// Inference spans, embeddings included, get the name and kind fix and a
	// cost; timing is derived for generating calls only (an embeddings call
	// has no first chunk and no output tokens).
	inference := genai.IsInference(op, genai.WithEmbeddings)
	foreign := d >= 0 && d != n.t.legacyIdx
	if inference && (foreign || d == n.t.legacyIdx && !isOfficialName(it.name, op)) {
		if n.cfg.Span.Rename {
			name := op
			if f.hasModel && f.model.Str() != "" {
				name = op + " " + f.model.Str()
			}
			if name != it.name {
				if !n.cfg.RemoveOriginals {
					attrs.PutStr(attrOriginalSpanName, it.name)
				}
				it.span.SetName(name)
				changed = true
			}
		}
		if n.cfg.Span.SetKind && it.span.Kind() != ptrace.SpanKindClient {
			it.span.SetKind(ptrace.SpanKindClient)
			changed = true
		}
	}
	if !inference {
		return changed
	}
	if n.cfg.Derive.Timing && genai.IsInference(op, genai.WithoutEmbeddings) && n.deriveTiming(it, &f) {
		changed = true
	}
	if n.prices.enabled() && n.deriveCost(attrs) {
		changed = true
	}
	return changed
}

// isOfficialName reports whether a span already has a GenAI-shaped name.
func isOfficialName(name, op string) bool {
	return name == op || strings.HasPrefix(name, op+" ")
}

func (n *normalizer) putIfAbsent(m pcommon.Map, k string, v float64, present bool) bool {
	if present && !n.cfg.Overwrite {
		return false
	}
	m.PutDouble(k, v)
	return true
}

// deriveTiming sets time to first chunk from a first-chunk event when it is
// missing, then time per output token and output tokens per second.
func (n *normalizer) deriveTiming(it *item, f *spanFacts) bool {
	attrs := it.attrs
	changed := false
	start, end := it.span.StartTimestamp(), it.span.EndTimestamp()
	ttfc, hasTTFC := 0.0, false
	if f.hasTTFC {
		ttfc, hasTTFC = floatOf(f.ttfc)
	} else if len(n.firstEv) > 0 && start > 0 {
		evs := it.span.Events()
		first := pcommon.Timestamp(0)
		for i := 0; i < evs.Len(); i++ {
			ev := evs.At(i)
			if n.firstEv[ev.Name()] && ev.Timestamp() >= start && (first == 0 || ev.Timestamp() < first) {
				first = ev.Timestamp()
			}
		}
		if first > 0 {
			ttfc, hasTTFC = float64(first-start)/1e9, true
			attrs.PutDouble(attrTTFC, ttfc)
			changed = true
		}
	}
	if !f.hasOutTok || end <= start || start == 0 {
		return changed
	}
	out, ok := intOf(f.outTok)
	if !ok || out <= 0 {
		return changed
	}
	dur := float64(end-start) / 1e9
	decode := dur
	if hasTTFC && ttfc >= 0 && ttfc < dur {
		decode = dur - ttfc
		if tpot, ok := genai.TimePerOutputToken(dur, ttfc, out); ok && n.putIfAbsent(attrs, attrTimePerOutToken, tpot, f.hasTPOT) {
			changed = true
		}
	}
	if decode > 0 && n.putIfAbsent(attrs, attrOutTokensPerSec, float64(out)/decode, f.hasRate) {
		changed = true
	}
	return changed
}

// --- cost ---------------------------------------------------------------------

type priceTable struct {
	exact  map[string][]PriceConfig
	prefix []PriceConfig // longest prefix first
}

func newPriceTable(prices []PriceConfig) *priceTable {
	pt := &priceTable{exact: map[string][]PriceConfig{}}
	for _, p := range prices {
		if strings.HasSuffix(p.Model, "*") {
			pt.prefix = append(pt.prefix, p)
			continue
		}
		pt.exact[p.Model] = append(pt.exact[p.Model], p)
	}
	sort.SliceStable(pt.prefix, func(i, j int) bool { return len(pt.prefix[i].Model) > len(pt.prefix[j].Model) })
	return pt
}

func (pt *priceTable) enabled() bool { return len(pt.exact) > 0 || len(pt.prefix) > 0 }

func (pt *priceTable) lookup(model, provider string) (PriceConfig, bool) {
	for _, p := range pt.exact[model] {
		if p.Provider == "" || p.Provider == provider {
			return p, true
		}
	}
	for _, p := range pt.prefix {
		if strings.HasPrefix(model, strings.TrimSuffix(p.Model, "*")) && (p.Provider == "" || p.Provider == provider) {
			return p, true
		}
	}
	return PriceConfig{}, false
}

// deriveCost prices the span's own usage (never a roll-up of its children,
// which is kept out of gen_ai.usage.* on wrapper spans).
func (n *normalizer) deriveCost(attrs pcommon.Map) bool {
	if _, ok := attrs.Get(attrCostTotal); ok && !n.cfg.Overwrite {
		return false
	}
	provider := ""
	if v, ok := attrs.Get(attrProviderName); ok {
		provider = v.AsString()
	}
	var price PriceConfig
	found := false
	for _, k := range []string{attrResponseModel, attrRequestModel} {
		if v, ok := attrs.Get(k); ok {
			if p, ok := n.prices.lookup(v.AsString(), provider); ok {
				price, found = p, true
				break
			}
		}
	}
	if !found {
		return false
	}
	get := func(k string) (int64, bool) {
		v, ok := attrs.Get(k)
		if !ok {
			return 0, false
		}
		return toInt(rawOf(v))
	}
	in, okIn := get(attrUsageInput)
	out, okOut := get(attrUsageOutput)
	if !okIn && !okOut {
		return false
	}
	cached, _ := get(attrUsageCacheRead)
	if cached > in {
		cached = in
	}
	cachedPrice := price.CachedInput
	if cachedPrice == 0 {
		cachedPrice = price.Input
	}
	inCost := (float64(in-cached)*price.Input + float64(cached)*cachedPrice) / 1e6
	outCost := float64(out) * price.Output / 1e6
	attrs.PutDouble(attrCostInput, inCost)
	attrs.PutDouble(attrCostOutput, outCost)
	attrs.PutDouble(attrCostTotal, inCost+outCost)
	attrs.PutStr(attrCostPriceModel, price.Model)
	return true
}
