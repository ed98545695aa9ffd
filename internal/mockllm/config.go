package mockllm

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Fault kinds, by the names configuration and the X-Mock-Fault header use.
const (
	FaultNone          = ""
	FaultRateLimit     = "rate_limit"     // 429 with Retry-After
	FaultOverloaded    = "overloaded"     // 503
	FaultContextLength = "context_length" // 400 context length exceeded
	FaultErrorEvent    = "error_event"    // {"error":…} event mid-stream, then [DONE]
	FaultStall         = "stall"          // the stream stops sending mid-way for StallDuration
	FaultDrop          = "drop"           // connection closed mid-stream, before [DONE]
	FaultMalformed     = "malformed"      // one chunk is not valid JSON
	FaultSlowHeaders   = "slow_headers"   // response headers delayed by SlowHeaders
	FaultMissingDone   = "missing_done"   // the stream ends cleanly without [DONE]
	FaultCutEvent      = "cut_event"      // the body ends cleanly inside an event (no blank line after it)
)

// Faults lists every fault kind.
var Faults = []string{FaultRateLimit, FaultOverloaded, FaultContextLength, FaultErrorEvent, FaultStall, FaultDrop, FaultMalformed, FaultSlowHeaders, FaultMissingDone, FaultCutEvent}

// Request headers that override the latency model or pick a fault for one request.
const (
	HeaderFault        = "X-Mock-Fault"         // one of Faults
	HeaderFaultAfter   = "X-Mock-Fault-After"   // content chunks sent before a mid-stream fault
	HeaderTTFT         = "X-Mock-Ttft-Ms"       // time to first token, milliseconds
	HeaderITL          = "X-Mock-Itl-Ms"        // inter-token latency, milliseconds
	HeaderOutputTokens = "X-Mock-Output-Tokens" // completion length in tokens
	// HeaderRequestID is the response header that carries the request id
	// under which the ground truth is recorded.
	HeaderRequestID = "X-Request-Id"
)

// Config is the server's behaviour.
type Config struct {
	// Models are the model ids served; the first is the default.
	Models []string
	// ContextWindow is the models' context size in tokens. A request whose
	// prompt plus max_tokens exceeds it gets a 400.
	ContextWindow int
	// TTFT is the mean time to first token at a zero-length prompt;
	// PrefillPerToken adds time per prompt token.
	TTFT            time.Duration
	PrefillPerToken time.Duration
	// PrefixCacheBlockTokens turns the prefix cache on (prefix.go): prompts
	// are cached in blocks of this many tokens, and a request's cached
	// tokens cost no PrefillPerToken. 0 is off. PrefixCacheBlocks is its
	// capacity in blocks (least recently used forgotten first).
	PrefixCacheBlockTokens int
	PrefixCacheBlocks      int
	// ITL is the mean gap between two output tokens.
	ITL time.Duration
	// Jitter is the relative spread of TTFT and each ITL gap: each is drawn
	// uniformly from mean·[1-Jitter, 1+Jitter].
	Jitter float64
	// OutputTokens is the mean completion length when the request does not
	// force one; OutputJitter is its relative spread. max_tokens caps it
	// (finish_reason "length").
	OutputTokens int
	OutputJitter float64
	// TokensPerChunk is the number of tokens in one content chunk.
	TokensPerChunk int
	// ReasoningTokens makes the model a reasoning one: the first this many
	// tokens of a chat stream are its thinking, sent under
	// delta.<ReasoningField> (reasoning_content, as vLLM and llama.cpp send
	// it, or reasoning, as Ollama does) before the answer's content.
	ReasoningTokens int
	ReasoningField  string
	// EmbeddingDimensions is the size of returned embedding vectors.
	EmbeddingDimensions int
	// EmbeddingLatency is the response time of an embeddings request.
	EmbeddingLatency time.Duration

	// MaxRunning is how many completion requests (streamed or not) the
	// engine serves at once; 0 is unlimited. A request that finds every
	// slot taken waits in a FIFO queue, and its TTFT clock starts only when
	// it gets a slot: the wait is part of the TTFT the client sees.
	// Embeddings do not take a slot.
	MaxRunning int
	// MaxQueue is how many requests may wait for a slot; 0 is unlimited. A
	// request arriving when the queue is full gets the overloaded fault's
	// 503 at once (Stats.Rejected). It only applies with MaxRunning > 0.
	MaxQueue int
	// BatchSlowdown slows decoding as the batch fills: each inter-token gap
	// is multiplied by 1 + BatchSlowdown·running/MaxRunning, running being
	// the requests holding a slot when the gap starts. It only applies with
	// MaxRunning > 0.
	BatchSlowdown float64
	// KVCacheTokens is the engine's KV cache in tokens; 0 is unlimited. A
	// request is admitted only when its prompt fits in the free cache, and
	// each token it generates takes one more; when a token does not fit,
	// the newest running request is preempted (vLLM's recompute
	// preemption): its cache is freed, it waits at the front of the queue,
	// and once admitted again it spends TTFT + PrefillPerToken per token
	// held recomputing before it streams on. It must hold the context window.
	KVCacheTokens int

	// FaultRates is the probability of each fault kind per request (the sum
	// is at most 1); a request's X-Mock-Fault header takes precedence.
	FaultRates map[string]float64
	// RetryAfter is the Retry-After of rate-limited responses.
	RetryAfter time.Duration
	// StallDuration is how long a stalled stream stops sending.
	StallDuration time.Duration
	// SlowHeaders is the extra delay before headers for slow_headers.
	SlowHeaders time.Duration

	// Seed makes the latency model reproducible; 0 picks one.
	Seed uint64
	// HistorySize bounds the ground-truth records kept (oldest evicted).
	HistorySize int
	// RecordTokenTimes keeps the write time of every content chunk in the
	// ground truth (memory grows with output length).
	RecordTokenTimes bool
}

