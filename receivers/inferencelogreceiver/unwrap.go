package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
)

// unwrapOperatorID is the operator that runs before every preset.
const unwrapOperatorID = "inference_log_unwrap"

// Attributes the unwrap step writes.
const (
	attrOriginal      = "log.record.original" // the line as read, when the body was rewritten
	attrWrapperTime   = "inference_log.wrapper.time"
	attrContainerName = "container.name"
	attrHostName      = "host.name"
	attrProcessName   = "process.executable.name"
	attrProcessPID    = "process.pid"
	attrRepeated      = "inference_log.repeated" // syslog "message repeated N times"
	attrRank          = "inference_log.rank"     // torch.distributed "[rankN]:"
	attrProcessTitle  = "process.title"          // "(EngineCore_DP0 pid=N) ", "(WorkerDict pid=N) "
	attrRelayLogger   = "inference_log.wrapper.logger"
	attrShellPrompt   = "inference_log.wrapper.shell_prompt" // "root@host:~$", when a paste kept it
)

// The wrappers that log collection puts around a server's own lines, in the
// order they are peeled off (outermost first). Each is tried only when a
// cheap check of the line passes, so a plain line costs a few comparisons.
var (
	// ANSI colour codes, as escapes and as the literal text that terminals,
	// journald exports and issue pastes leave: ESC[..m, #033[..m, ^[[..m,
	// \033[..m, \x1b[..m, \u001b[..m, ESC[..m (a viewer that prints
	// the escape's name) and �[..m (one that shows the escape byte as
	// the Unicode replacement character).
	ansiPattern = regexp.MustCompile(`(?:\x1b|#033|\^\[|\\033|\\x1b|\\u001b|ESC|\x{FFFD})\[[0-9;]*[A-Za-z]`)
	// The same codes with the escape byte lost on the way (a paste, a log
	// UI): "[2m", "[0m"; taken for codes only on a line holding a reset,
	// with the space that replaced the escape.
	bareANSIPattern = regexp.MustCompile(` ?\[[0-9;]{0,8}m`)
	// A coloured terminal saved as HTML (aha, ansi2html, a log UI's
	// export): the colours as tags around the text.
	htmlTagPattern = regexp.MustCompile(`</?(?:font|span|b|i|u|strong|em)(?:\s[^>]*)?>`)
	// kubectl logs --timestamps, docker logs -t, log exports (CloudWatch,
	// Loki): an RFC 3339 time and white space before the line; some
	// collectors print the offset apart, with the zone's name
	// ("2025-10-24T17:12:08.363544040 +08:00 CST ").
	kubeTimePattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}| [+-]\d{2}:?\d{2}(?: [A-Z]{2,5})?))[ \t](.*\S.*)$`)
	// rsyslog's high-precision file format (RSYSLOG_FileFormat, RFC 5424's
	// time): "2026-07-28T20:08:39.809061-04:00 host tag[pid]: ".
	isoSyslogPattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ([\w.-]+) ([\w./@-]+)\[(\d+)\]:(?: (.*))?$`)
	// A log viewer's column ("2025-05-30 09:55:22.281 | ").
	// Docker Desktop's column has no bar ("2025-03-05 08:58:54 "); a time
	// with milliseconds and no bar is Python logging's own record instead.
	viewerTimePattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:(?:[.,]\d+)? \||)) (.*)$`)
	// DJL Serving (SageMaker LMI) relaying a Python worker's output:
	// "[INFO ] PyProcess - W-210-model-stdout: ".
	djlPattern = regexp.MustCompile(`^\[?[A-Z]+ ?\] PyProcess - ([\w.-]+)-std(?:out|err): (.*)$`)
	// Python logging's default format, from a parent process that relays a
	// server's output: "2025-03-07 23:50:27,531 - __main__ - INFO - ".
	pyRelayPattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) - ([\w.]+) - [A-Z]+ - (.*)$`)
	// A log UI's container column before an RFC 3339 time ("llamadevinit 2023-06-02T14:52:26Z ...").
	containerTimePattern = regexp.MustCompile(`^([a-z][\w-]*) (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}.*)$`)
	// A TGI text record starts with its own RFC 3339 time and a level: that
	// time is the record's, not a wrapper's.
	tgiRecordPattern = regexp.MustCompile(`^ *(?:TRACE|DEBUG|INFO|WARN|ERROR) +[a-z][\w-]*(?:[:{])`)
	// docker compose: "service-1  | " (v2), "service_1  | " (v1), a
	// container name ("sglang  | ") or a bracketed one ("[tgi] | ").
	composePattern = regexp.MustCompile(`^(?:([A-Za-z0-9][\w.-]*?[-_]\d+) *|([A-Za-z0-9][\w.-]*) +|\[([\w.-]+)\] +)\| ?(.*)$`)
	// journald / syslog: "Mon DD HH:MM:SS host tag[pid]: ".
	// The month may be localized ("9月 02 14:46:54", "janv. 20 23:15:05",
	// "Okt 05 ...") or the date numeric ("06.05 13:15:31"); the host may be empty
	// and the tag end with a colon ("  llama-Qwen:[1351]: "), or the host
	// be a placeholder a user put for it ("<ollama server>"); an empty
	// message leaves nothing after the colon.
	syslogPattern = regexp.MustCompile(`^(?:(?:\p{Lu}\p{Ll}{2}|\p{Ll}{3,4}\.?|\d{1,2}月) [ \d]\d|\d{2}\.\d{2}\.?) \d{2}:\d{2}:\d{2} (<[^<>]*>|\S*) +([\w./@:-]+?)(?:\[(\d+)\])?:(?: (.*))?$`)
	// A supervisor's PID column ("[42027] ").
	pidColumnPattern = regexp.MustCompile(`^\[(\d+)\] (.*)$`)
	// syslog's repeat line: "message repeated N times: [ line ]".
	repeatPattern = regexp.MustCompile(`^message repeated (\d+) times: \[ ?(.*?) ?\]$`)
	// torch.distributed's per-rank prefix: "[rank0]: ".
	rankPattern = regexp.MustCompile(`^\[rank(\d+)\]: ?(.*)$`)
	// A process's prefix, from vLLM's multiprocessing ("(APIServer pid=1) ",
	// "(EngineCore_DP0 pid=2) ", "(VllmWorker rank=0 pid=3) ",
	// "(VllmWorker rank=0 engine_index=0 pid=4) ", "(VllmWorker TP0 pid=5) ") or Ray
	// ("(WorkerDict pid=5, ip=10.0.0.5) ", a Serve replica's
	// "(ServeReplica:app:LLMServer:model pid=6) "); Ray nests them, one per
	// process the line went through, and each is peeled in turn.
	// matchProcessPrefix is this pattern by hand, held to it by
	// FuzzProcessPrefix.
	processPattern = regexp.MustCompile(`^\(([\w.:-]+)(?: [A-Za-z_]+=?\d+)* pid=(\d+)(?:, ip=[\d.]+)?\)(?: (.*))?$`)
	// A CI log's bracketed time (Buildkite): "[2025-12-13T19:54:35Z] ".
	ciTimePattern = regexp.MustCompile(`^\[(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))\] (.*)$`)
	// journald's short output without date and host ("ollama[1291103]: "),
	// or a supervisor's tag in the same shape ("llama-server [falcon-7b:2048:6]: ").
	identPattern = regexp.MustCompile(`^([A-Za-z][\w.-]*) ?\[([^\] ]+)\]: (.*)$`)
	// pm2's log prefix: the app's id and name ("0|pv_scheduler  | ").
	pm2Pattern = regexp.MustCompile(`^(\d+)\|([\w.-]+) +\| ?(.*)$`)
	// A terminal's echo of Ctrl-C ("^C", or the byte itself).
	ctrlCPattern = regexp.MustCompile(`^(?:\^C|\x03)+(.+)$`)
	// A terminal UI's box (k9s): "│ line   │".
	boxPattern = regexp.MustCompile(`^│ (.*?) *│? *$`)
	// A Markdown quote before a server's line (or before journald's
	// "Jun 05 12:36:11 "); the stray backtick of a code fence.
	quotedLinePattern    = regexp.MustCompile(`^> ((?:\(|[A-Z]{4,8} |\d|\[|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} ).*)$`)
	strayBacktickPattern = regexp.MustCompile("^`(.+)$")
	// Ray's de-duplication suffix: " [repeated 3x across cluster]".
	rayRepeatPattern = regexp.MustCompile(`^(.*) \[repeated (\d+)x across cluster\]$`)
)

