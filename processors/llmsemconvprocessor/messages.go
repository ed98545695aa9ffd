package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// The GenAI message JSON schema (gen_ai.input.messages / gen_ai.output.messages):
// each message has a role and a list of typed parts.

type msgPart struct {
	Type    string `json:"type"`
	Content string `json:"content,omitempty"`
	// HasContent writes content even when empty (text and reasoning parts).
	HasContent bool            `json:"-"`
	ID         string          `json:"id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Response   json.RawMessage `json:"response,omitempty"`
	Modality   string          `json:"modality,omitempty"`
	URI        string          `json:"uri,omitempty"`
}

type message struct {
	Role         string
	Parts        []msgPart
	Name         string
	FinishReason string
	HasFinish    bool // FinishReason is set (an empty one is written too)
}

type toolDef struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

func textPart(s string) msgPart { return msgPart{Type: "text", Content: s, HasContent: true} }

// rawJSON keeps s as JSON when it is a JSON value, else as a JSON string.
func rawJSON(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t != "" && (t[0] == '{' || t[0] == '[') && validJSON(t) {
		return appendCompact(make([]byte, 0, len(t)), t)
	}
	return appendString(make([]byte, 0, len(s)+2), s)
}

func rawAny(x any) json.RawMessage {
	if s, ok := x.(string); ok {
		return rawJSON(s)
	}
	if x == nil {
		return nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil
	}
	return b
}

func marshalJSON(x any) string {
	// Generic messages (maps, lists, strings, booleans, null) are written
	// directly; anything else (numbers, other types) by encoding/json.
	var stack [512]byte
	if b, ok := appendGeneric(stack[:0], x); ok {
		return string(b)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// appendGeneric appends x as encoding/json (HTML escaping off) writes it,
// for maps (keys sorted), lists, strings, booleans and nil; ok is false for
// anything else, and b is then not to be used.
func appendGeneric(b []byte, x any) ([]byte, bool) {
	switch v := x.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, v), true
	case bool:
		if v {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendGeneric(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		var keyBuf [8]string
		keys := keyBuf[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendGeneric(b, v[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// --- indexed attributes (llm.input_messages.N.*, gen_ai.prompt.N.*) -------

type indexedMsg struct {
	role, content, name, toolCallID, finish string
	contents                                sparse[indexedContent]
	toolCalls                               sparse[indexedToolCall]
}

// sparse is a small list of values by index, cheaper than a map for the
// handful of messages, parts and tool calls of one span.
type sparse[T any] struct{ s []slot[T] }

type slot[T any] struct {
	n int
	v T
}

// at returns the value at index n, adding it when missing. The pointer is
// valid until the next call.
func (x *sparse[T]) at(n int) *T {
	for i := range x.s {
		if x.s[i].n == n {
			return &x.s[i].v
		}
	}
	x.s = append(x.s, slot[T]{n: n})
	return &x.s[len(x.s)-1].v
}

// sorted returns the values in index order.
func (x *sparse[T]) sorted() []slot[T] {
	if len(x.s) < 2 {
		return x.s
	}
	slices.SortFunc(x.s, func(a, b slot[T]) int { return a.n - b.n })
	return x.s
}

type indexedContent struct{ typ, text, url string }

type indexedToolCall struct{ id, name, args string }

type indexedTool struct{ name, description, parameters, schema string }

// indexedAcc accumulates the attributes of one indexed message source.
type indexedAcc struct {
	src   *msgSource
	msgs  sparse[indexedMsg]
	tools sparse[indexedTool]
	keys  []string
}

// splitIndex splits "3.message.role" into 3 and "message.role".
func splitIndex(rest string) (int, string, bool) {
	i := strings.IndexByte(rest, '.')
	if i <= 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil || n < 0 || n > 1<<20 {
		return 0, "", false
	}
	return n, rest[i+1:], true
}

// add records one indexed attribute; false when the key has no known meaning.
func (a *indexedAcc) add(key, value string) bool {
	n, rest, ok := splitIndex(key[len(a.src.prefix):])
	if !ok {
		return false
	}
	switch a.src.layout {
	case layoutOpenInferenceTools, layoutIndexedTools:
		t := a.tools.at(n)
		switch rest {
		case "tool.json_schema":
			t.schema = value
		case "name":
			t.name = value
		case "description":
			t.description = value
		case "parameters":
			t.parameters = value
		default:
			return false
		}
		return true
	}
	m := a.msgs.at(n)
	if a.src.layout == layoutOpenInference {
		if !strings.HasPrefix(rest, "message.") {
			return false
		}
		rest = rest[len("message."):]
	}
	switch rest {
	case "role":
		m.role = value
	case "content":
		m.content = value
	case "name":
		m.name = value
	case "tool_call_id":
		m.toolCallID = value
	case "finish_reason":
		m.finish = value
	default:
		return m.addNested(a.src.layout, rest, value)
	}
	return true
}

func (m *indexedMsg) addNested(lay layout, rest, value string) bool {
	switch {
	case strings.HasPrefix(rest, "contents."):
		n, field, ok := splitIndex(rest[len("contents."):])
		if !ok {
			return false
		}
		c := m.contents.at(n)
		switch strings.TrimPrefix(field, "message_content.") {
		case "type":
			c.typ = value
		case "text":
			c.text = value
		case "image.image.url", "image.url":
			c.url = value
		default:
			return false
		}
		return true
	case strings.HasPrefix(rest, "tool_calls."):
		n, field, ok := splitIndex(rest[len("tool_calls."):])
		if !ok {
			return false
		}
		tc := m.toolCalls.at(n)
		if lay == layoutOpenInference {
			field = strings.TrimPrefix(field, "tool_call.")
		}
		switch field {
		case "id":
			tc.id = value
		case "function.name", "name":
			tc.name = value
		case "function.arguments", "arguments":
			tc.args = value
		default:
			return false
		}
		return true
	case rest == "function_call.name":
		m.toolCall(0).name = value
		return true
	case rest == "function_call.arguments":
		m.toolCall(0).args = value
		return true
	}
	return false
}

func (m *indexedMsg) toolCall(n int) *indexedToolCall { return m.toolCalls.at(n) }

// appendMessages appends the accumulated messages to dst. Their parts are
// appended to *arena and each message gets its own capacity-bounded window
// of it, so that the arena is reused from item to item.
func (a *indexedAcc) appendMessages(dst []message, arena *[]msgPart, dir direction) []message {
	for i := range a.msgs.sorted() {
		im := &a.msgs.s[i].v
		msg := message{Role: im.role, Name: im.name}
		if msg.Role == "" {
			msg.Role = defaultRole(dir)
		}
		parts := *arena
		start := len(parts)
		if msg.Role == "tool" {
			parts = append(parts, msgPart{Type: "tool_call_response", ID: im.toolCallID, Response: rawJSON(im.content)})
		} else if im.content != "" {
			if ps, ok := partsFromJSON(im.content); ok {
				parts = append(parts, ps...)
			} else {
				parts = append(parts, textPart(im.content))
			}
		}
		for ci := range im.contents.sorted() {
			c := &im.contents.s[ci].v
			switch {
			case c.url != "":
				parts = append(parts, uriPart(c.url))
			case c.text != "" || c.typ == "text":
				parts = append(parts, textPart(c.text))
			}
		}
		for ti := range im.toolCalls.sorted() {
			tc := &im.toolCalls.s[ti].v
			parts = append(parts, msgPart{Type: "tool_call", ID: tc.id, Name: tc.name, Arguments: rawJSON(tc.args)})
		}
		msg.Parts = parts[start:len(parts):len(parts)]
		*arena = parts
		if dir == dirOutput && im.finish != "" {
			msg.FinishReason, msg.HasFinish = im.finish, true
		}
		dst = append(dst, msg)
	}
	return dst
}

func (a *indexedAcc) appendToolDefs(out []toolDef) []toolDef {
	for i := range a.tools.sorted() {
		t := &a.tools.s[i].v
		if t.schema != "" {
			if d, ok := toolDefFromJSON(t.schema); ok {
				out = append(out, d)
				continue
			}
		}
		d := toolDef{Type: "function", Name: t.name, Description: t.description}
		if t.parameters != "" {
			d.Parameters = rawJSON(t.parameters)
		}
		out = append(out, d)
	}
	return out
}

func toolDefFromJSON(s string) (toolDef, bool) {
	if !validJSON(s) {
		return toolDef{}, false
	}
	return toolDefFromValidJSON(s)
}

// toolDefFromValidJSON is toolDefFromJSON for s known to be valid JSON.
func toolDefFromValidJSON(s string) (toolDef, bool) {
	var d toolDef
	var fn, params, schema string
	ok := scanValidMembers(s, func(k string, kind byte, text string) {
		isString, isObject := kind == '"', kind == '{' || kind == '['
		switch k {
		case "name":
			d.Name = ""
			if isString {
				d.Name = text
			}
		case "description":
			d.Description = ""
			if isString {
				d.Description = text
			}
		case "parameters":
			params = ""
			if isObject {
				params = text
			}
		case "inputSchema":
			schema = ""
			if isObject {
				schema = text
			}
		case "function":
			fn = ""
			if isObject {
				fn = text
			}
		}
	})
	if !ok {
		return toolDef{}, false
	}
	if fn != "" {
		return toolDefFromValidJSON(fn)
	}
	if d.Name == "" {
		return toolDef{}, false
	}
	d.Type = "function"
	if params == "" {
		params = schema
	}
	if params != "" {
		// Compacted once here (the document is valid), so that writing it
		// is a copy.
		d.Parameters = appendCompact(make([]byte, 0, len(params)), params)
	}
	return d, true
}

func uriPart(u string) msgPart {
	return msgPart{Type: "uri", Modality: "image", URI: u}
}

func defaultRole(dir direction) string {
	if dir == dirOutput {
		return "assistant"
	}
	return "user"
}

// --- JSON chat messages (OpenAI, Vercel AI SDK, Langfuse, GenAI shapes) -----

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

// partsFromJSON reads a JSON array of content parts (OpenAI, Vercel AI SDK
// or GenAI shapes).
func partsFromJSON(s string) ([]msgPart, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	var arr []any
	if err := json.Unmarshal([]byte(t), &arr); err != nil {
		return nil, false
	}
	return partsFromAny(arr)
}

func partsFromAny(arr []any) ([]msgPart, bool) {
	parts := make([]msgPart, 0, len(arr))
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		typ := str(m, "type")
		switch typ {
		case "text", "input_text", "output_text":
			parts = append(parts, textPart(str(m, "text", "content")))
		case "reasoning":
			c := str(m, "text", "content")
			parts = append(parts, msgPart{Type: "reasoning", Content: c, HasContent: true})
		case "image_url":
			u := str(m, "url")
			if iu, ok := m["image_url"].(map[string]any); ok {
				u = str(iu, "url")
			}
			parts = append(parts, uriPart(u))
		case "image":
			parts = append(parts, uriPart(str(m, "image", "url")))
		case "tool-call", "tool_call", "tool_use":
			args := m["args"]
			if args == nil {
				args = m["input"]
			}
			if args == nil {
				args = m["arguments"]
			}
			parts = append(parts, msgPart{Type: "tool_call", ID: str(m, "toolCallId", "id"), Name: str(m, "toolName", "name"), Arguments: rawAny(args)})
		case "tool-result", "tool_call_response", "tool_result":
			res := m["result"]
			if res == nil {
				res = m["output"]
			}
			if res == nil {
				res = m["response"]
			}
			if res == nil {
				res = m["content"]
			}
			parts = append(parts, msgPart{Type: "tool_call_response", ID: str(m, "toolCallId", "id", "tool_use_id"), Response: rawAny(res)})
		default:
			if typ == "" {
				return nil, false
			}
			raw, _ := json.Marshal(m)
			c := string(raw)
			parts = append(parts, msgPart{Type: typ, Content: c, HasContent: true})
		}
	}
	return parts, true
}

// messagesFromJSON reads a chat-shaped JSON value: an array of messages, or
// an object with a "messages" array (and optionally "system" and "prompt").
// System messages are returned separately.
func messagesFromJSON(s string, dir direction) (msgs []message, system []msgPart, ok bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return nil, nil, false
	}
	var x any
	if err := json.Unmarshal([]byte(t), &x); err != nil {
		return nil, nil, false
	}
	var arr []any
	switch v := x.(type) {
	case []any:
		arr = v
	case map[string]any:
		if sys, ok := v["system"].(string); ok && sys != "" {
			system = append(system, textPart(sys))
		}
		if ms, ok := v["messages"].([]any); ok {
			arr = ms
		} else if p, ok := v["prompt"].(string); ok {
			arr = []any{map[string]any{"role": defaultRole(dir), "content": p}}
		} else if _, isMsg := v["role"]; isMsg {
			arr = []any{v}
		} else {
			return nil, nil, false
		}
		if p, ok := v["prompt"].(string); ok && v["messages"] != nil && p != "" {
			arr = append(arr, map[string]any{"role": "user", "content": p})
		}
	}
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, nil, false
		}
		role := str(m, "role")
		if role == "" {
			return nil, nil, false
		}
		msg := message{Role: role, Name: str(m, "name")}
		if ps, ok := m["parts"].([]any); ok {
			parts, ok := partsFromAny(ps)
			if !ok {
				return nil, nil, false
			}
			msg.Parts = parts
		}
		switch c := m["content"].(type) {
		case string:
			if role == "tool" {
				msg.Parts = append(msg.Parts, msgPart{Type: "tool_call_response", ID: str(m, "tool_call_id", "toolCallId"), Response: rawJSON(c)})
			} else {
				msg.Parts = append(msg.Parts, textPart(c))
			}
		case []any:
			parts, ok := partsFromAny(c)
			if !ok {
				return nil, nil, false
			}
			msg.Parts = append(msg.Parts, parts...)
		}
		if tcs, ok := m["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				tm, ok := tc.(map[string]any)
				if !ok {
					continue
				}
				p := msgPart{Type: "tool_call", ID: str(tm, "id"), Name: str(tm, "name")}
				if f, ok := tm["function"].(map[string]any); ok {
					p.Name = str(f, "name")
					p.Arguments = rawAny(f["arguments"])
				} else {
					p.Arguments = rawAny(tm["arguments"])
				}
				msg.Parts = append(msg.Parts, p)
			}
		}
		if msg.Parts == nil {
			msg.Parts = []msgPart{}
		}
		if dir == dirOutput {
			if f := str(m, "finish_reason"); f != "" {
				msg.FinishReason, msg.HasFinish = f, true
			}
		}
		if role == "system" && dir == dirInput {
			system = append(system, msg.Parts...)
			continue
		}
		msgs = append(msgs, msg)
	}
	return msgs, system, true
}

// toolCallsFromJSON reads the Vercel AI SDK ai.response.toolCalls array.
func toolCallsFromJSON(s string) ([]msgPart, bool) {
	var arr []map[string]any
	if err := json.Unmarshal([]byte(s), &arr); err != nil {
		return nil, false
	}
	parts := make([]msgPart, 0, len(arr))
	for _, m := range arr {
		args := m["args"]
		if args == nil {
			args = m["input"]
		}
		parts = append(parts, msgPart{Type: "tool_call", ID: str(m, "toolCallId", "id"), Name: str(m, "toolName", "name"), Arguments: rawAny(args)})
	}
	return parts, true
}

// --- the builder -------------------------------------------------------------

// msgBuilder collects the message sources found on one item. Everything it
// holds is reused from item to item.
type msgBuilder struct {
	indexed []*indexedAcc
	free    []*indexedAcc // accumulators kept for the next item
	exact   []exactMsg
	buf     []byte // JSON output buffer, reused
	// key lists of the last build, reused
	inKeys, outKeys, toolKeys []string
	// working lists of the last build, reused
	in, out []message
	sys     []msgPart
	tools   []toolDef
	arena   []msgPart // parts of indexed messages
	finish  []string
	chat    chatJSONReader
}

type exactMsg struct {
	src   *msgSource
	key   string
	value string
}

func (b *msgBuilder) reset() {
	for _, a := range b.indexed {
		clear(a.msgs.s)
		clear(a.tools.s)
		clear(a.keys)
		a.msgs.s, a.tools.s, a.keys, a.src = a.msgs.s[:0], a.tools.s[:0], a.keys[:0], nil
		b.free = append(b.free, a)
	}
	b.indexed = b.indexed[:0]
	clear(b.exact)
	b.exact = b.exact[:0]
}

func (b *msgBuilder) empty() bool { return len(b.indexed) == 0 && len(b.exact) == 0 }

func (b *msgBuilder) addIndexed(src *msgSource, key, value string) bool {
	var acc *indexedAcc
	for _, a := range b.indexed {
		if a.src == src {
			acc = a
			break
		}
	}
	if acc == nil {
		if n := len(b.free); n > 0 {
			acc, b.free = b.free[n-1], b.free[:n-1]
			acc.src = src
		} else {
			acc = &indexedAcc{src: src}
		}
		b.indexed = append(b.indexed, acc)
	}
	if !acc.add(key, value) {
		return false
	}
	acc.keys = append(acc.keys, key)
	return true
}

// builtMessages is the result of building: JSON values per target, and the
// source keys that went into each.
type builtMessages struct {
	input, output, system, tools    string
	finishReasons                   []string
	inputKeys, outputKeys, toolKeys []string
	invalid                         []string
}

// clearMessages drops the references of the last build and empties the list.
func clearMessages(m []message) []message {
	clear(m)
	return m[:0]
}

// build assembles the messages. finish gives the span-level finish reasons
// (already normalized) and mapFinish normalizes per-message ones. The JSON
// values of the result share one string.
func (b *msgBuilder) build(finish []string, mapFinish func(string) string) builtMessages {
	res := builtMessages{inputKeys: b.inKeys[:0], outputKeys: b.outKeys[:0], toolKeys: b.toolKeys[:0], finishReasons: b.finish[:0]}
	in, out := clearMessages(b.in), clearMessages(b.out)
	clear(b.sys)
	clear(b.tools)
	clear(b.arena)
	sys, tools, arena := b.sys[:0], b.tools[:0], b.arena[:0]
	clear(b.chat.arena)
	b.chat.arena = b.chat.arena[:0]
	inOrder, outOrder, toolOrder := -1, -1, -1
	take := func(cur *int, order int) bool {
		if *cur == -1 || order == *cur {
			*cur = order
			return true
		}
		return false
	}
	// Sources are used by table order: the first source of a direction wins;
	// later ones carry the same content in another form and are consumed.
	if len(b.indexed) > 1 {
		slices.SortStableFunc(b.indexed, func(x, y *indexedAcc) int { return x.src.order - y.src.order })
	}
	if len(b.exact) > 1 {
		slices.SortStableFunc(b.exact, func(x, y exactMsg) int { return x.src.order - y.src.order })
	}
	for _, a := range b.indexed {
		switch a.src.direction {
		case dirTools:
			if take(&toolOrder, a.src.order) {
				tools = a.appendToolDefs(tools)
			}
			res.toolKeys = append(res.toolKeys, a.keys...)
		case dirInput:
			if take(&inOrder, a.src.order) {
				from := len(in)
				in = a.appendMessages(in, &arena, dirInput)
				// System messages become system instructions.
				kept := in[:from]
				for _, m := range in[from:] {
					if m.Role == "system" {
						sys = append(sys, m.Parts...)
						continue
					}
					kept = append(kept, m)
				}
				clear(in[len(kept):])
				in = kept
			}
			res.inputKeys = append(res.inputKeys, a.keys...)
		case dirOutput:
			if take(&outOrder, a.src.order) {
				out = a.appendMessages(out, &arena, dirOutput)
			}
			res.outputKeys = append(res.outputKeys, a.keys...)
		}
	}
	outMsg := -1 // the single output message of text/tool-call sources
	for _, e := range b.exact {
		dir := e.src.direction
		ok := true
		switch e.src.layout {
		case layoutText:
			if outOrder == -1 || outMsg >= 0 {
				if outMsg < 0 {
					out = append(out, message{Role: "assistant", Parts: []msgPart{}})
					outMsg = len(out) - 1
					outOrder = e.src.order
				}
				out[outMsg].Parts = append([]msgPart{textPart(e.value)}, out[outMsg].Parts...)
			}
		case layoutVercelToolCalls:
			parts, pok := toolCallsFromJSON(e.value)
			ok = pok
			if ok && (outOrder == -1 || outMsg >= 0) {
				if outMsg < 0 {
					out = append(out, message{Role: "assistant", Parts: []msgPart{}})
					outMsg = len(out) - 1
					outOrder = e.src.order
				}
				out[outMsg].Parts = append(out[outMsg].Parts, parts...)
			}
		default:
			var msgs []message
			var s []msgPart
			var handled bool
			if msgs, s, handled = b.chat.read(e.value, dir); !handled {
				msgs, s, ok = messagesFromJSON(e.value, dir)
			}
			if !ok && e.src.layout == layoutTextOrChatJSON && e.value != "" {
				msgs, ok = []message{{Role: defaultRole(dir), Parts: []msgPart{textPart(e.value)}}}, true
			}
			cur := &inOrder
			if dir == dirOutput {
				cur = &outOrder
			}
			if ok && take(cur, e.src.order) {
				if dir == dirOutput {
					out = append(out, msgs...)
				} else {
					in = append(in, msgs...)
					sys = append(sys, s...)
				}
			}
		}
		if !ok {
			res.invalid = append(res.invalid, e.key)
			continue
		}
		if dir == dirOutput {
			res.outputKeys = append(res.outputKeys, e.key)
		} else {
			res.inputKeys = append(res.inputKeys, e.key)
		}
	}
	// All JSON values go into one buffer and become one string.
	buf := b.buf[:0]
	var inEnd, sysEnd, toolsEnd int
	if len(in) > 0 {
		buf = appendMessages(buf, in)
	}
	inEnd = len(buf)
	if len(sys) > 0 {
		buf = appendParts(buf, sys)
	}
	sysEnd = len(buf)
	if len(tools) > 0 {
		buf = appendToolDefs(buf, tools)
	}
	toolsEnd = len(buf)
	if len(out) > 0 {
		// finish_reason is required on output messages: the message's own,
		// else the span's for that choice, else tool_call when the message
		// calls tools and stop otherwise.
		for i := range out {
			m := &out[i]
			switch {
			case m.HasFinish:
				m.FinishReason = mapFinish(m.FinishReason)
				res.finishReasons = append(res.finishReasons, m.FinishReason)
			case i < len(finish):
				m.FinishReason = finish[i]
			default:
				m.FinishReason = "stop"
				for _, p := range m.Parts {
					if p.Type == "tool_call" {
						m.FinishReason = "tool_call"
					}
				}
			}
			m.HasFinish = true
		}
		buf = appendMessages(buf, out)
	}
	if len(buf) > 0 {
		all := string(buf)
		res.input, res.system, res.tools, res.output = all[:inEnd], all[inEnd:sysEnd], all[sysEnd:toolsEnd], all[toolsEnd:]
	}
	b.buf = buf
	b.in, b.out, b.sys, b.tools, b.arena = in, out, sys, tools, arena
	b.inKeys, b.outKeys, b.toolKeys, b.finish = res.inputKeys, res.outputKeys, res.toolKeys, res.finishReasons
	if len(res.finishReasons) == 0 {
		res.finishReasons = nil
	}
	return res
}
