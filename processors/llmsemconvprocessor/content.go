package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

type contentGroup uint8

const (
	groupNone contentGroup = iota
	groupInput
	groupOutput
	groupSystem
	groupTool
	numGroups
)

var groupNames = [numGroups]string{"none", "input_messages", "output_messages", "system_instructions", "tool_content"}

// contentKeys are the official content attributes and their group.
var contentKeys = []struct {
	key   string
	group contentGroup
}{
	{attrInputMessages, groupInput},
	{attrOutputMsgs, groupOutput},
	{attrSystemInstr, groupSystem},
	{attrToolArgs, groupTool},
	{attrToolResult, groupTool},
}

func contentGroupOf(k string) contentGroup {
	for _, c := range contentKeys {
		if c.key == k {
			return c.group
		}
	}
	return groupNone
}

// Content actions counted in self-telemetry.
const (
	actTruncated = iota
	actRedacted
	actHashed
	actDropped
	numActions
)

var actionNames = [numActions]string{"truncated", "redacted", "hashed", "dropped"}

// truncationMarker ends a truncated string.
const truncationMarker = "...[truncated]"

// minTruncateBytes is the smallest max_bytes accepted with action truncate.
const minTruncateBytes = 64

// builtinPatterns are redaction patterns shipped with the processor.
var builtinPatterns = map[string]string{
	"email":       `[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`,
	"api_key":     `(?:\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35})\b|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{20,}=*)`,
	"card_number": `\b(?:\d[ \-]?){12,18}\d\b`,
}

type namedRegex struct {
	name string
	re   *regexp.Regexp
	luhn bool
}

type contentPolicy struct {
	groups   [numGroups]GroupPolicy
	patterns []namedRegex
	active_  uint8 // bit per group with something to do
}

func newContentPolicy(c *ContentConfig) (*contentPolicy, error) {
	p := &contentPolicy{}
	p.groups[groupInput] = c.InputMessages
	p.groups[groupOutput] = c.OutputMessages
	p.groups[groupSystem] = c.SystemInstructions
	p.groups[groupTool] = c.ToolContent
	for g := groupInput; g < numGroups; g++ {
		gp := p.groups[g]
		if gp.Action != ActionKeep && gp.Action != "" || gp.MaxBytes > 0 {
			p.active_ |= 1 << g
		}
	}
	names := append([]string{}, c.BuiltinPatterns...)
	sort.Strings(names)
	for _, n := range names {
		re, err := regexp.Compile(builtinPatterns[n])
		if err != nil {
			return nil, err
		}
		p.patterns = append(p.patterns, namedRegex{name: n, re: re, luhn: n == "card_number"})
	}
	for _, pc := range c.Patterns {
		re, err := regexp.Compile(pc.Regex)
		if err != nil {
			return nil, err
		}
		p.patterns = append(p.patterns, namedRegex{name: pc.Name, re: re})
	}
	return p, nil
}

// active reports whether any content group present on an item (mask of
// group bits) has a policy to apply.
func (p *contentPolicy) active(mask uint8) bool { return p.active_&mask != 0 }

// apply enforces the policy on the official content attributes of attrs.
func (p *contentPolicy) apply(attrs pcommon.Map, st *batchStats) bool {
	if p.active_ == 0 {
		return false
	}
	changed := false
	for _, ck := range contentKeys {
		gp := p.groups[ck.group]
		if p.active_&(1<<ck.group) == 0 {
			continue
		}
		v, ok := attrs.Get(ck.key)
		if !ok {
			continue
		}
		orig := v.AsString()
		switch gp.Action {
		case ActionDrop:
			attrs.Remove(ck.key)
			st.content(ck.group, actDropped, len(orig))
			changed = true
			continue
		case ActionHash:
			sum := sha256.Sum256([]byte(orig))
			attrs.PutStr(ck.key, "sha256:"+hex.EncodeToString(sum[:]))
			attrs.PutInt(attrOriginalSizePfx+ck.key, int64(len(orig)))
			st.content(ck.group, actHashed, len(orig))
			changed = true
			continue
		}
		cur := orig
		if gp.Action == ActionRedact {
			red, n, bytes := p.redact(cur, st)
			if n > 0 {
				cur = red
				st.content(ck.group, actRedacted, bytes)
			}
		}
		if gp.MaxBytes > 0 && len(cur) > gp.MaxBytes {
			t := truncateContent(cur, gp.MaxBytes)
			st.content(ck.group, actTruncated, len(cur)-len(t))
			cur = t
		}
		if cur != orig {
			attrs.PutStr(ck.key, cur)
			if len(cur) < len(orig) || gp.MaxBytes > 0 {
				attrs.PutInt(attrOriginalSizePfx+ck.key, int64(len(orig)))
			}
			changed = true
		}
	}
	return changed
}

