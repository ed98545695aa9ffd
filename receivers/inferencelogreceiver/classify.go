package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
)

// classifyOperatorID is the operator between the fold and the preset's
// grammar. It sends the records it recognizes in full straight to the
// fields step and every other record to the grammar:
//   - records that only log collection made: an empty message (journald's
//     line for an empty one), journald's "[N B blob data]" placeholder for a
//     message it would not print, and systemd's own notices about the unit;
//   - the preset's most frequent lines, where it has a fast parser (vLLM's
//     header and stats lines): hand-written Go that gives exactly the
//     captures, timestamp and severity of the preset's grammar, and leaves
//     any record it does not take in full to the grammar. A differential
//     test and a fuzz target hold the two paths equal.
const classifyOperatorID = "inference_log_classify"

type classifyConfig struct {
	helper.WriterConfig
	preset *preset
}

// newClassifyConfig outputs to the preset's first operator and to the fields
// step, in that order.
func newClassifyConfig(p *preset) operator.Config {
	c := &classifyConfig{WriterConfig: helper.NewWriterConfig(classifyOperatorID, classifyOperatorID), preset: p}
	c.OutputIDs = []string{p.operators[0].ID(), fieldsOperatorID}
	return operator.NewConfig(c)
}

func (c *classifyConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	w, err := c.WriterConfig.Build(set)
	if err != nil {
		return nil, err
	}
	op := &classifyOperator{WriterOperator: w}
	if newFast := fastParsers[c.preset.name]; newFast != nil && !fastParsersOff {
		if op.fast, err = newFast(set, c.preset); err != nil {
			return nil, fmt.Errorf("%s fast parser: %w", c.preset.name, err)
		}
	}
	return op, nil
}

type classifyOperator struct {
	helper.WriterOperator
	fast fastParser // nil: the preset has none
}

// A fastParser parses the record in place and reports true, or leaves it
// untouched and reports false.
type fastParser func(e *entry.Entry) bool

func (*classifyOperator) CanProcess() bool { return true }

func (o *classifyOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	grammar := entries[:0:0]
	done := make([]*entry.Entry, 0, len(entries))
	for _, e := range entries {
		if o.classify(e) {
			done = append(done, e)
		} else {
			grammar = append(grammar, e)
		}
	}
	var err error
	if len(grammar) > 0 {
		err = o.OutputOperators[0].ProcessBatch(ctx, grammar)
	}
	if len(done) > 0 {
		if err2 := o.OutputOperators[1].ProcessBatch(ctx, done); err == nil {
			err = err2
		}
	}
	return err
}

func (o *classifyOperator) Process(ctx context.Context, e *entry.Entry) error {
	if o.classify(e) {
		return o.OutputOperators[1].Process(ctx, e)
	}
	return o.OutputOperators[0].Process(ctx, e)
}

// classify reports whether the record is complete without the grammar.
func (o *classifyOperator) classify(e *entry.Entry) bool {
	body, ok := e.Body.(string)
	if !ok {
		return false
	}
	if ev := collectionEvent(body, e.Attributes); ev != "" {
		if ev != emptyMessage {
			setAttr(e, attrEventName, ev)
		}
		return true
	}
	if o.fast != nil && o.fast(e) {
		return true
	}
	return shellDeath(e, body) || procDump(e, body) || shellCommand(e, body)
}

// shellCommandPattern is a command line: environment assignments, then a
// program name or path ("python3 -m vllm.entrypoints.openai.api_server ...",
// "CUDA_VISIBLE_DEVICES=0 text-generation-launcher ...", "./llama-server ...").
// A logger's "subsystem: message" and llama.cpp's "slot"/"srv" lines are
// not commands.
var (
	shellCommandPattern = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*[a-z.~/][\w./~+-]*(?:\s|$)`)
	notCommandPattern   = regexp.MustCompile(`^(?:[a-z_][\w.]*: |(?:slot|srv|que) )`)
)

// launchCommandPattern is a server's launch command, which a paste often
// shows without a prompt: "CUDA_VISIBLE_DEVICES=2 python -m sglang.launch_server ...",
// "vllm serve ...", "text-generation-launcher ...", "./llama-server -m ...", "ollama serve".
var launchCommandPattern = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:python3?(?:\.\d+)? -m (?:vllm|sglang)[\w.]*|vllm serve|text-generation-launcher|(?:\S*/)?llama-server|(?:\./)?server -m|ollama serve)(?:\s|$)`)