// unwrap peels the known wrappers off line and records what they said in
// attrs. It returns the server's own line.
func unwrap(line string, attrs map[string]any) string {
	// A pager or a Windows tool shows a CRLF line's carriage return as "^M".
	line = strings.TrimSuffix(line, "^M")
	if hasANSI(line) {
		line = ansiPattern.ReplaceAllString(line, "")
	}
	if strings.Contains(line, "[0m") {
		line = bareANSIPattern.ReplaceAllString(line, "")
	}
	if strings.Contains(line, "</") {
		if bare := htmlTagPattern.ReplaceAllString(line, ""); bare != line {
			line = html.UnescapeString(bare)
		}
	}
	for {
		next, ok := unwrapOnce(line, attrs)
		if !ok {
			return line
		}
		line = next
	}
}

// hasANSI is the cheap check in front of ansiPattern.
func hasANSI(s string) bool {
	return strings.IndexByte(s, 0x1b) >= 0 || strings.Contains(s, "033[") || strings.Contains(s, "^[[") ||
		strings.Contains(s, "x1b[") || strings.Contains(s, "u001b[") || strings.Contains(s, "ESC[") ||
		strings.Contains(s, "\uFFFD[")
}

// unwrapOnce peels one wrapper off line, if it has one: the first peeler
// that recognizes its wrapper wins.
func unwrapOnce(line string, attrs map[string]any) (string, bool) {
	for i := range peelers {
		p := &peelers[i]
		if !p.quick(line) {
			continue
		}
		var m []string
		if p.match != nil {
			m = p.match(line)
		} else {
			m = p.re.FindStringSubmatch(line)
		}
		if m != nil {
			if rest, ok := p.apply(m, attrs); ok {
				return rest, true
			}
		}
	}
	return line, false
}

