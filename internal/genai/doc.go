// Package genai is the contract between otelcol-llm components: every name
// that one component writes and another reads is defined here once, so that
// renaming it in the writer breaks the reader's build instead of silently its
// behaviour. It holds:
//
//   - the OpenTelemetry GenAI semantic-convention facts that more than one
//     component needs: attribute names, well-known values, metric names and
//     units per convention target, and the advised histogram bucket
//     boundaries (attributes.go, metrics.go);
//   - the names of the project's own telemetry, grouped by the component that
//     writes them, each documented with who reads it: llm_metrics' llm.*
//     golden signals (llmmetrics.go), span_guard's self-metrics and summary
//     span (spanguard.go), llm_loadgen's run, shard, schedule and chunk names
//     (loadgen.go), llm_semconv's otelcol_llm.* attributes
//     (attributes_semconv.go); and the foreign-dialect and hardware names that
//     cross components (dialects.go, hardware.go);
//   - the few rules the components must apply alike: which operations are
//     model calls (IsInference), how a span's GenAI facts are read
//     (SpanFacts), the TPOT formula (TimePerOutputToken), and the
//     explicit-bucket histogram (ExplicitHistogram).
//
// Two convention targets are described: TargetV1_41 (the last tagged core
// semantic-conventions release that carried GenAI) and TargetLatest (the
// moving main branch of the dedicated semantic-conventions-genai repository).
// The package depends on pdata only, never on a component.
package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"
