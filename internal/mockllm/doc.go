// Package mockllm is an OpenAI-compatible inference server for tests, demos
// and benchmarks. It speaks the real wire format over HTTP (chat completions
// and completions, streamed as server-sent events or not, embeddings and the
// model list), applies a per-request latency model, injects faults by
// configuration or per request, and records the ground truth of every
// request (planned and actual timings, the W3C trace context it received) so
// that a client's measurements can be checked against it.
//
// cmd/mockllm wraps it in a command.
package mockllm // import "github.com/otelcol-llm/otelcol-llm/internal/mockllm"