// A peeler recognizes one wrapper: a cheap check of the line, then its
// pattern, whose submatches apply turns into attributes and the rest of
// the line (ok false: not this wrapper after all).
type peeler struct {
	quick func(line string) bool
	re    *regexp.Regexp
	// match, where set, is re written by hand (for the prefixes on every
	// line of a busy server): the same submatches, or nil.
	match func(line string) []string
	apply func(m []string, attrs map[string]any) (rest string, ok bool)
}

var peelers = []peeler{
	// pino's JSON lines (a Node.js app relaying a server's output, Msty):
	// {"level":30,"time":1752516972752,"pid":10104,"hostname":"h","msg":"line\n"}.
	{quick: prefix(`{"level":`), match: matchPino, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrWrapperTime], attrs[attrHostName] = m[1], m[2]
		putInt(attrs, attrProcessPID, m[3])
		return m[4], true
	}},
	// A line quoted in a Markdown paste ("> (EngineCore pid=1) ERROR ..."):
	// only before what starts a server's line (a process prefix, a level,
	// a time), so a loguru "> File" marker stays.
	{quick: quotedLineQuick, re: quotedLinePattern, apply: func(m []string, _ map[string]any) (string, bool) { return m[1], true }},
	// A code fence's stray backtick glued to the first line of a paste
	// ("`2024-09-23T12:10:50Z  INFO ..."): a lone backtick at the start.
	{quick: func(l string) bool { return len(l) > 1 && l[0] == '`' && strings.Count(l, "`") == 1 }, re: strayBacktickPattern,
		apply: func(m []string, _ map[string]any) (string, bool) { return m[1], true }},
	{quick: rfc3339At(0), re: isoSyslogPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrWrapperTime], attrs[attrHostName], attrs[attrProcessName] = m[1], m[2], m[3]
		putInt(attrs, attrProcessPID, m[4])
		return m[5], true
	}},
	{quick: rfc3339At(0), re: kubeTimePattern, apply: applyExportTime},
	{quick: func(l string) bool { return len(l) > 22 && l[0] == '[' && rfc3339At(1)(l) }, re: ciTimePattern,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			attrs[attrWrapperTime] = m[1]
			return m[2], true
		}},
	{quick: pyRelayQuick, re: pyRelayPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrWrapperTime], attrs[attrRelayLogger] = m[1], m[2]
		return m[3], true
	}},
	{quick: containerTimeQuick, re: containerTimePattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrContainerName] = m[1]
		return m[2], true
	}},
	{quick: viewerTimeQuick, re: viewerTimePattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrWrapperTime] = strings.TrimSuffix(strings.TrimSuffix(m[1], "|"), " ")
		return m[2], true
	}},
	{quick: contains("] PyProcess - "), re: djlPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrProcessTitle] = m[1]
		return m[2], true
	}},
	{quick: func(l string) bool { return len(l) > 3 && l[0] == '[' && isDigit(l[1]) }, re: pidColumnPattern,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			if shellDeathPattern.MatchString(m[0]) {
				return "", false // a shell's job line: "[1]    474256 segmentation fault  ./server"
			}
			putInt(attrs, attrProcessPID, m[1])
			return m[2], true
		}},
	{quick: syslogQuick, re: syslogPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrHostName], attrs[attrProcessName] = m[1], m[2]
		putInt(attrs, attrProcessPID, m[3])
		return m[4], true
	}},
	{quick: prefix("message repeated "), re: repeatPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		putInt(attrs, attrRepeated, m[1])
		return m[2], true
	}},
	{quick: func(l string) bool { return strings.HasPrefix(l, "(") && strings.Contains(l, " pid=") }, match: matchProcessPrefix,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			attrs[attrProcessTitle] = m[1]
			putInt(attrs, attrProcessPID, m[2])
			return m[3], true
		}},
	{quick: identQuick, re: identPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrProcessName] = m[1]
		if allDigits(m[2]) {
			putInt(attrs, attrProcessPID, m[2])
		} else {
			attrs[attrProcessTitle] = m[2]
		}
		return m[3], true
	}},
	{quick: func(l string) bool { return len(l) > 3 && isDigit(l[0]) && strings.Contains(l[:min(len(l), 8)], "|") }, re: pm2Pattern,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			attrs[attrProcessTitle] = m[2]
			return m[3], true
		}},
	{quick: func(l string) bool { return strings.HasSuffix(l, " across cluster]") }, re: rayRepeatPattern,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			putInt(attrs, attrRepeated, m[2])
			return m[1], true
		}},
	{quick: prefix("[rank"), re: rankPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		putInt(attrs, attrRank, m[1])
		return m[2], true
	}},
	{quick: func(l string) bool { i := strings.IndexByte(l, '|'); return i > 0 && i < 64 }, re: composePattern,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			attrs[attrContainerName] = m[1] + m[2] + m[3]
			return m[4], true
		}},
	// A terminal's echo of Ctrl-C before the next line ("^CINFO: Shutting down").
	{quick: func(l string) bool { return strings.HasPrefix(l, "^C") || strings.HasPrefix(l, "\x03") }, re: ctrlCPattern,
		apply: func(m []string, _ map[string]any) (string, bool) { return m[1], true }},
	// A terminal UI's box (k9s): "│ line │".
	{quick: prefix("│ "), re: boxPattern, apply: func(m []string, _ map[string]any) (string, bool) { return m[1], true }},
	// Lemonade's server relaying llama-server: "2026-05-17 12:33:05.655 [Info] (Process) ".
	{quick: func(l string) bool { return len(l) > 27 && l[23] == ' ' && l[24] == '[' && isDigit(l[0]) }, re: lemonadePattern,
		apply: func(m []string, attrs map[string]any) (string, bool) {
			attrs[attrWrapperTime], attrs[attrProcessTitle] = m[1], m[2]
			return m[3], true
		}},
	// A shell's prompt a paste kept before the command or the server's
	// first line ("root@host:~$ python3 -m sglang.launch_server ...",
	// "(venv) [root@localhost dir]# WARNING 11-25 ..."). Classify takes a
	// command after it as a record of its own.
	{quick: shellPromptQuick, re: shellPromptPattern, apply: func(m []string, attrs map[string]any) (string, bool) {
		attrs[attrShellPrompt] = m[1]
		return m[2], true
	}},
	// rsyslog writes a tab as "#011" (its escape of control characters): a
	// Go stack frame's indentation arrives as "#011runtime/proc.go:283".
	{quick: prefix(syslogTab), match: matchSyslogTabs, apply: func(m []string, _ map[string]any) (string, bool) { return m[1], true }},
	// A paste indented as a whole (a list item, a quote's margin): one to
	// three spaces before what starts a server's record. The spaces do not
	// make the line a continuation.
	{quick: func(l string) bool { return len(l) > 8 && l[0] == ' ' }, match: matchIndentedHeader,
		apply: func(m []string, _ map[string]any) (string, bool) { return m[1], true }},
}

