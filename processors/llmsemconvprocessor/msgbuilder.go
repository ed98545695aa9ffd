package llmsemconvprocessor

import "slices"

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

// msgBuild is the state of one build: the lists being assembled and the
// source (by table order) each direction took.
type msgBuild struct {
	res                          builtMessages
	in, out                      []message
	sys                          []msgPart
	tools                        []toolDef
	arena                        []msgPart // parts of indexed messages
	inOrder, outOrder, toolOrder int       // -1 until a source is taken
	outMsg                       int       // the single output message of text and tool-call sources, -1 none
}

// build assembles the messages. finish gives the span-level finish reasons
// (already normalized) and mapFinish normalizes per-message ones. The JSON
// values of the result share one string.
func (b *msgBuilder) build(finish []string, mapFinish func(string) string) builtMessages {
	m := b.startBuild()
	// Sources are used by table order: the first source of a direction wins;
	// later ones carry the same content in another form and are consumed.
	if len(b.indexed) > 1 {
		slices.SortStableFunc(b.indexed, func(x, y *indexedAcc) int { return x.src.order - y.src.order })
	}
	if len(b.exact) > 1 {
		slices.SortStableFunc(b.exact, func(x, y exactMsg) int { return x.src.order - y.src.order })
	}
	for _, a := range b.indexed {
		m.addIndexed(a)
	}
	for i := range b.exact {
		b.addExact(&m, &b.exact[i])
	}
	m.setFinishReasons(finish, mapFinish)
	b.encode(&m)
	b.in, b.out, b.sys, b.tools, b.arena = m.in, m.out, m.sys, m.tools, m.arena
	b.inKeys, b.outKeys, b.toolKeys, b.finish = m.res.inputKeys, m.res.outputKeys, m.res.toolKeys, m.res.finishReasons
	if len(m.res.finishReasons) == 0 {
		m.res.finishReasons = nil
	}
	return m.res
}

// startBuild empties the lists of the last build and starts a new one on
// their storage.
func (b *msgBuilder) startBuild() msgBuild {
	m := msgBuild{
		res: builtMessages{inputKeys: b.inKeys[:0], outputKeys: b.outKeys[:0], toolKeys: b.toolKeys[:0], finishReasons: b.finish[:0]},
		in:  clearMessages(b.in), out: clearMessages(b.out),
		inOrder: -1, outOrder: -1, toolOrder: -1, outMsg: -1,
	}
	clear(b.sys)
	clear(b.tools)
	clear(b.arena)
	m.sys, m.tools, m.arena = b.sys[:0], b.tools[:0], b.arena[:0]
	clear(b.chat.arena)
	b.chat.arena = b.chat.arena[:0]
	return m
}

// takeSource reports whether the source of table order order supplies its
// direction, whose taken source is *cur: the first one does, and the
// later parts of the same source.
func takeSource(cur *int, order int) bool {
	if *cur == -1 || order == *cur {
		*cur = order
		return true
	}
	return false
}

// addIndexed adds an indexed source (llm.input_messages.0.message.role, ...).
func (m *msgBuild) addIndexed(a *indexedAcc) {
	switch a.src.direction {
	case dirTools:
		if takeSource(&m.toolOrder, a.src.order) {
			m.tools = a.appendToolDefs(m.tools)
		}
		m.res.toolKeys = append(m.res.toolKeys, a.keys...)
	case dirInput:
		if takeSource(&m.inOrder, a.src.order) {
			from := len(m.in)
			m.in = a.appendMessages(m.in, &m.arena, dirInput)
			m.splitSystem(from)
		}
		m.res.inputKeys = append(m.res.inputKeys, a.keys...)
	case dirOutput:
		if takeSource(&m.outOrder, a.src.order) {
			m.out = a.appendMessages(m.out, &m.arena, dirOutput)
		}
		m.res.outputKeys = append(m.res.outputKeys, a.keys...)
	}
}

// splitSystem moves the system messages of in[from:] to the system
// instructions.
func (m *msgBuild) splitSystem(from int) {
	kept := m.in[:from]
	for _, x := range m.in[from:] {
		if x.Role == "system" {
			m.sys = append(m.sys, x.Parts...)
			continue
		}
		kept = append(kept, x)
	}
	clear(m.in[len(kept):])
	m.in = kept
}