// redact replaces pattern matches in s; JSON values are redacted string by
// string so that the structure stays valid. It returns the new value, the
// number of matches and the bytes replaced.
func (p *contentPolicy) redact(s string, st *batchStats) (string, int, int) {
	if len(p.patterns) == 0 {
		return s, 0, 0
	}
	count, bytes := 0, 0
	red := func(x string) string {
		for _, pat := range p.patterns {
			x = pat.re.ReplaceAllStringFunc(x, func(m string) string {
				if pat.luhn && !luhnValid(m) {
					return m
				}
				count++
				bytes += len(m)
				st.redaction(pat.name)
				return "[REDACTED:" + pat.name + "]"
			})
		}
		return x
	}
	if x, ok := decodeJSON(s); ok {
		x = mapStrings(x, red)
		if count == 0 {
			return s, 0, 0
		}
		return marshalJSON(x), count, bytes
	}
	out := red(s)
	return out, count, bytes
}

func luhnValid(m string) bool {
	sum, n, double := 0, 0, false
	for i := len(m) - 1; i >= 0; i-- {
		c := m[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
		double = !double
	}
	return n >= 13 && sum%10 == 0
}

func decodeJSON(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[' && t[0] != '"') {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		return nil, false
	}
	return x, true
}

// mapStrings applies f to every string in a decoded JSON value.
func mapStrings(x any, f func(string) string) any {
	switch v := x.(type) {
	case string:
		return f(v)
	case []any:
		for i := range v {
			v[i] = mapStrings(v[i], f)
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = mapStrings(v[k], f)
		}
		return v
	}
	return x
}

// cutString shortens s by at least n bytes at a rune boundary and marks it.
func cutString(s string, n int) string {
	keep := len(s) - n - len(truncationMarker)
	if keep <= 0 {
		return ""
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + truncationMarker
}

// truncateContent bounds s to max bytes. JSON stays valid JSON: string
// leaves are shortened from the end, then trailing array elements dropped.
func truncateContent(s string, max int) string {
	if len(s) <= max {
		return s
	}
	x, ok := decodeJSON(s)
	if !ok {
		return cutString(s, len(s)-max)
	}
	out := s
	for round := 0; round < 4 && len(out) > max; round++ {
		excess := len(out) - max
		var leaves []*string
		x = collectLeaves(x, &leaves)
		for i := len(leaves) - 1; i >= 0 && excess > 0; i-- {
			l := leaves[i]
			if len(*l) <= len(truncationMarker) {
				continue
			}
			before := len(*l)
			*l = cutString(*l, excess)
			excess -= before - len(*l)
		}
		x = applyLeaves(x)
		out = marshalJSON(x)
	}
	for len(out) > max {
		arr, isArr := x.([]any)
		if !isArr || len(arr) == 0 {
			if isArr {
				return "[]"
			}
			return "{}"
		}
		x = arr[:len(arr)-1]
		out = marshalJSON(x)
	}
	return out
}

// leafString wraps a string leaf so that it can be edited in place.
type leafString struct{ s string }

func collectLeaves(x any, leaves *[]*string) any {
	switch v := x.(type) {
	case string:
		l := &leafString{s: v}
		*leaves = append(*leaves, &l.s)
		return l
	case []any:
		for i := range v {
			v[i] = collectLeaves(v[i], leaves)
		}
		return v
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v[k] = collectLeaves(v[k], leaves)
		}
		return v
	}
	return x
}

func applyLeaves(x any) any {
	switch v := x.(type) {
	case *leafString:
		return v.s
	case []any:
		for i := range v {
			v[i] = applyLeaves(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = applyLeaves(v[k])
		}
		return v
	}
	return x
}