// DefaultConfig returns a config with a small model and modest latencies.
func DefaultConfig() Config {
	return Config{
		Models:              []string{"mock-llm"},
		ContextWindow:       8192,
		TTFT:                50 * time.Millisecond,
		ITL:                 10 * time.Millisecond,
		Jitter:              0.2,
		OutputTokens:        64,
		OutputJitter:        0.5,
		TokensPerChunk:      1,
		ReasoningField:      "reasoning_content",
		EmbeddingDimensions: 16,
		EmbeddingLatency:    5 * time.Millisecond,
		RetryAfter:          time.Second,
		StallDuration:       30 * time.Second,
		SlowHeaders:         2 * time.Second,
		HistorySize:         100000,
		PrefixCacheBlocks:   262144,
		RecordTokenTimes:    true,
	}
}

// Validate names the first bad field.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Models) == 0 {
		errs = append(errs, errors.New("models: at least one model id is required"))
	}
	if c.ContextWindow < 1 {
		errs = append(errs, fmt.Errorf("context_window: must be >= 1, got %d", c.ContextWindow))
	}
	for name, d := range map[string]time.Duration{"ttft": c.TTFT, "prefill_per_token": c.PrefillPerToken, "itl": c.ITL,
		"embedding_latency": c.EmbeddingLatency, "retry_after": c.RetryAfter, "stall_duration": c.StallDuration, "slow_headers": c.SlowHeaders} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s: must be >= 0, got %v", name, d))
		}
	}
	errs = append(errs, c.validateShape()...)
	errs = append(errs, c.validateCapacity()...)
	if c.PrefixCacheBlockTokens < 0 {
		errs = append(errs, fmt.Errorf("prefix_cache_block_tokens: must be >= 0 (0 is off), got %d", c.PrefixCacheBlockTokens))
	}
	if c.PrefixCacheBlockTokens > 0 && c.PrefixCacheBlocks < 1 {
		errs = append(errs, fmt.Errorf("prefix_cache_blocks: must be >= 1 with the prefix cache on, got %d", c.PrefixCacheBlocks))
	}
	if c.HistorySize < 0 {
		errs = append(errs, fmt.Errorf("history_size: must be >= 0, got %d", c.HistorySize))
	}
	errs = append(errs, c.validateFaults()...)
	return errors.Join(errs...)
}