// lemonadePattern is Lemonade's prefix: time with milliseconds, level, source.
var lemonadePattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \[(?:Trace|Debug|Info|Warning|Error|Critical)\] \(([\w.-]+)\) (.*)$`)

// shellPromptPattern is a shell prompt: an optional virtualenv or conda
// name, then bash's "[user@host dir]#" or "user@host:dir$" (the user and
// host may be cut: ":~/dir$").
var shellPromptPattern = regexp.MustCompile(`^((?:\([\w.-]+\) )?(?:\[[\w.-]+@[\w.-]+ [^\]]*\]|(?:[\w.-]+@[\w.-]+)?:[~/][^\s$#]*|[\w.-]+@[\w.-]+:[^\s$#]*)[#$]) (\S.*)$`)

// shellPromptQuick: a '$' or '#' in the first 100 bytes after an '@' or ':'.
func shellPromptQuick(l string) bool {
	head := l[:min(len(l), 100)]
	i := strings.IndexAny(head, "$#")
	return i > 0 && strings.ContainsAny(head[:i], "@:")
}

// syslogTab is rsyslog's escape of a tab.
const syslogTab = "#011"

// matchSyslogTabs turns the leading "#011"s of l back into tabs.
func matchSyslogTabs(l string) []string {
	n := 0
	for strings.HasPrefix(l[4*n:], syslogTab) {
		n++
	}
	return []string{l, strings.Repeat("\t", n) + l[4*n:]}
}

// recordHeaderPattern is the start of a record of any of the servers: a
// bracketed date ("[2026-06-15 13:26:40" SGLang), an RFC 3339 time (TGI,
// kubectl), Go's log date ("2024/05/12 06:47:18 " Ollama), a level and
// vLLM's date ("INFO 03-07 09:19:58 "), slog's "time=", a GIN line, a
// process prefix ("(APIServer pid=1) ").
var recordHeaderPattern = regexp.MustCompile(`^(?:\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}|\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} |(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}|time=\d{4}-|\[GIN\] |\([\w.:-]+ (?:[A-Za-z_]+=?\d+ )*pid=\d+\) )`)

// matchIndentedHeader takes one to three leading spaces off l when what
// follows them starts a record (recordHeaderPattern).
func matchIndentedHeader(l string) []string {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	if n > 3 || !recordHeaderPattern.MatchString(l[n:]) {
		return nil
	}
	return []string{l, l[n:]}
}

// matchProcessPrefix is processPattern by hand: "(Name[ rank=N] pid=N[,
// ip=A.B.C.D])[ rest]" gives the whole line, Name, the pid and the rest.
func matchProcessPrefix(l string) []string {
	end := strings.IndexByte(l, ')')
	if end < 0 || !strings.HasPrefix(l, "(") {
		return nil
	}
	inner, rest := l[1:end], l[end+1:]
	if rest != "" {
		if rest[0] != ' ' {
			return nil
		}
		rest = rest[1:]
	}
	if strings.IndexByte(rest, '\n') >= 0 {
		return nil // the pattern's "." stops at a line break
	}
	inner, ip, hasIP := strings.Cut(inner, ", ip=")
	if hasIP && !isDigitsDots(ip) {
		return nil
	}
	fields := strings.Split(inner, " ")
	if len(fields) < 2 || !isProcessName(fields[0]) {
		return nil
	}
	// " key=digits" or " TP0"-like pairs, the last of them pid.
	for _, f := range fields[1:] {
		if !isLetterDigits(f) {
			return nil
		}
	}
	pid, ok := strings.CutPrefix(fields[len(fields)-1], "pid=")
	if !ok {
		return nil
	}
	return []string{l, fields[0], pid, rest}
}

// isProcessName is [\w.:-]+.
func isProcessName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' || c == '-' || c == ':') {
			return false
		}
	}
	return s != ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// isLetterDigits is [A-Za-z_]+=?\d+ (greedy letters, so "TP0", "rank=0").
