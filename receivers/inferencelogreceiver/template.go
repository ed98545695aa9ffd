package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"fmt"
	"strings"
)

// A msgTemplate is a message of fixed text with numbers in it, written as
// "Running: {running:d} reqs, GPU KV cache usage: {gpu_kv:f}%": {name:d}
// captures one or more digits (a regex's \d+), {name:f} digits and dots
// ([\d.]+). Text after the last part is allowed, as after a regex without
// an end anchor. The text after a capture may not start with a character
// the capture takes, so greedy matching is the regex's match.
type msgTemplate []templatePart

type templatePart struct {
	text    string // literal text before the capture
	capture string // "" for the trailing text
	id      int    // the capture's captureID
	float   bool
}

// maxCaptures bounds a template's captures (callers pass a fixed array).
const maxCaptures = 8

// A capture is one named value a template took from a message; id is its
// name's captureID, so a parser can keep what it needs per name in a slice.
type capture struct {
	name, value string
	id          int
}

// captureIDs number the capture names of the templates (and of the fast
// parsers' own captures) from 0, one number per name.
var captureIDs = map[string]int{}

// captureID returns name's number, giving it the next one on first use.
// Called while the package's variables are initialized.
func captureID(name string) int {
	id, ok := captureIDs[name]
	if !ok {
		id = len(captureIDs)
		captureIDs[name] = id
	}
	return id
}

func mustTemplate(s string) msgTemplate {
	t, err := compileTemplate(s)
	if err != nil {
		panic(err)
	}
	return t
}

func compileTemplate(s string) (msgTemplate, error) {
	var t msgTemplate
	for s != "" {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			t = append(t, templatePart{text: s})
			break
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("template %q: unclosed {", s)
		}
		name, kind, ok := strings.Cut(s[open+1:open+end], ":")
		if !ok || name == "" || (kind != "d" && kind != "f") {
			return nil, fmt.Errorf("template %q: want {name:d} or {name:f}", s)
		}
		rest := s[open+end+1:]
		if rest != "" && (isDigit(rest[0]) || kind == "f" && rest[0] == '.') {
			return nil, fmt.Errorf("template %q: the text after {%s} starts with a character it captures", s, name)
		}
		t = append(t, templatePart{text: s[:open], capture: name, id: captureID(name), float: kind == "f"})
		s = rest
	}
	captures := 0
	for _, p := range t {
		if p.capture != "" {
			captures++
		}
	}
	if captures > maxCaptures {
		return nil, fmt.Errorf("template: %d captures, at most %d", captures, maxCaptures)
	}
	return t, nil
}

// match reads msg into out and returns how many captures it took; ok false
// when msg does not have the template's shape (out is then garbage).
func (t msgTemplate) match(msg string, out []capture) (n int, ok bool) {
	for _, p := range t {
		if !strings.HasPrefix(msg, p.text) {
			return 0, false
		}
		msg = msg[len(p.text):]
		if p.capture == "" {
			continue
		}
		i := 0
		for i < len(msg) && (isDigit(msg[i]) || p.float && msg[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, false
		}
		out[n] = capture{p.capture, msg[:i], p.id}
		n++
		msg = msg[i:]
	}
	return n, true
}
