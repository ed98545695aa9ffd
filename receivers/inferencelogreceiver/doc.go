// Package inferencelogreceiver implements the inference_log receiver: it tails
// the log files of LLM inference servers (vLLM, TGI, SGLang, Ollama,
// llama.cpp) with contrib's stanza file consumer, parses them with a tested
// operator pipeline per server (a preset), and turns the servers' periodic
// statistics lines into metrics named after what the servers expose on
// /metrics. Lines a preset cannot parse are kept with their raw body, marked
// with a parse-error attribute and counted.
package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"
