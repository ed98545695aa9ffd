package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

// Self-telemetry instrument names.
const (
	metricSpans        = "otelcol_llm_semconv_spans"
	metricLogRecords   = "otelcol_llm_semconv_log_records"
	metricAttributes   = "otelcol_llm_semconv_attributes"
	metricContent      = "otelcol_llm_semconv_content"
	metricContentBytes = "otelcol_llm_semconv_content_bytes"
	metricRedactions   = "otelcol_llm_semconv_redactions"
)

const dialectNone = "none"

type telemetry struct {
	spans, logs, attrs, content, contentBytes, redactions metric.Int64Counter

	// Attribute sets are built once: recording allocates nothing.
	itemSets [][numItemOutcomes]metric.MeasurementOption
	attrSets [][numAttrOutcomes]metric.MeasurementOption
	contSets [numGroups][numActions]metric.MeasurementOption
	patSets  map[string]metric.MeasurementOption
	ndial    int

	statsPool sync.Pool
}

func newTelemetry(set component.TelemetrySettings, dialects []string, patterns []string) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{ndial: len(dialects), patSets: map[string]metric.MeasurementOption{}}
	t.spans = b.Counter(metricSpans, "{span}",
		"Spans seen by the llm_semconv processor, by detected source dialect and outcome (normalized, partially_mapped, unchanged).")
	t.logs = b.Counter(metricLogRecords, "{record}",
		"Log records seen by the llm_semconv processor, by detected source dialect and outcome.")
	t.attrs = b.Counter(metricAttributes, "{attribute}",
		"Foreign attributes handled, by dialect and outcome (mapped, unmapped, conflict, invalid_value); unmapped, conflicting and invalid ones stay on the item.")
	t.content = b.Counter(metricContent, "{attribute}",
		"Content attributes changed by the content policy, by group and action (truncated, redacted, hashed, dropped).")
	t.contentBytes = b.Counter(metricContentBytes, "By",
		"Bytes of content removed or replaced by the content policy, by group and action.")
	t.redactions = b.Counter(metricRedactions, "{match}",
		"Redaction pattern matches replaced, by pattern.")
	if err := b.Err(); err != nil {
		return nil, err
	}
	names := append(append([]string{}, dialects...), dialectNone)
	t.itemSets = make([][numItemOutcomes]metric.MeasurementOption, len(names))
	t.attrSets = make([][numAttrOutcomes]metric.MeasurementOption, len(names))
	for i, d := range names {
		for o := 0; o < numItemOutcomes; o++ {
			t.itemSets[i][o] = metric.WithAttributeSet(attribute.NewSet(attribute.String("dialect", d), attribute.String("outcome", itemOutcomeNames[o])))
		}
		for o := 0; o < numAttrOutcomes; o++ {
			t.attrSets[i][o] = metric.WithAttributeSet(attribute.NewSet(attribute.String("dialect", d), attribute.String("outcome", attrOutcomeNames[o])))
		}
	}
	for g := 0; g < int(numGroups); g++ {
		for a := 0; a < numActions; a++ {
			t.contSets[g][a] = metric.WithAttributeSet(attribute.NewSet(attribute.String("group", groupNames[g]), attribute.String("action", actionNames[a])))
		}
	}
	for _, p := range patterns {
		t.patSets[p] = metric.WithAttributeSet(attribute.NewSet(attribute.String("pattern", p)))
	}
	return t, nil
}

// batchStats counts one batch; it is flushed to the instruments once.
type batchStats struct {
	items        [][numItemOutcomes]int64
	attrs        [][numAttrOutcomes]int64
	contentN     [numGroups][numActions]int64
	contentBytes [numGroups][numActions]int64
	redactions   map[string]int64
	none         int
}

func newBatchStats(ndial int) *batchStats {
	return &batchStats{
		items:      make([][numItemOutcomes]int64, ndial+1),
		attrs:      make([][numAttrOutcomes]int64, ndial+1),
		redactions: map[string]int64{},
		none:       ndial,
	}
}

func (b *batchStats) reset() {
	clear(b.items)
	clear(b.attrs)
	b.contentN = [numGroups][numActions]int64{}
	b.contentBytes = [numGroups][numActions]int64{}
	clear(b.redactions)
}

func (b *batchStats) idx(d int) int {
	if d < 0 || d >= b.none {
		return b.none
	}
	return d
}

func (b *batchStats) item(d, outcome int) { b.items[b.idx(d)][outcome]++ }

func (b *batchStats) attr(d, outcome int) { b.attrs[b.idx(d)][outcome]++ }

func (b *batchStats) content(g contentGroup, action, bytes int) {
	b.contentN[g][action]++
	b.contentBytes[g][action] += int64(bytes)
}

func (b *batchStats) redaction(pattern string) { b.redactions[pattern]++ }

func (t *telemetry) get() *batchStats {
	if s, ok := t.statsPool.Get().(*batchStats); ok {
		s.reset()
		return s
	}
	return newBatchStats(t.ndial)
}

// flush records a batch's counts; logs selects the log-record counter.
func (t *telemetry) flush(ctx context.Context, b *batchStats, logs bool) {
	items := t.spans
	if logs {
		items = t.logs
	}
	for d := range b.items {
		for o, n := range b.items[d] {
			if n > 0 {
				items.Add(ctx, n, t.itemSets[d][o])
			}
		}
		for o, n := range b.attrs[d] {
			if n > 0 {
				t.attrs.Add(ctx, n, t.attrSets[d][o])
			}
		}
	}
	for g := range b.contentN {
		for a, n := range b.contentN[g] {
			if n > 0 {
				t.content.Add(ctx, n, t.contSets[g][a])
				t.contentBytes.Add(ctx, b.contentBytes[g][a], t.contSets[g][a])
			}
		}
	}
	for p, n := range b.redactions {
		opt, ok := t.patSets[p]
		if !ok {
			opt = metric.WithAttributeSet(attribute.NewSet(attribute.String("pattern", p)))
		}
		t.redactions.Add(ctx, n, opt)
	}
	t.statsPool.Put(b)
}
