package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"fmt"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
)

// The vllm preset's fast parser takes the lines that carry vLLM's logger
// header ("INFO 11-29 17:41:30 [loggers.py:127] message") and whose message
// is an engine stats line or an ordinary message; it gives them what the
// grammar in presets/vllm.yaml gives them (the vllm_line parser, the
// message router and the stats parsers). Everything else, and any line it
// is unsure of, goes to the grammar: a process prefix the unwrap step left
// (unwrap off), a time that does not parse, a stats message in a format the
// templates below do not spell, and the messages the grammar routes to its
// other parsers (preemptions, out-of-memory errors, request lifecycle).

// vllmLevels are the levels the grammar's line router accepts.
var vllmLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

// The stats messages, as the grammar's stats parsers spell them.
var (
	vllmStatsV1Ext = mustTemplate("Engine {engine:d}: Avg prompt throughput: {prompt_tps:f} tokens/s, Avg generation throughput: {gen_tps:f} tokens/s, Running: {running:d} reqs, Waiting: {waiting:d} reqs, GPU KV cache usage: {gpu_kv:f}%, Prefix cache hit rate: {prefix_hit:f}%, External prefix cache hit rate: {external_prefix_hit:f}%")
	vllmStatsV1    = mustTemplate("Engine {engine:d}: Avg prompt throughput: {prompt_tps:f} tokens/s, Avg generation throughput: {gen_tps:f} tokens/s, Running: {running:d} reqs, Waiting: {waiting:d} reqs, GPU KV cache usage: {gpu_kv:f}%, Prefix cache hit rate: {prefix_hit:f}%")
	vllmStatsV0    = mustTemplate("Avg prompt throughput: {prompt_tps:f} tokens/s, Avg generation throughput: {gen_tps:f} tokens/s, Running: {running:d} reqs, Swapped: {swapped:d} reqs, Pending: {waiting:d} reqs, GPU KV cache usage: {gpu_kv:f}%, CPU KV cache usage: {cpu_kv:f}%")
	vllmPrefixV0   = mustTemplate("Prefix cache hit rate: GPU: {prefix_hit:f}%, CPU: {cpu_prefix_hit:f}%")
)

const eventVLLMStats = "vllm.stats"

// The header's captures the fast parser sets.
var (
	captureCodeFile = captureID("code_file")
	captureCodeLine = captureID("code_line")
)

// vllmFastParser holds what the fast parser needs from the preset: the
// field specs of the captures it sets, the time zone and the severities.
type vllmFastParser struct {
	fields map[string]*fieldSpec
	// specs are the field specs by captureID.
	specs    []*fieldSpec
	location *time.Location
	// severity and its text by level, as the grammar's severity parser
	// maps them.
	severity map[string]entry.Severity
}

func newVLLMFast(set component.TelemetrySettings, p *preset) (fastParser, error) {
	loc, err := time.LoadLocation(p.location)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", p.location, err)
	}
	fp := &vllmFastParser{fields: p.fields, location: loc, severity: map[string]entry.Severity{}, specs: make([]*fieldSpec, len(captureIDs))}
	for name, id := range captureIDs {
		fp.specs[id] = p.fields[name]
	}
	for _, t := range []msgTemplate{vllmStatsV1Ext, vllmStatsV1, vllmStatsV0, vllmPrefixV0} {
		for _, part := range t {
			if part.capture != "" && p.fields[part.capture] == nil {
				return nil, fmt.Errorf("capture %q is not in the preset's field table", part.capture)
			}
		}
	}
	for _, c := range []string{"code_file", "code_line", "time", "level"} {
		if p.fields[c] == nil {
			return nil, fmt.Errorf("capture %q is not in the preset's field table", c)
		}
	}
	// The severities come from stanza's own parser, configured as the
	// grammar's vllm_line parser is.
	from := entry.NewAttributeField("level")
	sc := helper.NewSeverityConfig()
	sc.ParseFrom, sc.Mapping = &from, map[string]any{"fatal": "CRITICAL"}
	sp, err := sc.Build(set)
	if err != nil {
		return nil, fmt.Errorf("severity: %w", err)
	}
	for _, l := range vllmLevels {
		e := entry.New()
		e.Attributes = map[string]any{"level": l}
		if err = sp.Parse(e); err != nil {
			return nil, fmt.Errorf("severity of %s: %w", l, err)
		}
		fp.severity[l] = e.Severity
	}
	return fp.parse, nil
}