func isLetterDigits(s string) bool {
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_') {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '=' {
		i++
	}
	return allDigits(s[i:])
}

func isDigitsDots(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '.' {
			return false
		}
	}
	return s != ""
}

// applyExportTime keeps a TGI record's own leading time, and the line's
// indentation after the wrapper's one separator (a traceback frame), unless
// a log export padded its column before the server's own time.
func applyExportTime(m []string, attrs map[string]any) (string, bool) {
	if tgiRecordPattern.MatchString(m[2]) {
		return "", false
	}
	rest := m[2]
	if t := strings.TrimLeft(rest, " \t"); t != "" && isDigit(t[0]) {
		rest = t
	}
	attrs[attrWrapperTime] = m[1]
	return rest, true
}

// rfc3339At is the cheap check for an RFC 3339 date and time at line[i:].
func rfc3339At(i int) func(string) bool {
	return func(l string) bool { return len(l) > i+20 && isDigit(l[i]) && l[i+4] == '-' && l[i+10] == 'T' }
}

// identQuick is the cheap check for "name[tag]: " at the line's start.
func identQuick(l string) bool {
	if len(l) < 6 || !(l[0] >= 'a' && l[0] <= 'z' || l[0] >= 'A' && l[0] <= 'Z') {
		return false
	}
	return strings.Contains(l[:min(len(l), 64)], "]: ")
}

