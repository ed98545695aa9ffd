package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/transformer/recombine"
)

// foldOperatorID is the operator that folds continuation lines (tracebacks,
// panics, wrapped dumps) into the record they continue.
const foldOperatorID = "inference_log_fold"

// Bounds of one folded record: lines and bytes. A longer traceback is cut
// into several records; no line is lost.
const (
	foldMaxLines = 500
	foldMaxBytes = 256 << 10
)

var (
	// foldFlush is how long a record may take to arrive before it is sent
	// as it is: the recombine operator flushes a record once its first line
	// is this old (and the last record of a file waits this long for a
	// continuation). Long enough for a traceback that a busy tailer reads
	// over several polls; stanza's own default.
	// (The tests, which write whole files at once, use a shorter one.)
	foldFlush = 5 * time.Second
)

// newFoldConfig is a recombine operator that starts a record at every line
// for which isFirst (an expression built around the preset's pattern, named
// by field) holds and appends the other lines to it, one source (file) at a
// time.
func newFoldConfig(isFirst, field, pattern string) (operator.Config, error) {
	if _, err := regexp.Compile(pattern); err != nil {
		return operator.Config{}, fmt.Errorf("%s: %w", field, err)
	}
	if strings.Contains(pattern, "`") {
		return operator.Config{}, fmt.Errorf("%s: a backquote cannot be used in the pattern %q", field, pattern)
	}
	c := recombine.NewConfigWithID(foldOperatorID)
	c.IsFirstEntry = isFirst
	c.CombineField = entry.NewBodyField()
	c.CombineWith = "\n"
	c.SourceIdentifier = entry.NewAttributeField(attrFileName)
	c.MaxBatchSize = foldMaxLines
	c.MaxLogSize = helper.ByteSize(foldMaxBytes)
	c.ForceFlushTimeout = foldFlush
	return operator.NewConfig(c), nil
}
