// Package config is the llm_loadgen receiver's configuration: every YAML
// field of both modes, the values each accepts, the defaults and the
// validation that names the field and the allowed values.
package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Modes.
const (
	ModeSynthetic = "synthetic"
	ModeLive      = "live"
)

// Timing modes.
const (
	TimingRealtime = "realtime"
	TimingAFAP     = "as_fast_as_possible"
)

// Arrival processes.
const (
	ArrivalConstant    = "constant"
	ArrivalPoisson     = "poisson"
	ArrivalGamma       = "gamma"
	ArrivalConcurrency = "concurrency"
)

// Scenario types.
const (
	ScenarioChat       = "chat"
	ScenarioRAG        = "rag"
	ScenarioAgent      = "agent"
	ScenarioEmbeddings = "embeddings"
)

// Chunk event modes.
const (
	ChunkEventsNone  = "none"
	ChunkEventsFirst = "first"
	ChunkEventsAll   = "all"
)

// Progress outputs (progress_output).
const (
	ProgressLog     = "log"     // the collector's log, as a structured info line
	ProgressConsole = "console" // a line for people on standard output
)

// ProgressOutputs lists the progress_output values.
var ProgressOutputs = []string{ProgressLog, ProgressConsole}

// Semantic-convention dialects of synthetic mode (semconv), in
// documentation order; synthetic mode renders each of them.
const (
	SemconvGenAIv141     = "gen_ai_v1.41"
	SemconvGenAILatest   = "gen_ai_latest"
	SemconvGenAIv136     = "gen_ai_v1.36"
	SemconvOpenInference = "openinference"
	SemconvOpenLLMetry   = "openllmetry"
	SemconvVercelAI      = "vercel_ai"
	SemconvLegacyLLM     = "legacy_llm"
)

// SemconvDialects lists the semconv values.
var SemconvDialects = []string{SemconvGenAIv141, SemconvGenAILatest, SemconvGenAIv136, SemconvOpenInference, SemconvOpenLLMetry, SemconvVercelAI, SemconvLegacyLLM}

var (
	Modes              = []string{ModeSynthetic, ModeLive}
	allowedTimings     = []string{TimingRealtime, TimingAFAP}
	allowedArrivals    = []string{ArrivalConstant, ArrivalPoisson, ArrivalGamma, ArrivalConcurrency}
	Scenarios          = []string{ScenarioChat, ScenarioRAG, ScenarioAgent, ScenarioEmbeddings}
	allowedChunkEvents = []string{ChunkEventsNone, ChunkEventsFirst, ChunkEventsAll}
)