// shellCommand takes the command a paste shows after a shell's prompt (the
// unwrap step peeled the prompt off), or a server's launch command without
// one, as a record of its own: what was run, with the lines it printed
// before its logger started folded in.
func shellCommand(e *entry.Entry, body string) bool {
	if _, ok := e.Attributes[attrShellPrompt]; !ok {
		if !launchCommandPattern.MatchString(body) {
			return false
		}
		setAttr(e, attrEventName, eventShellCommand)
		e.Severity = entry.Info
		return true
	}
	if !shellCommandPattern.MatchString(body) || notCommandPattern.MatchString(body) {
		return false
	}
	setAttr(e, attrEventName, eventShellCommand)
	e.Severity = entry.Info
	return true
}

// procDumpPattern is Sysinternals ProcDump watching a server on Windows
// (procdump -e): "[01:16:13] Exception: C0000005.ACCESS_VIOLATION" (a
// first-chance exception), "[01:16:13] Unhandled: ..." (the crash),
// "[01:16:13] Dump 1 initiated: C:\dumps\llama-server.exe_...dmp", "...
// writing: ...", "... complete: ...", "Dump count reached.".
var procDumpPattern = regexp.MustCompile(`^\[\d{2}:\d{2}:\d{2}\] ?(Exception|Unhandled|Dump \d+ (?:initiated|writing|complete|info)|Dump count reached)\b`)

// procDump takes ProcDump's lines: an exception it saw (ERROR, FATAL when
// unhandled) or a dump it wrote.
func procDump(e *entry.Entry, body string) bool {
	if len(body) < 12 || body[0] != '[' || body[3] != ':' {
		return false
	}
	m := procDumpPattern.FindStringSubmatch(body)
	if m == nil {
		return false
	}
	switch m[1] {
	case "Exception":
		setAttr(e, attrEventName, "procdump.exception")
		e.Severity = entry.Error
	case "Unhandled":
		setAttr(e, attrEventName, "procdump.exception")
		e.Severity = entry.Fatal
	default:
		setAttr(e, attrEventName, "procdump.dump")
		e.Severity = entry.Info
	}
	e.SeverityText = m[1]
	return true
}

// Attributes of a shell's report that the server died of a signal.
const (
	eventShellDeath   = "shell.process_died"
	eventShellCommand = "shell.command"
	attrSignal        = "inference_log.signal" // "SIGKILL"
	attrProcessCmd    = "process.command_line" // the command, where the shell names it
	shellDeathMaxLen  = 512
)

// shellDeathPattern is what a shell prints when the process it ran died of
// a signal: bash's "Killed", "Segmentation fault (core dumped)",
// "./run.sh: line 3: 12345 Killed   python -m ..." and its job line
// "[1]+  Killed   python ...", zsh's "[1]    474256 segmentation fault  ./server -m ..."
// and "zsh: killed     python ...", and the shell's name for the command
// after one space ("Aborted (core dumped) /usr/bin/llama-server ...").
var shellDeathPattern = regexp.MustCompile(`^(?:\S+: line \d+: +\d+ |\[\d+\][ +-]* +(?:\d+ +)?|zsh: )?(?i:(killed|terminated|aborted|segmentation fault|bus error|illegal instruction|floating point exception|trace/breakpoint trap))(?:\s+\(core dumped\)(?: +(\S.*?))?| {2,}(\S.*?)| (/\S.*?))?\s*$`)

// shellSignals names the signal behind each of the shell's words.
var shellSignals = map[string]string{
	"killed": "SIGKILL", "terminated": "SIGTERM", "aborted": "SIGABRT", "segmentation fault": "SIGSEGV",
	"bus error": "SIGBUS", "illegal instruction": "SIGILL", "floating point exception": "SIGFPE",
	"trace/breakpoint trap": "SIGTRAP",
}