// parse is the fast parser: all conversions happen before the record is
// touched, so a record it gives back to the grammar is unchanged.
func (fp *vllmFastParser) parse(e *entry.Entry) bool {
	h, ok := parseVLLMHeader(e.Body.(string))
	if !ok {
		return false
	}
	ts, ok := fp.timestamp(h.time)
	if !ok {
		return false
	}
	var caps [maxCaptures + 2]capture
	n, event, ok := vllmMessage(h.message, (*[maxCaptures]capture)(caps[:maxCaptures]))
	if !ok {
		return false
	}
	caps[n], caps[n+1] = capture{"code_file", h.codeFile, captureCodeFile}, capture{"code_line", h.codeLine, captureCodeLine}
	n += 2
	var vals [maxCaptures + 2]any
	for i, c := range caps[:n] {
		v, err := convertField(fp.specs[c.id], c.value)
		if err != nil {
			return false // the grammar marks the parse error
		}
		vals[i] = v
	}
	// One map of the final size rather than growing the file input's one
	// as the captures go in.
	grown := make(map[string]any, len(e.Attributes)+n+2)
	for k, v := range e.Attributes {
		grown[k] = v
	}
	e.Attributes = grown
	for i, c := range caps[:n] {
		e.Attributes[fp.specs[c.id].Attribute] = vals[i]
	}
	if event != "" {
		e.Attributes[attrEventName] = event
	}
	e.Timestamp, e.Severity, e.SeverityText = ts, fp.severity[h.level], h.level
	e.Body = h.message
	return true
}

// timestamp is stanza's strptime "%m-%d %H:%M:%S" in the preset's time
// zone, with the year its parser gives a time without one: this year, or
// last year for a date more than 7 days ahead.
func (fp *vllmFastParser) timestamp(s string) (time.Time, bool) {
	num := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	mon, day, hh, mm, ss := num(0), num(3), num(6), num(9), num(12)
	// Day limits of year 0, a leap year, where the parse happens.
	if mon < 1 || mon > 12 || day < 1 || day > daysIn(time.Month(mon)) || hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, false
	}
	now := timeNow()
	d := time.Date(now.Year(), time.Month(mon), day, hh, mm, ss, 0, fp.location)
	if d.After(now.AddDate(0, 0, 7)) {
		d = d.AddDate(-1, 0, 0)
	}
	return d, true
}

// timeNow is the clock the year comes from (stanza's parser reads the same).
var timeNow = time.Now

func daysIn(m time.Month) int {
	switch m {
	case time.February:
		return 29
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

type vllmHeader struct {
	level, time, codeFile, codeLine, message string
}

// parseVLLMHeader reads "LEVEL MM-DD HH:MM:SS [file:line] message" (the
// "[" is missing in old releases), as the vllm_line parser does.
func parseVLLMHeader(s string) (vllmHeader, bool) {
	var h vllmHeader
	sp := strings.IndexByte(s, ' ')
	if sp < 0 || !isOneOf(s[:sp], vllmLevels) {
		return h, false
	}
	h.level, s = s[:sp], s[sp+1:]
	if len(s) < 15 || !isClock(s[:14]) || s[14] != ' ' {
		return h, false
	}
	h.time, s = s[:14], s[15:]
	s = strings.TrimPrefix(s, "[")
	end := strings.IndexAny(s, ":] ")
	if end <= 0 || s[end] != ':' {
		return h, false
	}
	h.codeFile, s = s[:end], s[end+1:]
	d := 0
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	if d == 0 || !strings.HasPrefix(s[d:], "] ") {
		return h, false
	}
	h.codeLine, h.message = s[:d], s[d+2:]
	return h, true
}

// isClock matches "MM-DD HH:MM:SS" by shape (digits and separators).
func isClock(s string) bool {
	for i := 0; i < len(s); i++ {
		switch i {
		case 2:
			if s[i] != '-' {
				return false
			}
		case 5:
			if s[i] != ' ' {
				return false
			}
		case 8, 11:
			if s[i] != ':' {
				return false
			}
		default:
			if !isDigit(s[i]) {
				return false
			}
		}
	}
	return true
}

func isOneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// vllmMessage routes a message as the grammar's message router does and
// parses the stats messages into out. ok false: the grammar must take it.
func vllmMessage(msg string, out *[maxCaptures]capture) (n int, event string, ok bool) {
	var t msgTemplate
	switch {
	case strings.HasPrefix(msg, "Engine "):
		if n, ok := vllmStatsV1Ext.match(msg, out[:]); ok {
			return n, eventVLLMStats, true
		}
		t = vllmStatsV1
	case strings.HasPrefix(msg, "Avg prompt throughput: "):
		t = vllmStatsV0
	case strings.HasPrefix(msg, "Prefix cache hit rate: GPU: "):
		t = vllmPrefixV0
	case strings.HasPrefix(msg, "SpecDecoding metrics: "), strings.Contains(msg, " is preempted by "), strings.Contains(msg, "out of memory"),
		strings.Contains(msg, "OutOfMemoryError"), isRequestLine(msg):
		return 0, "", false
	default:
		return 0, "", true
	}
	n, ok = t.match(msg, out[:])
	return n, eventVLLMStats, ok
}

func isRequestLine(msg string) bool {
	for _, a := range []string{"Received", "Added", "Finished", "Aborted"} {
		if strings.HasPrefix(msg, a) && strings.HasPrefix(msg[len(a):], " request ") {
			return true
		}
	}
	return false
}
