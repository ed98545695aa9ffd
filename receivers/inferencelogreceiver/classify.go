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
	return o.fast != nil && o.fast(e)
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
