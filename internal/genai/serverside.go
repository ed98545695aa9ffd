package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Request-span attributes of inference servers: vLLM (--otlp-traces-endpoint,
// vllm/tracing.py SpanAttributes) and SGLang (--enable-trace) write them on
// the SERVER span of each request, in seconds, measured on the server's clock
// from the time the engine received the request. mockllm writes the same.
// llm_semconv renames gen_ai.latency.time_to_first_token (VLLMAttrTimeToFirstToken)
// to gen_ai.response.time_to_first_chunk and keeps the others; load_report
// reads them to split a request's time into client and server parts.
const (
	ServerAttrTimeInQueue       = "gen_ai.latency.time_in_queue"         // waiting for a place in the running batch
	ServerAttrE2E               = "gen_ai.latency.e2e"                   // received → finished
	ServerAttrTimeInScheduler   = "gen_ai.latency.time_in_scheduler"     // V0: time the scheduler spent on the request
	ServerAttrTimeInPrefill     = "gen_ai.latency.time_in_model_prefill" // scheduled → first token
	ServerAttrTimeInDecode      = "gen_ai.latency.time_in_model_decode"  // first token → finished
	ServerAttrTimeInInference   = "gen_ai.latency.time_in_model_inference"
	ServerAttrTimeInForward     = "gen_ai.latency.time_in_model_forward" // V0: forward passes
	ServerAttrTimeInExecute     = "gen_ai.latency.time_in_model_execute" // V0: execute_model, forward + sync + sampling
	ServerAttrRequestID         = "gen_ai.request.id"
	ServerSpanNameVLLM          = "llm_request" // vLLM's request span
	serverLatencyAttrNamePrefix = "gen_ai.latency."
)

// IsServerLatencyAttr reports whether k is one of the servers' gen_ai.latency.*
// request timings; a SERVER span that carries one is an inference request
// even without gen_ai.operation.name (vLLM writes none).
func IsServerLatencyAttr(k string) bool {
	return len(k) > len(serverLatencyAttrNamePrefix) && k[:len(serverLatencyAttrNamePrefix)] == serverLatencyAttrNamePrefix
}

// Timings of llm_loadgen's live client spans, in seconds from the request's
// scheduled send time unless stated; load_report reads them to split the
// client side of a request (queue, connection) from the server's.
const (
	AttrLoadgenDNSTime     = "llm_loadgen.dns_time"     // DNS lookup (a duration)
	AttrLoadgenConnectTime = "llm_loadgen.connect_time" // TCP connect (a duration)
	AttrLoadgenTLSTime     = "llm_loadgen.tls_time"     // TLS handshake (a duration)
	AttrLoadgenFirstByte   = "llm_loadgen.first_byte"   // scheduled → first response byte
	AttrLoadgenTTFT        = "llm_loadgen.ttft"         // scheduled → first content chunk
	AttrLoadgenE2E         = "llm_loadgen.e2e"          // scheduled → last content chunk
)
