// Package ottl is the anchor benchmark of the llm_semconv processor: contrib's
// transformprocessor at v0.161.0 (OTTL cannot be built at the project's
// collector release) running an OTTL statement set equivalent to the renames
// of llm_semconv that OTTL can express, fed the same OTLP inputs as
// processors/llmsemconvprocessor's BenchmarkNormalize. It is its own module so
// that its release never mixes with the distribution's.
package ottl
