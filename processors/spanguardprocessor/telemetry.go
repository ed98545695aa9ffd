package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

// attrReason is the attribute of every reason below (load_report reads it on
// the spans_dropped and spans_refused counters).
const attrReason = genai.AttrSpanGuardReason

// Reasons carried by the removal counters. Every span the processor does not
// forward is counted under exactly one of them.
const (
	reasonSiblingCompression = "sibling_compression"  // folded
	reasonSpanBudget         = "span_budget"          // dropped
	reasonByteBudget         = "byte_budget"          // dropped
	reasonSpanTooLarge       = "span_too_large"       // dropped
	reasonExportFailed       = "export_failed"        // dropped
	reasonMemoryLimit        = "memory_limit"         // refused
	reasonRateLimit          = "rate_limit"           // refused
	reasonMetadataLimit      = "metadata_cardinality" // refused
)

// dropReasons indexes the per-trace drop counters kept for the summary span.
var dropReasons = [...]string{reasonSpanBudget, reasonByteBudget, reasonSpanTooLarge}

const (
	dropSpanBudget = iota
	dropByteBudget
	dropTooLarge
	numDropReasons
)

// Batch send triggers.
const (
	triggerSpans    = "max_batch_spans"
	triggerBytes    = "max_batch_bytes"
	triggerTimeout  = "flush_timeout"
	triggerShutdown = "shutdown"
)

type telemetry struct {
	received, forwarded, folded, dropped, refused metric.Int64Counter
	summaries, composites, reparented             metric.Int64Counter
	truncatedValues, itemsDropped                 metric.Int64Counter
	tracesOverBudget, tracesReleased              metric.Int64Counter
	batches                                       metric.Int64Counter
	batchBytes                                    metric.Int64Histogram
	registration                                  metric.Registration

	attrs map[attrKey]metric.MeasurementOption
}

type attrKey struct{ key, value string }

func newTelemetry(set component.TelemetrySettings, g *spanGuard) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{attrs: map[attrKey]metric.MeasurementOption{}}
	counter := b.Counter
	t.received = counter(genai.SpanGuardMetricSpansReceived, "{span}", "Spans handed to the span_guard processor.")
	t.forwarded = counter("otelcol_span_guard_spans_forwarded", "{span}", "Received spans accepted by the next consumer; a composite span counts once.")
	t.folded = counter("otelcol_span_guard_spans_folded", "{span}", "Spans folded into composite spans, by reason.")
	t.dropped = counter(genai.SpanGuardMetricSpansDropped, "{span}", "Spans removed by the processor or refused by the next consumer, by reason.")
	t.refused = counter(genai.SpanGuardMetricSpansRefused, "{span}", "Spans refused with an error returned to the caller, by reason.")
	t.summaries = counter("otelcol_span_guard_summary_spans", "{span}", "Summary spans added, one per trace the processor changed, by outcome.")
	t.composites = counter("otelcol_span_guard_composite_spans", "{span}", "Composite spans created by sibling compression.")
	t.reparented = counter("otelcol_span_guard_spans_reparented", "{span}", "Kept spans re-parented to their nearest kept ancestor.")
	t.truncatedValues = counter("otelcol_span_guard_attribute_values_truncated", "{value}", "Attribute values cut to span_limits.max_attribute_bytes.")
	t.itemsDropped = counter("otelcol_span_guard_span_items_dropped", "{item}", "Attributes, events and links removed by the span_limits caps, by kind.")
	t.tracesOverBudget = counter("otelcol_span_guard_traces_over_budget", "{trace}", "Traces that went over their budget and entered the degradation ladder.")
	t.tracesReleased = counter("otelcol_span_guard_traces_released", "{trace}", "Trace states released, by reason (window, capacity, shutdown).")
	t.batches = counter("otelcol_span_guard_batches_sent", "{batch}", "Batches handed to the next consumer, by trigger.")
	t.batchBytes = b.IntHistogram("otelcol_span_guard_batch_bytes", "By",
		"Encoded size of the batches sent (upper bound the batcher enforces).",
		1<<10, 16<<10, 64<<10, 256<<10, 512<<10, 1<<20, 2<<20, 3<<20, 4<<20)

	gauge := b.ObservableGauge
	heldSpans := gauge("otelcol_span_guard_held_spans", "{span}", "Received spans held in open batches.")
	heldBytes := gauge("otelcol_span_guard_held_bytes", "By", "Encoded bytes held in open batches.")
	traces := gauge("otelcol_span_guard_traces_tracked", "{trace}", "Trace states held for budgets.")
	stateBytes := gauge("otelcol_span_guard_trace_state_bytes", "By", "Accounted memory of the trace states.")
	if err := b.Err(); err != nil {
		return nil, err
	}
	reg, err := b.Meter().RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := g.snapshot()
		o.ObserveInt64(heldSpans, s.heldSpans)
		o.ObserveInt64(heldBytes, s.heldBytes)
		o.ObserveInt64(traces, s.traces)
		o.ObserveInt64(stateBytes, s.stateBytes)
		return nil
	}, heldSpans, heldBytes, traces, stateBytes)
	if err != nil {
		return nil, err
	}
	t.registration = reg
	return t, nil
}

// with returns the measurement option for one attribute, cached.
func (t *telemetry) with(key, value string) metric.MeasurementOption {
	if o, ok := t.attrs[attrKey{key, value}]; ok {
		return o
	}
	return metric.WithAttributeSet(attribute.NewSet(attribute.String(key, value)))
}

// warm fills the attribute cache; called once before the processor is shared.
func (t *telemetry) warm() {
	for _, r := range []string{reasonSiblingCompression, reasonSpanBudget, reasonByteBudget, reasonSpanTooLarge,
		reasonExportFailed, reasonMemoryLimit, reasonRateLimit, reasonMetadataLimit, reasonShutdown} {
		t.attrs[attrKey{attrReason, r}] = metric.WithAttributeSet(attribute.NewSet(attribute.String(attrReason, r)))
	}
	for _, r := range []string{reasonWindow, reasonCapacity, reasonShutdown} {
		t.attrs[attrKey{attrReason, r}] = metric.WithAttributeSet(attribute.NewSet(attribute.String(attrReason, r)))
	}
	for _, k := range []string{"attribute", "event", "link"} {
		t.attrs[attrKey{"kind", k}] = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", k)))
	}
	for _, k := range []string{triggerSpans, triggerBytes, triggerTimeout, triggerShutdown} {
		t.attrs[attrKey{"trigger", k}] = metric.WithAttributeSet(attribute.NewSet(attribute.String("trigger", k)))
	}
	for _, k := range []string{"forwarded", "export_failed", "too_large"} {
		t.attrs[attrKey{"outcome", k}] = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", k)))
	}
}

func (t *telemetry) shutdown() error {
	if t.registration != nil {
		return t.registration.Unregister()
	}
	return nil
}