// shellDeath takes a shell's report that the server died of a signal
// (Killed is often the kernel's OOM killer): a FATAL record naming the
// signal, and the command where the shell prints it.
func shellDeath(e *entry.Entry, body string) bool {
	if len(body) > shellDeathMaxLen || !shellDeathQuick(body) {
		return false
	}
	m := shellDeathPattern.FindStringSubmatch(body)
	if m == nil {
		return false
	}
	setAttr(e, attrEventName, eventShellDeath)
	setAttr(e, attrSignal, shellSignals[strings.ToLower(m[1])])
	if cmd := m[2] + m[3] + m[4]; cmd != "" {
		setAttr(e, attrProcessCmd, cmd)
	}
	e.Severity, e.SeverityText = entry.Fatal, m[1]
	return true
}

// shellDeathQuick is the cheap check in front of shellDeathPattern: the
// record holds a piece of one of the words in either case.
func shellDeathQuick(body string) bool {
	for _, w := range []string{"illed", "erminated", "borted", "fault", "rror", "nstruction", "xception", "trap"} {
		if strings.Contains(body, w) {
			return true
		}
	}
	return false
}

// Events of records that log collection made, not the server.
const (
	emptyMessage = "-" // no event name
	eventBlob    = "journald.blob_data"
	// journalctl's own lines: "-- Logs begin at ... --", "-- Boot 1a2b.. --",
	// "-- Reboot --", "-- No entries --".
	eventJournalMarker = "journald.marker"
	// journalctl -x's explanation from the message catalog, each line
	// behind "░░ " ("░░ Subject: A start job for unit ollama.service has
	// finished successfully", "░░ Defined-By: systemd", a lone "░░").
	eventJournalCatalog = "journald.catalog"
	journalCatalogMark  = "░░"
	eventSystemd        = "systemd.notice"
	// A log viewer's time or level column that a copy put on a line of its
	// own ("2026-02-02 17:59:02.735", "info").
	eventViewerColumn = "log_viewer.column"
	blobSuffix        = "B blob data]"
	systemdBinary     = "systemd"
)

// collectionEvent names what a record that log collection made is, or
// returns "".
func collectionEvent(body string, attrs map[string]any) string {
	switch {
	case body == "":
		return emptyMessage
	case attrs[attrProcessName] == systemdBinary:
		return eventSystemd
	case len(body) <= maxViewerColumn && isViewerColumn(body):
		return eventViewerColumn
	case strings.HasPrefix(body, "-- ") && strings.HasSuffix(body, " --") && isJournalMarker(body):
		return eventJournalMarker
	case strings.HasPrefix(body, journalCatalogMark):
		return eventJournalCatalog
	case len(body) > len(blobSuffix)+1 && body[0] == '[' && strings.HasSuffix(body, blobSuffix) &&
		allDigits(body[1:len(body)-len(blobSuffix)]):
		return eventBlob
	}
	return ""
}

// isJournalMarker reports whether body, "-- ... --", is one of journalctl's
// own lines.
func isJournalMarker(body string) bool {
	for _, p := range []string{"-- Logs begin at ", "-- Journal begins at ", "-- Boot ", "-- Reboot --", "-- No entries --"} {
		if strings.HasPrefix(body, p) {
			return true
		}
	}
	return false
}

// maxViewerColumn is the longest viewer column: a date, a time in
// nanoseconds and a zone; longer bodies are not looked at.
const maxViewerColumn = 40

// isViewerColumn reports whether body is only a date and time or only a
// level word.
func isViewerColumn(body string) bool {
	switch strings.ToLower(body) {
	case "trace", "debug", "info", "notice", "warn", "warning", "error", "critical", "fatal":
		return true
	}
	return viewerColumnPattern.MatchString(body)
}

var viewerColumnPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?$`)

func setAttr(e *entry.Entry, k string, v any) {
	if e.Attributes == nil {
		e.Attributes = map[string]any{}
	}
	e.Attributes[k] = v
}

// fastParsersOff sends every record to the grammar: for the tests that
// compare the fast parsers with it.
var fastParsersOff bool

// fastParsers are the presets' fast parsers, by preset name.
var fastParsers = map[string]func(set component.TelemetrySettings, p *preset) (fastParser, error){
	"vllm": newVLLMFast,
}
