// Package mockllm is an OpenAI-compatible inference server for tests, demos
// and benchmarks. It speaks the real wire format over HTTP (chat completions
// and completions, streamed as server-sent events or not, embeddings and the
// model list), applies a per-request latency model and an optional capacity
// model (a bounded number of requests served at once, a FIFO waiting queue
// whose wait is part of the TTFT, decode slowing as the batch fills, a KV
// cache whose exhaustion preempts and recomputes requests as vLLM does),
// shows its own state under vLLM's /metrics names and request-span
// attributes,
// injects faults by configuration or per request, and records the ground
// truth of every request (planned and actual timings, the queue wait, the
// W3C trace context it received) so that a client's measurements can be
// checked against it.
//
// cmd/mockllm and the mock_llm collector extension wrap it.
package mockllm // import "github.com/otelcol-llm/otelcol-llm/internal/mockllm"