// Config is the llm_loadgen receiver's configuration.
type Config struct {
	// Mode selects where traffic comes from: synthetic (generated, no
	// endpoint) or live (driven against an endpoint, see Live).
	Mode string `mapstructure:"mode"`
	// Seed makes generation reproducible: with as_fast_as_possible and a
	// start_time, the same seed yields the same telemetry, ids included.
	// 0 picks a random seed.
	Seed uint64 `mapstructure:"seed"`
	// Timing is realtime (each request's telemetry is emitted when its
	// simulated request ends) or as_fast_as_possible (backfill).
	Timing string `mapstructure:"timing"`
	// StartTime (RFC 3339) is the simulated clock's origin in
	// as_fast_as_possible mode; empty means the time the receiver starts.
	StartTime string `mapstructure:"start_time"`
	// Semconv is the instrumentation dialect of the emitted telemetry.
	Semconv string `mapstructure:"semconv"`
	// Duration bounds the run in simulated time; 0 means unbounded.
	Duration time.Duration `mapstructure:"duration"`
	// Requests bounds the run in requests; 0 means unbounded.
	Requests int64 `mapstructure:"requests"`
	// RunID names the run on every span and metric (resource attributes
	// llm_loadgen.run.id, llm_loadgen.shard.index, llm_loadgen.shard.count);
	// every shard of a distributed run carries the same one. Live mode only.
	RunID string `mapstructure:"run_id"`
	// StartAt (RFC 3339) is the absolute time the live schedule starts, so
	// that shards started at different moments begin together. Live mode only.
	StartAt string `mapstructure:"start_at"`
	// Shard splits one run across several processes (config_shard.go).
	Shard ShardConfig `mapstructure:"shard"`

	Arrival   ArrivalConfig    `mapstructure:"arrival"`
	Scenarios []ScenarioConfig `mapstructure:"scenarios"`
	Models    []ModelConfig    `mapstructure:"models"`
	Faults    []FaultConfig    `mapstructure:"faults"`
	Agent     AgentConfig      `mapstructure:"agent"`
	RAG       RAGConfig        `mapstructure:"rag"`
	Stream    StreamConfig     `mapstructure:"stream"`
	Content   ContentConfig    `mapstructure:"content"`
	Resources ResourcesConfig  `mapstructure:"resources"`
	Metrics   MetricsConfig    `mapstructure:"metrics"`
	Logs      LogsConfig       `mapstructure:"logs"`

	// BatchSize is the number of requests whose telemetry is sent to the
	// next consumer in one call (as_fast_as_possible), or the most that are
	// gathered before a send (realtime).
	BatchSize int `mapstructure:"batch_size"`
	// FlushInterval bounds how long finished requests wait before they are
	// sent in realtime mode.
	FlushInterval time.Duration `mapstructure:"flush_interval"`
	// ProgressInterval is the period of the progress log line; 0 disables it.
	ProgressInterval time.Duration `mapstructure:"progress_interval"`
	// ProgressOutput is where live mode's progress goes: log (a structured
	// line in the collector's log every metrics.interval) or console (a line
	// for people on standard output every progress_interval, plus a line
	// when the run starts and ends). Synthetic mode logs only.
	ProgressOutput string `mapstructure:"progress_output"`
	// Backpressure controls how the generator slows down when the next
	// consumer refuses data.
	Backpressure BackpressureConfig `mapstructure:"backpressure"`

	// Live configures live mode.
	Live LiveConfig `mapstructure:"live"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ArrivalConfig describes when requests start.
type ArrivalConfig struct {
	// Type is constant, poisson, gamma or concurrency (closed loop).
	Type string `mapstructure:"type"`
	// Rate is the target request rate in requests per second (open loop).
	Rate float64 `mapstructure:"rate"`
	// Burstiness is the gamma shape: 1 is Poisson, below 1 burstier, above 1
	// smoother. Used by type gamma.
	Burstiness float64 `mapstructure:"burstiness"`
	// Concurrency is the number of virtual users of the closed loop.
	Concurrency int `mapstructure:"concurrency"`
	// ThinkTime is the mean pause of a virtual user between two requests
	// (exponentially distributed); 0 means none.
	ThinkTime time.Duration `mapstructure:"think_time"`
	// Stages, when set, replace Rate (or Concurrency) with a schedule: each
	// stage ramps linearly from the previous stage's target (the first from
	// Rate, or Concurrency) to its own over its duration. After the last
	// stage the last target holds.
	Stages []StageConfig `mapstructure:"stages"`
}

// StageConfig is one load stage.
type StageConfig struct {
	Duration time.Duration `mapstructure:"duration"`
	// Target is a request rate (open loop) or a number of virtual users
	// (concurrency).
	Target float64 `mapstructure:"target"`
}

// ScenarioConfig is one entry of the weighted scenario mix.
type ScenarioConfig struct {
	Type   string  `mapstructure:"type"`
	Weight float64 `mapstructure:"weight"`
	// Route is the HTTP route of the server span at the root of the trace;
	// empty picks the scenario's default.
	Route string `mapstructure:"route"`
}

// Fault kinds.
const (
	FaultRateLimit     = "rate_limit"
	FaultOverloaded    = "overloaded"
	FaultContextLength = "context_length"
	FaultMidStream     = "mid_stream"
	FaultCancel        = "cancel"
	FaultTimeout       = "timeout"
)

var allowedFaults = []string{FaultRateLimit, FaultOverloaded, FaultContextLength, FaultMidStream, FaultCancel, FaultTimeout}

// FaultConfig injects one kind of error into a share of requests.
type FaultConfig struct {
	Type string `mapstructure:"type"`
	// Probability is the share of requests that hit this fault; the sum
	// over all faults is at most 1.
	Probability float64 `mapstructure:"probability"`
	// RetryAfter is the Retry-After a 429 carries; the client waits it and
	// retries (rate_limit only).
	RetryAfter time.Duration `mapstructure:"retry_after"`
	// MaxRetries is how many times a rate-limited request is retried before
	// the client gives up (rate_limit only).
	MaxRetries int `mapstructure:"max_retries"`
	// Timeout is the client timeout (timeout only).
	Timeout time.Duration `mapstructure:"timeout"`
}

// AgentConfig shapes the agent scenario's call tree.
type AgentConfig struct {
	// Depth is how many levels of sub-agents an orchestrator delegates to.
	Depth int `mapstructure:"depth"`
	// FanOut is how many tasks an orchestrator splits its work into.
	FanOut int `mapstructure:"fan_out"`
	// DependencyProbability is the chance that a task depends on each
	// earlier task of its orchestrator (the tasks form a DAG).
	DependencyProbability float64 `mapstructure:"dependency_probability"`
	// MinSteps and MaxSteps bound the chat → execute_tool loop of each agent.
	MinSteps int `mapstructure:"min_steps"`
	MaxSteps int `mapstructure:"max_steps"`
	// Tools are the tool names agents call.
	Tools []string `mapstructure:"tools"`
	// ToolLatency is an execute_tool span's duration, in seconds.
	ToolLatency Distribution `mapstructure:"tool_latency"`
}

// RAGConfig shapes the rag scenario.
type RAGConfig struct {
	// VectorStore is db.system.name of the retrieval span.
	VectorStore string `mapstructure:"vector_store"`
	// Collection is db.collection.name.
	Collection string `mapstructure:"collection"`
	// TopK documents are retrieved and reranked.
	TopK int `mapstructure:"top_k"`
	// RetrievalLatency and RerankLatency are durations, in seconds.
	RetrievalLatency Distribution `mapstructure:"retrieval_latency"`
	RerankLatency    Distribution `mapstructure:"rerank_latency"`
	// RerankModel names the reranker; empty skips the rerank step.
	RerankModel string `mapstructure:"rerank_model"`
}

// StreamConfig shapes streaming responses.
type StreamConfig struct {
	// TokensPerChunk is how many tokens one streamed chunk carries.
	TokensPerChunk int `mapstructure:"tokens_per_chunk"`
	// ChunkEvents adds span events for streamed chunks: none, first (the
	// first chunk only) or all (one per chunk).
	ChunkEvents string `mapstructure:"chunk_events"`
	// SpanPerChunk adds one child span per streamed chunk (span explosion).
	SpanPerChunk bool `mapstructure:"span_per_chunk"`
	// MaxChunkSpans caps the chunk spans of one response; 0 means no cap.
	MaxChunkSpans int `mapstructure:"max_chunk_spans"`
}

// ContentConfig adds synthetic prompt and completion content (attribute bloat).
type ContentConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// PromptBytes and CompletionBytes are the sizes of the synthetic texts.
	PromptBytes     int `mapstructure:"prompt_bytes"`
	CompletionBytes int `mapstructure:"completion_bytes"`
}

// ResourcesConfig describes the simulated fleet.
type ResourcesConfig struct {
	// Services is the number of distinct service.name values.
	Services int `mapstructure:"services"`
	// InstancesPerService is the number of service.instance.id values per service.
	InstancesPerService int `mapstructure:"instances_per_service"`
	// ServiceNamePrefix prefixes the generated service names.
	ServiceNamePrefix string `mapstructure:"service_name_prefix"`
	// Attributes are added to every resource.
	Attributes map[string]string `mapstructure:"attributes"`
}

// MetricsConfig controls the GenAI client metrics.
type MetricsConfig struct {
	// Interval is how often the cumulative metrics are sent (wall time).
	Interval time.Duration `mapstructure:"interval"`
}

// LogsConfig controls GenAI log events.
type LogsConfig struct {
	// InferenceDetails emits one gen_ai.client.inference.operation.details
	// event per model call when a logs pipeline is attached.
	InferenceDetails bool `mapstructure:"inference_details"`
}

// BackpressureConfig controls the reaction to a refusing consumer.
type BackpressureConfig struct {
	InitialBackoff time.Duration `mapstructure:"initial_backoff"`
	MaxBackoff     time.Duration `mapstructure:"max_backoff"`
}

func oneOf(field, value string, allowed []string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return fmt.Errorf("%s: unknown value %q; allowed values: %s", field, value, strings.Join(allowed, ", "))
}

func finiteNonNeg(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%s: must be a finite number >= 0, got %v", field, v)
	}
	return nil
}

// Validate checks the configuration and names the offending field.
func (cfg *Config) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(oneOf("mode", cfg.Mode, Modes))
	add(cfg.validateShard())
	if cfg.Mode == ModeLive {
		add(cfg.Live.validateLive(cfg))
		return errors.Join(errs...)
	}
	errs = append(errs, cfg.validateSynthetic()...)
	errs = append(errs, cfg.validateOutput()...)
	return errors.Join(errs...) // drops the nils
}

// validateSynthetic checks what synthetic mode simulates: timing, the
// dialect, the run's length and the traffic's sections.
func (cfg *Config) validateSynthetic() []error {
	errs := []error{oneOf("timing", cfg.Timing, allowedTimings)}
	if cfg.StartTime != "" {
		if _, err := time.Parse(time.RFC3339Nano, cfg.StartTime); err != nil {
			errs = append(errs, fmt.Errorf("start_time: %q is not an RFC 3339 time: %w", cfg.StartTime, err))
		}
	}
	errs = append(errs, oneOf("semconv", cfg.Semconv, SemconvDialects))
	if cfg.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration: must be >= 0, got %v", cfg.Duration))
	}
	if cfg.Requests < 0 {
		errs = append(errs, fmt.Errorf("requests: must be >= 0, got %d", cfg.Requests))
	}
	return append(errs, cfg.Arrival.validate(), cfg.validateScenarios(), cfg.validateModels(),
		validateFaults(cfg.Faults), cfg.Agent.validate(), cfg.RAG.validate(), cfg.Stream.validate())
}

// validateOutput checks how synthetic mode emits: content sizes, resources,
// metrics, batching, progress and backpressure.
func (cfg *Config) validateOutput() []error {
	var errs []error
	if cfg.Content.PromptBytes < 0 || cfg.Content.CompletionBytes < 0 {
		errs = append(errs, errors.New("content: prompt_bytes and completion_bytes must be >= 0"))
	}
	if cfg.Resources.Services < 1 {
		errs = append(errs, fmt.Errorf("resources.services: must be >= 1, got %d", cfg.Resources.Services))
	}
	if cfg.Resources.InstancesPerService < 1 {
		errs = append(errs, fmt.Errorf("resources.instances_per_service: must be >= 1, got %d", cfg.Resources.InstancesPerService))
	}
	if cfg.Metrics.Interval <= 0 {
		errs = append(errs, fmt.Errorf("metrics.interval: must be > 0, got %v", cfg.Metrics.Interval))
	}
	if cfg.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("batch_size: must be >= 1, got %d", cfg.BatchSize))
	}
	if cfg.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("flush_interval: must be > 0, got %v", cfg.FlushInterval))
	}
	errs = append(errs, cfg.validateProgress()...)
	return append(errs, cfg.validateBackpressure()...)
}

// validateProgress checks progress_interval and progress_output.
func (cfg *Config) validateProgress() []error {
	var errs []error
	if cfg.ProgressInterval < 0 {
		errs = append(errs, fmt.Errorf("progress_interval: must be >= 0, got %v", cfg.ProgressInterval))
	}
	switch {
	case !slices.Contains(ProgressOutputs, cfg.ProgressOutput):
		errs = append(errs, fmt.Errorf("progress_output: unknown value %q; allowed values: %s", cfg.ProgressOutput, strings.Join(ProgressOutputs, ", ")))
	case cfg.ProgressOutput == ProgressConsole && cfg.Mode != ModeLive:
		errs = append(errs, fmt.Errorf("progress_output: %q needs mode %q (synthetic mode logs its progress)", ProgressConsole, ModeLive))
	case cfg.ProgressOutput == ProgressConsole && cfg.ProgressInterval == 0:
		errs = append(errs, fmt.Errorf("progress_output: %q needs a progress_interval above 0", ProgressConsole))
	}
	return errs
}

// validateBackpressure checks the backoff bounds of backpressure.
func (cfg *Config) validateBackpressure() []error {
	var errs []error
	if cfg.Backpressure.InitialBackoff <= 0 {
		errs = append(errs, fmt.Errorf("backpressure.initial_backoff: must be > 0, got %v", cfg.Backpressure.InitialBackoff))
	}
	if cfg.Backpressure.MaxBackoff < cfg.Backpressure.InitialBackoff {
		errs = append(errs, fmt.Errorf("backpressure.max_backoff: must be >= backpressure.initial_backoff (%v), got %v", cfg.Backpressure.InitialBackoff, cfg.Backpressure.MaxBackoff))
	}
	return errs
}

func (a *ArrivalConfig) validate() error {
	var errs []error
	if err := oneOf("arrival.type", a.Type, allowedArrivals); err != nil {
		return err
	}
	if a.Type == ArrivalConcurrency {
		errs = append(errs, a.validateUsers()...)
	} else {
		if err := finiteNonNeg("arrival.rate", a.Rate); err != nil {
			errs = append(errs, err)
		} else if a.Rate == 0 && len(a.Stages) == 0 {
			errs = append(errs, errors.New("arrival.rate: must be > 0 when no stages are given"))
		}
	}
	if a.Type == ArrivalGamma {
		if math.IsNaN(a.Burstiness) || math.IsInf(a.Burstiness, 0) || a.Burstiness <= 0 {
			errs = append(errs, fmt.Errorf("arrival.burstiness: must be a finite number > 0 for type gamma, got %v", a.Burstiness))
		}
	}
	errs = append(errs, a.validateStages()...)
	return errors.Join(errs...)
}

// validateUsers checks the virtual users and think time of type concurrency.
func (a *ArrivalConfig) validateUsers() []error {
	var errs []error
	if a.Concurrency < 1 && len(a.Stages) == 0 {
		errs = append(errs, fmt.Errorf("arrival.concurrency: must be >= 1 for type concurrency, got %d", a.Concurrency))
	}
	if a.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("arrival.concurrency: must be >= 0, got %d", a.Concurrency))
	}
	if a.ThinkTime < 0 {
		errs = append(errs, fmt.Errorf("arrival.think_time: must be >= 0, got %v", a.ThinkTime))
	}
	return errs
}

// validateStages checks each stage's duration and target, and that some
// stage generates load.
func (a *ArrivalConfig) validateStages() []error {
	var errs []error
	peak := 0.0
	for i, s := range a.Stages {
		if s.Duration <= 0 {
			errs = append(errs, fmt.Errorf("arrival.stages[%d].duration: must be > 0, got %v", i, s.Duration))
		}
		if err := finiteNonNeg(fmt.Sprintf("arrival.stages[%d].target", i), s.Target); err != nil {
			errs = append(errs, err)
		}
		if a.Type == ArrivalConcurrency && s.Target != math.Trunc(s.Target) {
			errs = append(errs, fmt.Errorf("arrival.stages[%d].target: must be a whole number of virtual users for type concurrency, got %v", i, s.Target))
		}
		peak = math.Max(peak, s.Target)
	}
	if len(a.Stages) > 0 && peak == 0 {
		errs = append(errs, errors.New("arrival.stages: every target is 0, nothing would be generated"))
	}
	return errs
}

func (cfg *Config) validateScenarios() error {
	if len(cfg.Scenarios) == 0 {
		return fmt.Errorf("scenarios: at least one scenario is required; allowed types: %s", strings.Join(Scenarios, ", "))
	}
	var errs []error
	sum := 0.0
	for i, s := range cfg.Scenarios {
		if err := oneOf(fmt.Sprintf("scenarios[%d].type", i), s.Type, Scenarios); err != nil {
			errs = append(errs, err)
		}
		if err := finiteNonNeg(fmt.Sprintf("scenarios[%d].weight", i), s.Weight); err != nil {
			errs = append(errs, err)
		}
		sum += s.Weight
	}
	if len(errs) == 0 && sum <= 0 {
		errs = append(errs, errors.New("scenarios: weights sum to zero; give at least one scenario a weight > 0"))
	}
	return errors.Join(errs...)
}

func validateFaults(faults []FaultConfig) error {
	var errs []error
	sum := 0.0
	for i, f := range faults {
		p := fmt.Sprintf("faults[%d]", i)
		if err := oneOf(p+".type", f.Type, allowedFaults); err != nil {
			errs = append(errs, err)
		}
		if err := finiteNonNeg(p+".probability", f.Probability); err != nil {
			errs = append(errs, err)
		} else if f.Probability > 1 {
			errs = append(errs, fmt.Errorf("%s.probability: must be <= 1, got %v", p, f.Probability))
		}
		if f.RetryAfter < 0 {
			errs = append(errs, fmt.Errorf("%s.retry_after: must be >= 0, got %v", p, f.RetryAfter))
		}
		if f.MaxRetries < 0 {
			errs = append(errs, fmt.Errorf("%s.max_retries: must be >= 0, got %d", p, f.MaxRetries))
		}
		if f.Timeout < 0 {
			errs = append(errs, fmt.Errorf("%s.timeout: must be >= 0, got %v", p, f.Timeout))
		}
		sum += f.Probability
	}
	if len(errs) == 0 && sum > 1+1e-9 {
		errs = append(errs, fmt.Errorf("faults: probabilities sum to %.4g; the sum must be <= 1", sum))
	}
	return errors.Join(errs...)
}

func (a *AgentConfig) validate() error {
	var errs []error
	if a.Depth < 0 || a.Depth > 8 {
		errs = append(errs, fmt.Errorf("agent.depth: must be between 0 and 8, got %d", a.Depth))
	}
	if a.FanOut < 1 || a.FanOut > 64 {
		errs = append(errs, fmt.Errorf("agent.fan_out: must be between 1 and 64, got %d", a.FanOut))
	}
	if math.IsNaN(a.DependencyProbability) || a.DependencyProbability < 0 || a.DependencyProbability > 1 {
		errs = append(errs, fmt.Errorf("agent.dependency_probability: must be between 0 and 1, got %v", a.DependencyProbability))
	}
	if a.MinSteps < 1 {
		errs = append(errs, fmt.Errorf("agent.min_steps: must be >= 1, got %d", a.MinSteps))
	}
	if a.MaxSteps < a.MinSteps {
		errs = append(errs, fmt.Errorf("agent.max_steps: must be >= agent.min_steps (%d), got %d", a.MinSteps, a.MaxSteps))
	}
	if len(a.Tools) == 0 {
		errs = append(errs, errors.New("agent.tools: at least one tool name is required"))
	}
	errs = append(errs, a.ToolLatency.validate("agent.tool_latency"))
	return errors.Join(errs...)
}

func (r *RAGConfig) validate() error {
	var errs []error
	if r.VectorStore == "" {
		errs = append(errs, errors.New("rag.vector_store: must not be empty (e.g. qdrant, pgvector, milvus)"))
	}
	if r.TopK < 1 {
		errs = append(errs, fmt.Errorf("rag.top_k: must be >= 1, got %d", r.TopK))
	}
	errs = append(errs, r.RetrievalLatency.validate("rag.retrieval_latency"))
	if r.RerankModel != "" {
		errs = append(errs, r.RerankLatency.validate("rag.rerank_latency"))
	}
	return errors.Join(errs...)
}

func (s *StreamConfig) validate() error {
	var errs []error
	if s.TokensPerChunk < 1 {
		errs = append(errs, fmt.Errorf("stream.tokens_per_chunk: must be >= 1, got %d", s.TokensPerChunk))
	}
	errs = append(errs, oneOf("stream.chunk_events", s.ChunkEvents, allowedChunkEvents))
	if s.MaxChunkSpans < 0 {
		errs = append(errs, fmt.Errorf("stream.max_chunk_spans: must be >= 0, got %d", s.MaxChunkSpans))
	}
	return errors.Join(errs...)
}
