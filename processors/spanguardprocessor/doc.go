// Package spanguardprocessor implements the span_guard processor: a traces
// batcher bounded by span count and by protobuf-encoded bytes, with per-trace
// budgets and a degradation ladder (sibling compression, attribute truncation,
// span dropping with re-parenting, a summary span, refusal under memory
// pressure) that accounts for every span it does not forward.
//
// Conservation law, kept by the processor's own metrics:
//
//	received = forwarded + folded + dropped + refused (+ held, while a batch is open)
package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"
