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
	viewerTimePattern = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?) \| (.*)$`)
	// DJL Serving (SageMaker LMI) relaying a Python worker's output:
	// "[INFO ] PyProcess - W-210-model-stdout: ".
	djlPattern = regexp.MustCompile(`^\[?[A-Z]+ ?\] PyProcess - ([\w.-]+)-std(?:out|err): (.*)$`)
	// A TGI text record starts with its own RFC 3339 time and a level: that
	// time is the record's, not a wrapper's.
	tgiRecordPattern = regexp.MustCompile(`^ *(?:TRACE|DEBUG|INFO|WARN|ERROR) +[a-z][\w-]*(?:[:{])`)
	// docker compose: "service-1  | " (v2), "service_1  | " (v1), a
	// container name ("sglang  | ") or a bracketed one ("[tgi] | ").
	composePattern = regexp.MustCompile(`^(?:([A-Za-z0-9][\w.-]*?[-_]\d+) *|([A-Za-z0-9][\w.-]*) +|\[([\w.-]+)\] +)\| ?(.*)$`)
	// journald / syslog: "Mon DD HH:MM:SS host tag[pid]: ".
	syslogPattern = regexp.MustCompile(`^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} (\S+) ([\w./@-]+?)(?:\[(\d+)\])?: (.*)$`)
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

// unwrapOnce peels one wrapper off line, if it has one.
func unwrapOnce(line string, attrs map[string]any) (string, bool) {
	switch {
	case len(line) > 20 && line[4] == '-' && line[10] == 'T' && isDigit(line[0]):
		if m := kubeTimePattern.FindStringSubmatch(line); m != nil && !tgiRecordPattern.MatchString(m[2]) {
			// One separator is the wrapper's; more white space is the
			// line's own indentation (a traceback frame), unless a log
			// export padded its column before the server's own time.
			rest := m[2]
			if t := strings.TrimLeft(rest, " \t"); t != "" && isDigit(t[0]) {
				rest = t
			}
			attrs[attrWrapperTime] = m[1]
			return rest, true
		}
	case len(line) > 26 && line[4] == '-' && line[10] == ' ' && line[13] == ':' && isDigit(line[0]):
		if m := viewerTimePattern.FindStringSubmatch(line); m != nil {
			attrs[attrWrapperTime] = m[1]
			return m[2], true
		}
	case strings.Contains(line, "] PyProcess - "):
		if m := djlPattern.FindStringSubmatch(line); m != nil {
			attrs[attrProcessTitle] = m[1]
			return m[2], true
		}
	case len(line) > 16 && line[3] == ' ' && line[6] == ' ' && line[9] == ':':
		if m := syslogPattern.FindStringSubmatch(line); m != nil {
			attrs[attrHostName], attrs[attrProcessName] = m[1], m[2]
			if pid, err := strconv.ParseInt(m[3], 10, 64); err == nil {
				attrs[attrProcessPID] = pid
			}
			return m[4], true
		}
	case strings.HasPrefix(line, "message repeated "):
		if m := repeatPattern.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			attrs[attrRepeated] = n
			return m[2], true
		}
	case strings.HasPrefix(line, "(") && strings.Contains(line, " pid="):
		if m := processPattern.FindStringSubmatch(line); m != nil {
			attrs[attrProcessTitle] = m[1]
			if pid, err := strconv.ParseInt(m[2], 10, 64); err == nil {
				attrs[attrProcessPID] = pid
			}
			return m[3], true
		}
	case strings.HasSuffix(line, " across cluster]"):
		if m := rayRepeatPattern.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			attrs[attrRepeated] = n
			return m[1], true
		}
	case strings.HasPrefix(line, "[rank"):
		if m := rankPattern.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			attrs[attrRank] = n
			return m[2], true
		}
	}
	if i := strings.IndexByte(line, '|'); i > 0 && i < 64 {
		if m := composePattern.FindStringSubmatch(line); m != nil {
			attrs[attrContainerName] = m[1] + m[2] + m[3]
			return m[4], true
		}
	}
	// A terminal UI's box (k9s): "│ line │".
	if rest, ok := strings.CutPrefix(line, "│ "); ok {
		return strings.TrimRight(strings.TrimSuffix(strings.TrimRight(rest, " "), "│"), " "), true
	}
	return line, false
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