func pyRelayQuick(l string) bool {
	return len(l) > 26 && l[4] == '-' && l[19] == ',' && strings.Contains(l[20:min(len(l), 80)], " - ")
}

func containerTimeQuick(l string) bool {
	i := strings.IndexByte(l, ' ')
	return i > 0 && i <= 64 && rfc3339At(i+1)(l)
}

func viewerTimeQuick(l string) bool {
	return len(l) > 20 && isDigit(l[0]) && l[4] == '-' && l[10] == ' ' && l[13] == ':'
}

func syslogQuick(l string) bool {
	// HH:MM:SS after a date of 5 to 10 bytes.
	for i := 6; i <= 12 && i+8 <= len(l); i++ {
		if l[i-1] == ' ' && l[i+2] == ':' && l[i+5] == ':' && isDigit(l[i]) && isDigit(l[i+7]) {
			return true
		}
	}
	return false
}

func prefix(p string) func(string) bool {
	return func(l string) bool { return strings.HasPrefix(l, p) }
}

func contains(p string) func(string) bool {
	return func(l string) bool { return strings.Contains(l, p) }
}

// putInt records a decimal capture as an int attribute; an empty one (an
// optional group that did not match) is left out.
func putInt(attrs map[string]any, key, digits string) {
	if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
		attrs[key] = n
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// unwrapConfig builds the unwrap operator. Like the fields operator it is
// built in Go, not looked up in stanza's registry.
type unwrapConfig struct {
	helper.TransformerConfig
}

func newUnwrapConfig() operator.Config {
	return operator.NewConfig(&unwrapConfig{TransformerConfig: helper.NewTransformerConfig(unwrapOperatorID, unwrapOperatorID)})
}

func (c *unwrapConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	return &unwrapOperator{TransformerOperator: t}, nil
}

type unwrapOperator struct {
	helper.TransformerOperator
}

func (o *unwrapOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	return o.ProcessBatchWithTransform(ctx, entries, o.transform)
}

func (o *unwrapOperator) Process(ctx context.Context, e *entry.Entry) error {
	return o.ProcessWith(ctx, e, o.transform)
}

// transform rewrites a string body without its wrappers, keeping the line
// as read in log.record.original.
func (o *unwrapOperator) transform(e *entry.Entry) error {
	body, ok := e.Body.(string)
	if !ok {
		return nil
	}
	if e.Attributes == nil {
		e.Attributes = map[string]any{}
	}
	if line := unwrap(body, e.Attributes); line != body {
		e.Attributes[attrOriginal] = body
		e.Body = line
	}
	return nil
}

func quotedLineQuick(l string) bool { return len(l) > 3 && l[0] == '>' && l[1] == ' ' }

// pinoLine is the part of a pino JSON line the unwrap step reads.
type pinoLine struct {
	Level    *int    `json:"level"`
	Time     *int64  `json:"time"`
	PID      int     `json:"pid"`
	Hostname string  `json:"hostname"`
	Msg      *string `json:"msg"`
}

// matchPino gives the time (RFC 3339), host, pid and message of a pino
// line, or nil for any other line.
func matchPino(l string) []string {
	var p pinoLine
	if json.Unmarshal([]byte(l), &p) != nil || p.Level == nil || p.Time == nil || p.Msg == nil {
		return nil
	}
	msg := strings.TrimRight(*p.Msg, "\r\n")
	if msg == "" {
		return nil
	}
	pid := ""
	if p.PID > 0 {
		pid = strconv.Itoa(p.PID)
	}
	return []string{l, time.UnixMilli(*p.Time).UTC().Format(time.RFC3339Nano), p.Hostname, pid, msg}
}
