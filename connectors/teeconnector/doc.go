// Package teeconnector implements the tee connector: it hands every batch of
// spans to one or more reader pipelines (connectors that derive metrics from
// the spans and keep nothing, such as llm_metrics) and then the same batch,
// uncopied, to one owner pipeline that may modify it (span_guard). The
// collector's own fan-out copies a batch whenever it feeds a consumer that
// modifies data next to one that only reads; on a gateway that copy is a
// sixth of the CPU spent per span.
package teeconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector"
