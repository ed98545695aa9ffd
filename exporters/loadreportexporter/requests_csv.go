package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// csvFileName is the per-request table written next to report.json.
const csvFileName = "requests.csv"

// csvFlushBytes is how much the table buffers before it is appended to the
// file; it is also appended at every report write.
const csvFlushBytes = 256 << 10

// csvRow is what one request span offers to the table's columns.
type csvRow struct {
	sp         ptrace.Span
	attrs, res pcommon.Map
	facts      *genai.SpanFacts // the span's, as the report read them
	key        groupKey
	cancelled  []string
}

// csvColumns are the columns of requests.csv, in order; the README documents
// each. Times are in seconds; an empty cell means the span did not carry it.
var csvColumns = []struct {
	name  string
	value func(c *csvRow) string
}{
	{"run_id", func(c *csvRow) string { return resStr(c, genai.AttrLoadgenRunID) }},
	{"shard_index", func(c *csvRow) string { return resStr(c, genai.AttrLoadgenShardIndex) }},
	{"sequence", func(c *csvRow) string { return attrCell(c.attrs, genai.AttrLoadgenSequence) }},
	{"trace_id", func(c *csvRow) string { return c.sp.TraceID().String() }},
	{"span_id", func(c *csvRow) string { return c.sp.SpanID().String() }},
	{"start_time", func(c *csvRow) string { return c.sp.StartTimestamp().AsTime().UTC().Format(time.RFC3339Nano) }},
	{"target", func(c *csvRow) string { return c.key.Target }},
	{"model", func(c *csvRow) string { return c.key.Model }},
	{"scenario", func(c *csvRow) string { return c.key.Scenario }},
	{"outcome", func(c *csvRow) string { return outcomeOf(c) }},
	{"error_type", func(c *csvRow) string { return c.facts.ErrorType }},
	{"http_status", func(c *csvRow) string { return attrCell(c.attrs, genai.AttrHTTPResponseStatusCode) }},
	{"target_rps", func(c *csvRow) string { return attrCell(c.attrs, genai.AttrLoadgenTargetRate) }},
	{"queue_s", func(c *csvRow) string { return attrCell(c.attrs, genai.AttrLoadgenQueueTime) }},
	{"ttft_s", func(c *csvRow) string {
		return attrCell(c.attrs, genai.AttrTimeToFirstChunk, genai.VLLMAttrTimeToFirstToken)
	}},
	{"e2e_s", func(c *csvRow) string { return secondsCell(spanSeconds(c.sp)) }},
	{"tpot_s", func(c *csvRow) string { return tpotCell(c) }},
	{"itl_mean_s", func(c *csvRow) string { return attrCell(c.attrs, genai.AttrLoadgenITLMean) }},
	{"itl_max_s", func(c *csvRow) string { return attrCell(c.attrs, genai.AttrLoadgenITLMax) }},
	{"input_tokens", func(c *csvRow) string {
		return attrCell(c.attrs, genai.AttrUsageInputTokens, genai.LegacyAttrUsagePromptTokens)
	}},
	{"output_tokens", func(c *csvRow) string {
		return attrCell(c.attrs, genai.AttrUsageOutputTokens, genai.LegacyAttrUsageCompletionTokens)
	}},
	{"finish_reason", func(c *csvRow) string { return finishReason(c.attrs) }},
}

func resStr(c *csvRow, k string) string { return attrCell(c.res, k) }

// attrCell is the first present attribute of keys as text.
func attrCell(m pcommon.Map, keys ...string) string {
	for _, k := range keys {
		if v, ok := m.Get(k); ok {
			if v.Type() == pcommon.ValueTypeDouble {
				return secondsCell(v.Double())
			}
			return v.AsString()
		}
	}
	return ""
}

func secondsCell(v float64) string { return strconv.FormatFloat(round(v), 'g', -1, 64) }

func spanSeconds(sp ptrace.Span) float64 {
	return float64(int64(sp.EndTimestamp())-int64(sp.StartTimestamp())) / 1e9
}

func outcomeOf(c *csvRow) string {
	switch f := c.facts; {
	case !f.Failed:
		return "ok"
	case isCancelled(f.ErrorType, c.cancelled):
		return "cancelled"
	}
	return "error"
}

// tpotCell is (E2E − TTFT)/(output tokens − 1), as the report computes it.
func tpotCell(c *csvRow) string {
	f := c.facts
	if !f.TTFT.OK || !f.OutputTokens.OK || f.Failed {
		return ""
	}
	tpot, ok := genai.TimePerOutputToken(spanSeconds(c.sp), f.TTFT.S, f.OutputTokens.N)
	if !ok {
		return ""
	}
	return secondsCell(tpot)
}

func finishReason(m pcommon.Map) string {
	v, ok := m.Get(genai.AttrFinishReasons)
	switch {
	case !ok:
		return ""
	case v.Type() == pcommon.ValueTypeSlice && v.Slice().Len() > 0:
		return v.Slice().At(0).AsString()
	case v.Type() == pcommon.ValueTypeStr:
		return v.Str()
	}
	return ""
}

// requestTable buffers the rows of one report's requests.csv and appends
// them to the file; the first append creates (or truncates) it with the
// header.
type requestTable struct {
	buf     bytes.Buffer
	w       *csv.Writer
	started bool
	pending int64 // rows in buf
}

func (t *requestTable) pendingRows() int64 { return t.pending }

// discard drops the buffered rows (after a failed write).
func (t *requestTable) discard() {
	if t.w != nil {
		t.w.Flush()
	}
	t.buf.Reset()
	t.pending = 0
}

func (t *requestTable) add(c *csvRow) {
	if t.w == nil {
		t.w = csv.NewWriter(&t.buf)
	}
	rec := make([]string, len(csvColumns))
	for i, col := range csvColumns {
		rec[i] = col.value(c)
	}
	_ = t.w.Write(rec) // writes to a bytes.Buffer do not fail
	t.pending++
}

// full reports whether the buffer should be appended now.
func (t *requestTable) full() bool {
	if t.w != nil {
		t.w.Flush()
	}
	return t.buf.Len() >= csvFlushBytes
}

// flush appends the buffered rows to dir/requests.csv.
func (t *requestTable) flush(dir string) error {
	if t.w != nil {
		t.w.Flush()
	}
	if t.started && t.buf.Len() == 0 {
		return nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	var head bytes.Buffer
	if !t.started {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		names := make([]string, len(csvColumns))
		for i, col := range csvColumns {
			names[i] = col.name
		}
		hw := csv.NewWriter(&head)
		_ = hw.Write(names)
		hw.Flush()
	}
	f, err := os.OpenFile(filepath.Join(dir, csvFileName), flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(head.Bytes(), t.buf.Bytes()...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	t.started = true
	t.buf.Reset()
	t.pending = 0
	return nil
}
