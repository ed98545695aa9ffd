package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Self-metrics of the span_guard processor that another component reads.
// span_guard creates them on its TelemetrySettings meter; load_report reads
// them (as exported by the collector's own telemetry, or scraped by
// Prometheus, which adds PrometheusCounterSuffix) for the report's span-loss
// line. Each carries AttrSpanGuardReason, except spans_received.
const (
	SpanGuardMetricSpansReceived = "otelcol_span_guard_spans_received"
	SpanGuardMetricSpansDropped  = "otelcol_span_guard_spans_dropped"
	SpanGuardMetricSpansRefused  = "otelcol_span_guard_spans_refused"

	// AttrSpanGuardReason is why a span was dropped, folded or refused.
	AttrSpanGuardReason = "reason"
)

// PrometheusCounterSuffix is what a Prometheus scrape appends to the name of
// a monotonic counter.
const PrometheusCounterSuffix = "_total"

// The summary span span_guard adds to every trace it changed, and the
// attributes of it that load_report reads (to account for the spans removed
// when span_guard's own metrics are not in the pipeline). span_guard writes
// more span_guard.* attributes on it; all of them start with
// SpanGuardAttrPrefix.
const (
	SpanGuardSummarySpanName = "span_guard.summary"
	SpanGuardAttrPrefix      = "span_guard."

	// SpanGuardAttrSpansReceived: spans of the trace the processor received.
	SpanGuardAttrSpansReceived = "span_guard.spans.received"
	// SpanGuardAttrSpansFolded: spans folded into composite spans.
	SpanGuardAttrSpansFolded = "span_guard.spans.folded"
	// SpanGuardAttrSpansDropped: spans dropped, all reasons together.
	SpanGuardAttrSpansDropped = "span_guard.spans.dropped"
	// SpanGuardAttrSpansDroppedPrefix + reason: spans dropped for one reason.
	SpanGuardAttrSpansDroppedPrefix = "span_guard.spans.dropped."
)
