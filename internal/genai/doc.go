// Package genai holds the OpenTelemetry GenAI semantic-convention facts that
// more than one otelcol-llm component needs: attribute names, well-known
// attribute values, metric names and units per convention target, and the
// histogram bucket boundaries the conventions advise.
//
// It is data, not behaviour: constants and tables, with no dependency on the
// collector. Two targets are described: TargetV1_41 (the last tagged core
// semantic-conventions release that carried GenAI) and TargetLatest (the
// moving main branch of the dedicated semantic-conventions-genai repository).
package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"