// addExact adds a source held in one attribute: plain text, a Vercel tool
// call list or chat JSON. A value that does not parse is listed as invalid.
func (b *msgBuilder) addExact(m *msgBuild, e *exactMsg) {
	ok := true
	switch e.src.layout {
	case layoutText:
		if m.textOutput() {
			out := m.outputMessage(e.src.order)
			out.Parts = append([]msgPart{textPart(e.value)}, out.Parts...)
		}
	case layoutVercelToolCalls:
		var parts []msgPart
		parts, ok = toolCallsFromJSON(e.value)
		if ok && m.textOutput() {
			out := m.outputMessage(e.src.order)
			out.Parts = append(out.Parts, parts...)
		}
	default:
		ok = b.addChat(m, e)
	}
	switch {
	case !ok:
		m.res.invalid = append(m.res.invalid, e.key)
	case e.src.direction == dirOutput:
		m.res.outputKeys = append(m.res.outputKeys, e.key)
	default:
		m.res.inputKeys = append(m.res.inputKeys, e.key)
	}
}

// textOutput reports whether text and tool-call sources write the output:
// no other output source was taken, or they started the output message.
func (m *msgBuild) textOutput() bool { return m.outOrder == -1 || m.outMsg >= 0 }

// outputMessage returns the single output message of text and tool-call
// sources, which the first of them (of table order order) adds.
func (m *msgBuild) outputMessage(order int) *message {
	if m.outMsg < 0 {
		m.out = append(m.out, message{Role: "assistant", Parts: []msgPart{}})
		m.outMsg = len(m.out) - 1
		m.outOrder = order
	}
	return &m.out[m.outMsg]
}

// addChat adds a chat JSON source (or, for layoutTextOrChatJSON, plain text
// that is not chat JSON); it reports whether the value was usable.
func (b *msgBuilder) addChat(m *msgBuild, e *exactMsg) bool {
	dir := e.src.direction
	msgs, sys, ok := b.chat.read(e.value, dir)
	if !ok {
		msgs, sys, ok = messagesFromJSON(e.value, dir)
	}
	if !ok && e.src.layout == layoutTextOrChatJSON && e.value != "" {
		msgs, ok = []message{{Role: defaultRole(dir), Parts: []msgPart{textPart(e.value)}}}, true
	}
	cur := &m.inOrder
	if dir == dirOutput {
		cur = &m.outOrder
	}
	if ok && takeSource(cur, e.src.order) {
		if dir == dirOutput {
			m.out = append(m.out, msgs...)
		} else {
			m.in = append(m.in, msgs...)
			m.sys = append(m.sys, sys...)
		}
	}
	return ok
}

// setFinishReasons gives every output message its required finish_reason:
// the message's own (normalized by mapFinish, and listed), else the span's
// for that choice, else tool_call when the message calls tools and stop
// otherwise.
func (m *msgBuild) setFinishReasons(finish []string, mapFinish func(string) string) {
	for i := range m.out {
		x := &m.out[i]
		switch {
		case x.HasFinish:
			x.FinishReason = mapFinish(x.FinishReason)
			m.res.finishReasons = append(m.res.finishReasons, x.FinishReason)
		case i < len(finish):
			x.FinishReason = finish[i]
		default:
			x.FinishReason = "stop"
			for _, p := range x.Parts {
				if p.Type == "tool_call" {
					x.FinishReason = "tool_call"
				}
			}
		}
		x.HasFinish = true
	}
}

// encode writes the JSON values into one buffer that becomes one string,
// shared by the result's input, system, tools and output values.
func (b *msgBuilder) encode(m *msgBuild) {
	buf := b.buf[:0]
	if len(m.in) > 0 {
		buf = appendMessages(buf, m.in)
	}
	inEnd := len(buf)
	if len(m.sys) > 0 {
		buf = appendParts(buf, m.sys)
	}
	sysEnd := len(buf)
	if len(m.tools) > 0 {
		buf = appendToolDefs(buf, m.tools)
	}
	toolsEnd := len(buf)
	if len(m.out) > 0 {
		buf = appendMessages(buf, m.out)
	}
	if len(buf) > 0 {
		all := string(buf)
		m.res.input, m.res.system, m.res.tools, m.res.output = all[:inEnd], all[inEnd:sysEnd], all[sysEnd:toolsEnd], all[toolsEnd:]
	}
	b.buf = buf
}
