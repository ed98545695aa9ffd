package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"
	"regexp"
	"strconv"
	"strings"

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
)

// The wrappers that log collection puts around a server's own lines, in the
// order they are peeled off (outermost first). Each is tried only when a
// cheap check of the line passes, so a plain line costs a few comparisons.
var (
	// ANSI colour codes, as escapes and as the literal text that terminals,
	// journald exports and issue pastes leave: ESC[..m, #033[..m, ^[[..m,
	// \033[..m, \x1b[..m, \u001b[..m.
	ansiPattern = regexp.MustCompile(`(?:\x1b|#033|\^\[|\\033|\\x1b|\\u001b)\[[0-9;]*[A-Za-z]`)
	// The same codes with the escape byte lost on the way (a paste, a log
	// UI): "[2m", "[0m"; taken for codes only on a line holding a reset,
	// with the space that replaced the escape.
	bareANSIPattern = regexp.MustCompile(` ?\[[0-9;]{0,8}m`)
	// kubectl logs --timestamps, docker logs -t, log exports (CloudWatch,
	// Loki): an RFC 3339 time and white space before the line.
	kubeTimePattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))[ \t](.*\S.*)$`)
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
	// The month may be localized ("9月 02 14:46:54"); the host may be empty
	// and the tag end with a colon ("  llama-Qwen:[1351]: "); an empty
	// message leaves nothing after the colon.
	syslogPattern = regexp.MustCompile(`^(?:[A-Z][a-z]{2}|\d{1,2}月) [ \d]\d \d{2}:\d{2}:\d{2} (\S*) +([\w./@:-]+?)(?:\[(\d+)\])?:(?: (.*))?$`)
	// A supervisor's PID column ("[42027] ").
	pidColumnPattern = regexp.MustCompile(`^\[(\d+)\] (.*)$`)
	// syslog's repeat line: "message repeated N times: [ line ]".
	repeatPattern = regexp.MustCompile(`^message repeated (\d+) times: \[ ?(.*?) ?\]$`)
	// torch.distributed's per-rank prefix: "[rank0]: ".
	rankPattern = regexp.MustCompile(`^\[rank(\d+)\]: ?(.*)$`)
	// A process's prefix, from vLLM's multiprocessing ("(APIServer pid=1) ",
	// "(EngineCore_DP0 pid=2) ", "(VllmWorker rank=0 pid=3) ") or Ray
	// ("(WorkerDict pid=4, ip=10.0.0.5) ").
	processPattern = regexp.MustCompile(`^\(([\w.-]+)(?: rank=\d+)? pid=(\d+)(?:, ip=[\d.]+)?\)(?: (.*))?$`)
	// Ray's de-duplication suffix: " [repeated 3x across cluster]".
	rayRepeatPattern = regexp.MustCompile(`^(.*) \[repeated (\d+)x across cluster\]$`)
)

// unwrap peels the known wrappers off line and records what they said in
// attrs. It returns the server's own line.
func unwrap(line string, attrs map[string]any) string {
	if hasANSI(line) {
		line = ansiPattern.ReplaceAllString(line, "")
	}
	if strings.Contains(line, "[0m") {
		line = bareANSIPattern.ReplaceAllString(line, "")
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
		strings.Contains(s, "x1b[") || strings.Contains(s, "u001b[")
}

// unwrapOnce peels one wrapper off line, if it has one: the first peeler
// that recognizes its wrapper wins.
func unwrapOnce(line string, attrs map[string]any) (string, bool) {
	for _, peel := range peelers {
		if rest, ok := peel(line, attrs); ok {
			return rest, true
		}
	}
	return line, false
}

// A peeler recognizes one wrapper (a cheap check first, then its pattern)
// and returns the line without it.
type peeler func(line string, attrs map[string]any) (string, bool)

var peelers = []peeler{peelExportTime, peelPyRelay, peelContainerTime, peelViewerTime, peelDJL, peelPIDColumn, peelSyslog, peelRepeat, peelProcess, peelRayRepeat, peelRank, peelCompose, peelBox}

func peelExportTime(line string, attrs map[string]any) (string, bool) {
	if len(line) <= 20 || line[4] != '-' || line[10] != 'T' || !isDigit(line[0]) {
		return "", false
	}
	m := kubeTimePattern.FindStringSubmatch(line)
	if m == nil || tgiRecordPattern.MatchString(m[2]) {
		return "", false
	}
	// One separator is the wrapper's; more white space is the line's own
	// indentation (a traceback frame), unless a log export padded its
	// column before the server's own time.
	rest := m[2]
	if t := strings.TrimLeft(rest, " \t"); t != "" && isDigit(t[0]) {
		rest = t
	}
	attrs[attrWrapperTime] = m[1]
	return rest, true
}

func peelPyRelay(line string, attrs map[string]any) (string, bool) {
	if len(line) <= 26 || line[4] != '-' || line[19] != ',' || !strings.Contains(line[20:min(len(line), 80)], " - ") {
		return "", false
	}
	m := pyRelayPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrWrapperTime], attrs[attrRelayLogger] = m[1], m[2]
	return m[3], true
}

func peelContainerTime(line string, attrs map[string]any) (string, bool) {
	i := strings.IndexByte(line, ' ')
	if i <= 0 || i > 64 || len(line) < i+21 || line[i+5] != '-' || line[i+11] != 'T' {
		return "", false
	}
	m := containerTimePattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrContainerName] = m[1]
	return m[2], true
}

func peelViewerTime(line string, attrs map[string]any) (string, bool) {
	if len(line) <= 20 || line[4] != '-' || line[10] != ' ' || line[13] != ':' || !isDigit(line[0]) {
		return "", false
	}
	m := viewerTimePattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrWrapperTime] = strings.TrimSuffix(strings.TrimSuffix(m[1], "|"), " ")
	return m[2], true
}

func peelDJL(line string, attrs map[string]any) (string, bool) {
	if !strings.Contains(line, "] PyProcess - ") {
		return "", false
	}
	m := djlPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrProcessTitle] = m[1]
	return m[2], true
}

func peelPIDColumn(line string, attrs map[string]any) (string, bool) {
	if len(line) < 4 || line[0] != '[' || !isDigit(line[1]) {
		return "", false
	}
	m := pidColumnPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	putInt(attrs, attrProcessPID, m[1])
	return m[2], true
}

func peelSyslog(line string, attrs map[string]any) (string, bool) {
	if len(line) <= 16 || !(line[3] == ' ' && line[6] == ' ' && line[9] == ':' || strings.Contains(line[:6], "月")) {
		return "", false
	}
	m := syslogPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrHostName], attrs[attrProcessName] = m[1], m[2]
	putInt(attrs, attrProcessPID, m[3])
	return m[4], true
}

func peelRepeat(line string, attrs map[string]any) (string, bool) {
	if !strings.HasPrefix(line, "message repeated ") {
		return "", false
	}
	m := repeatPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	putInt(attrs, attrRepeated, m[1])
	return m[2], true
}

func peelProcess(line string, attrs map[string]any) (string, bool) {
	if !strings.HasPrefix(line, "(") || !strings.Contains(line, " pid=") {
		return "", false
	}
	m := processPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrProcessTitle] = m[1]
	putInt(attrs, attrProcessPID, m[2])
	return m[3], true
}

func peelRayRepeat(line string, attrs map[string]any) (string, bool) {
	if !strings.HasSuffix(line, " across cluster]") {
		return "", false
	}
	m := rayRepeatPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	putInt(attrs, attrRepeated, m[2])
	return m[1], true
}

func peelRank(line string, attrs map[string]any) (string, bool) {
	if !strings.HasPrefix(line, "[rank") {
		return "", false
	}
	m := rankPattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	putInt(attrs, attrRank, m[1])
	return m[2], true
}

func peelCompose(line string, attrs map[string]any) (string, bool) {
	if i := strings.IndexByte(line, '|'); i <= 0 || i >= 64 {
		return "", false
	}
	m := composePattern.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	attrs[attrContainerName] = m[1] + m[2] + m[3]
	return m[4], true
}

// peelBox removes a terminal UI's box (k9s): "│ line │".
func peelBox(line string, _ map[string]any) (string, bool) {
	rest, ok := strings.CutPrefix(line, "│ ")
	if !ok {
		return "", false
	}
	return strings.TrimRight(strings.TrimSuffix(strings.TrimRight(rest, " "), "│"), " "), true
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
