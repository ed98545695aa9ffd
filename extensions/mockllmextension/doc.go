// Package mockllmextension implements the mock_llm extension: it serves the
// OpenAI-compatible streaming mock of internal/mockllm (latency model,
// capacity and queue model, fault injection, per-request ground truth) from
// inside the collector, so that a demo, `make run` or a test drives
// llm_loadgen against a model endpoint on loopback without a second program.
package mockllmextension // import "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension"
