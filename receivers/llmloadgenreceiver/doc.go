// Package llmloadgenreceiver implements the llm_loadgen receiver. In
// synthetic mode it generates the traces, GenAI client metrics and GenAI log
// events that a fleet of LLM-backed services would emit (chat, RAG, agent and
// embeddings traffic with streaming latency models, arrivals, load stages and
// injected faults) in one of several instrumentation dialects, with no model
// and no endpoint. In live mode it drives load against an OpenAI-compatible
// streaming endpoint and records what it measures.
package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"