// validateShape checks the spreads of the latency model and the shape of
// the responses.
func (c *Config) validateShape() []error {
	var errs []error
	if math.IsNaN(c.Jitter) || c.Jitter < 0 || c.Jitter > 1 {
		errs = append(errs, fmt.Errorf("jitter: must be between 0 and 1, got %v", c.Jitter))
	}
	if math.IsNaN(c.OutputJitter) || c.OutputJitter < 0 || c.OutputJitter > 1 {
		errs = append(errs, fmt.Errorf("output_jitter: must be between 0 and 1, got %v", c.OutputJitter))
	}
	if c.OutputTokens < 1 {
		errs = append(errs, fmt.Errorf("output_tokens: must be >= 1, got %d", c.OutputTokens))
	}
	if c.TokensPerChunk < 1 {
		errs = append(errs, fmt.Errorf("tokens_per_chunk: must be >= 1, got %d", c.TokensPerChunk))
	}
	if c.EmbeddingDimensions < 1 {
		errs = append(errs, fmt.Errorf("embedding_dimensions: must be >= 1, got %d", c.EmbeddingDimensions))
	}
	return errs
}

// validateFaults checks the fault probabilities, in the order of their names.
func (c *Config) validateFaults() []error {
	var errs []error
	sum := 0.0
	keys := make([]string, 0, len(c.FaultRates))
	for k := range c.FaultRates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := c.FaultRates[k]
		if !isFault(k) {
			errs = append(errs, fmt.Errorf("faults: unknown fault %q; allowed values: %s", k, strings.Join(Faults, ", ")))
			continue
		}
		if math.IsNaN(p) || p < 0 || p > 1 {
			errs = append(errs, fmt.Errorf("faults.%s: probability must be between 0 and 1, got %v", k, p))
		}
		sum += p
	}
	if sum > 1+1e-9 {
		errs = append(errs, fmt.Errorf("faults: probabilities sum to %v; the sum must be <= 1", sum))
	}
	return errs
}

// validateCapacity checks the capacity model's fields.
func (c *Config) validateCapacity() []error {
	var errs []error
	if c.MaxRunning < 0 {
		errs = append(errs, fmt.Errorf("max_running: must be >= 0 (0: unlimited), got %d", c.MaxRunning))
	}
	if c.MaxQueue < 0 {
		errs = append(errs, fmt.Errorf("max_queue: must be >= 0 (0: unlimited), got %d", c.MaxQueue))
	}
	if c.KVCacheTokens < 0 || (c.KVCacheTokens > 0 && c.KVCacheTokens < c.ContextWindow) {
		errs = append(errs, fmt.Errorf("kv_cache_tokens: must be 0 (unlimited) or at least the context window (%d tokens), got %d", c.ContextWindow, c.KVCacheTokens))
	}
	if c.ReasoningTokens < 0 {
		errs = append(errs, fmt.Errorf("reasoning_tokens: must be >= 0, got %d", c.ReasoningTokens))
	}
	if c.ReasoningField != "reasoning_content" && c.ReasoningField != "reasoning" {
		errs = append(errs, fmt.Errorf("reasoning_field: must be reasoning_content or reasoning, got %q", c.ReasoningField))
	}
	if math.IsNaN(c.BatchSlowdown) || math.IsInf(c.BatchSlowdown, 0) || c.BatchSlowdown < 0 {
		errs = append(errs, fmt.Errorf("batch_slowdown: must be a finite number >= 0, got %v", c.BatchSlowdown))
	}
	return errs
}

func isFault(s string) bool {
	for _, f := range Faults {
		if f == s {
			return true
		}
	}
	return false
}

// ParseFaultRates parses "kind=p,kind=p".
func ParseFaultRates(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("faults: %q is not kind=probability", part)
		}
		var p float64
		if _, err := fmt.Sscanf(v, "%g", &p); err != nil {
			return nil, fmt.Errorf("faults: %q: probability %q is not a number", k, v)
		}
		out[k] = p
	}
	return out, nil
}
