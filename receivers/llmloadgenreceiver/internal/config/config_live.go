package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/tokenize"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
)

// Live operations (the endpoint path under the base URL).
const (
	LiveOpChat = genai.OpChat
	LiveOpText = genai.OpTextCompletion
)

var allowedLiveOps = []string{LiveOpChat, LiveOpText}

// LiveConfig configures live mode (mode: live): load driven against an
// OpenAI-compatible streaming endpoint. The arrival process, duration,
// requests, seed, batch_size and flush_interval of the top-level
// configuration apply to live mode too.
type LiveConfig struct {
	// Client is the HTTP client: client.endpoint is the API base URL,
	// including the version path (e.g. http://127.0.0.1:8000/v1), plus TLS,
	// headers, proxy and buffer settings. client.timeout must stay 0: a
	// whole-request timeout would cut long streams; use Timeouts.
	Client confighttp.ClientConfig `mapstructure:"client"`
	// APIKey is sent as "Authorization: Bearer <key>"; it is never logged.
	APIKey configopaque.String `mapstructure:"api_key"`
	// Model is the model id requested.
	Model string `mapstructure:"model"`
	// Provider is gen_ai.provider.name on the emitted telemetry.
	Provider string `mapstructure:"provider"`
	// Operation is chat (/chat/completions) or text_completion (/completions).
	Operation string `mapstructure:"operation"`
	// Stream requests server-sent events; IncludeUsage asks for the final
	// usage chunk (stream_options.include_usage).
	Stream       bool `mapstructure:"stream"`
	IncludeUsage bool `mapstructure:"include_usage"`
	// Pacer is how the open-loop and trace schedules wait for each
	// request's time.
	Pacer LivePacerConfig `mapstructure:"pacer"`
	// Transport is how requests are sent: raw (a streaming HTTP/1.1 client
	// on the TCP connection, internal/httpstream, whose reads carry the
	// kernel's receive time), net_http (Go's net/http: TLS, HTTP/2, proxies,
	// auth extensions, compression, cookies) or auto: raw for an http://
	// endpoint that uses none of those client settings, else net_http.
	Transport string `mapstructure:"transport"`
	// KernelTimestamps times every event by when the kernel received its
	// bytes (SO_TIMESTAMPNS; the raw transport on Linux), so the client's
	// own scheduling delay stays out of TTFT and ITL and is reported apart.
	KernelTimestamps bool `mapstructure:"kernel_timestamps"`
	// ContinuousUsage asks for the usage so far on every chunk (vLLM's
	// stream_options.continuous_usage_stats), so that a chunk of several
	// tokens counts as that many inter-token latencies.
	ContinuousUsage bool `mapstructure:"continuous_usage"`
	// MaxTokens is max_tokens of every request; IgnoreEOS asks servers that
	// support it (vLLM) to always generate MaxTokens.
	MaxTokens int  `mapstructure:"max_tokens"`
	IgnoreEOS bool `mapstructure:"ignore_eos"`
	// ExtraBody is merged into every request body (e.g. temperature).
	ExtraBody map[string]any `mapstructure:"extra_body"`
	// Prompt shapes the request messages.
	Prompt LivePromptConfig `mapstructure:"prompt"`
	// Dataset, when its path is set, replaces the synthetic prompt: each
	// request sends a record of a ShareGPT-format or JSONL file, with the
	// record's output length as max_tokens (live.max_tokens when it has
	// none).
	Dataset dataset.Config `mapstructure:"dataset"`
	// Trace, when its path is set, replays a request trace: each row is
	// sent at its timestamp, instead of the arrival process, with a prompt
	// built from its hash ids (equal ids, equal bytes) and its output
	// length as max_tokens.
	Trace dataset.TraceConfig `mapstructure:"trace"`
	// MaxConcurrency caps requests in flight; requests over the cap wait in a
	// client-side queue, whose time is recorded (and counted in latency,
	// which is measured from the scheduled send time). 0 means no cap.
	MaxConcurrency int `mapstructure:"max_concurrency"`
	// MaxQueue bounds the requests waiting for the cap; a request arriving
	// at a full queue is not sent and is counted (reason queue_full).
	MaxQueue int `mapstructure:"max_queue"`
	// Timeouts bound the phases of a request.
	Timeouts LiveTimeoutsConfig `mapstructure:"timeouts"`
	// ChunkEvents adds span events for received chunks: none, first or all.
	ChunkEvents string `mapstructure:"chunk_events"`
	// Tracestate, when set, is sent as the W3C tracestate header.
	Tracestate string `mapstructure:"tracestate"`
	// DrainTimeout is how long shutdown waits for requests in flight before
	// cancelling them (each counted with error.type cancelled).
	DrainTimeout time.Duration `mapstructure:"drain_timeout"`
	// Sweep, when step_duration is set, steps the open-loop rate until an
	// SLO breaks or throughput saturates, and reports the knee.
	Sweep LiveSweepConfig `mapstructure:"sweep"`
	// Session, with turns set, makes every arrival (open loop) or virtual
	// user (closed loop) a multi-turn conversation.
	Session LiveSessionConfig `mapstructure:"session"`
}

// LiveSessionConfig is the multi-turn workload: a session sends turn k+1
// after turn k ended and a think time, with the whole history, the
// server's real answers included. Its id is the request's "user" field.
type LiveSessionConfig struct {
	// Turns per session (0: every request stands alone). Each turn's user
	// message is a synthetic prompt of a length drawn from
	// live.prompt.input_tokens, or, with a ShareGPT live.dataset, the next
	// human turn of the session's conversation (a conversation with fewer
	// human turns ends its session sooner).
	Turns int `mapstructure:"turns"`
	// ThinkTime is the mean pause between a turn's answer and the next
	// turn (exponentially distributed, drawn from the seed); 0: none.
	ThinkTime time.Duration `mapstructure:"think_time"`
}

// LivePromptConfig builds the request messages: a system prompt, few-shot
// turns, then a user message padded to a sampled length.
type LivePromptConfig struct {
	// Tokenizer, with its path set, is the model's tokenizer.json or its
	// SentencePiece tokenizer.model (or, with encoding, a tiktoken
	// encoding): the synthetic prompts (and session turns) are then built to exact token
	// counts of their message contents instead of the estimate.
	Tokenizer tokenize.Config `mapstructure:"tokenizer"`
	System    string          `mapstructure:"system"`
	FewShot   []LiveMessage   `mapstructure:"few_shot"`
	// User is the start of the user message; filler words pad it to the
	// sampled input length.
	User string `mapstructure:"user"`
	// InputTokens is the target prompt length in tokens (about four bytes
	// each), all messages included.
	InputTokens Distribution `mapstructure:"input_tokens"`
	// ContextWindow is the model's context size: prompts are cut so that
	// prompt plus max_tokens fit.
	ContextWindow int `mapstructure:"context_window"`
	// UniquePrefix starts every prompt with a unique marker so that a
	// server's prefix cache cannot serve it.
	UniquePrefix bool `mapstructure:"unique_prefix"`
	// SharedPrefix, with groups set, gives every request one of Groups
	// system prompts of Tokens tokens each (the same bytes within a group),
	// the prefix-repetition shape that exercises a server's prefix cache.
	SharedPrefix LiveSharedPrefixConfig `mapstructure:"shared_prefix"`
}

// LiveSharedPrefixConfig is the shared-prefix workload: Groups shared
// system prompts of Tokens tokens, each request in one group drawn with the
// run's seed, followed by its own user message.
type LiveSharedPrefixConfig struct {
	Groups int `mapstructure:"groups"`
	Tokens int `mapstructure:"tokens"`
}

// LiveMessage is one chat message.
type LiveMessage struct {
	Role    string `mapstructure:"role"`
	Content string `mapstructure:"content"`
}

// LiveTimeoutsConfig bounds each phase of a request; none of them covers the
// whole stream except Total.
type LiveTimeoutsConfig struct {
	// Connect bounds DNS, TCP connect and TLS handshake.
	Connect time.Duration `mapstructure:"connect"`
	// TTFT bounds the time from send to the first content chunk (or, for a
	// non-streaming request, to the response headers).
	TTFT time.Duration `mapstructure:"ttft"`
	// Idle bounds the gap between two events of a stream.
	Idle time.Duration `mapstructure:"idle"`
	// Total is the deadline of one request from its scheduled send time.
	Total time.Duration `mapstructure:"total"`
}

// LivePacerConfig is live.pacer: the scheduler sleeps on Clock until Spin
// before a request's time, then watches the clock (a core busy for Spin
// per request).
type LivePacerConfig struct {
	Clock string        `mapstructure:"clock"`
	Spin  time.Duration `mapstructure:"spin"`
}

// Transports (live.transport).
const (
	TransportAuto    = "auto"
	TransportRaw     = "raw"
	TransportNetHTTP = "net_http"
)

// RawTransport tells whether requests go through the raw HTTP/1.1 client;
// when they do not, why not (the client settings only net/http serves).
func (l *LiveConfig) RawTransport() (bool, string) {
	if l.Transport == TransportNetHTTP {
		return false, "live.transport is net_http"
	}
	if why := l.netHTTPOnly(); why != "" {
		return false, why
	}
	return true, ""
}

// netHTTPOnly names the first client setting the raw client does not
// serve, or returns "".
func (l *LiveConfig) netHTTPOnly() string {
	c := &l.Client
	switch {
	case !strings.HasPrefix(strings.ToLower(c.Endpoint), "http://"):
		return "live.client.endpoint is not http:// (TLS stays with net/http)"
	case c.ProxyURL != "":
		return "live.client.proxy_url is set"
	case c.Auth.HasValue():
		return "live.client.auth is set"
	case c.Compression != "" && c.Compression != "none":
		return "live.client.compression is set"
	case c.Cookies.HasValue():
		return "live.client.cookies is set"
	case len(c.Middlewares) > 0:
		return "live.client.middlewares is set"
	case c.DialerMiddleware.HasValue():
		return "live.client.dialer_middleware is set"
	}
	// force_attempt_http2 (on by default) only matters with TLS.
	for name := range c.Headers.Iter {
		if strings.EqualFold(name, "Host") {
			return "live.client.headers sets Host"
		}
	}
	return ""
}

// Pacer clocks.
const (
	PacerTimerfd = "timerfd" // Linux timerfd; elsewhere the runtime's timer
	PacerRuntime = "runtime"
)

// LiveSweepConfig steps the request rate.
type LiveSweepConfig struct {
	// StepDuration is the length of each step; 0 disables the sweep.
	StepDuration time.Duration `mapstructure:"step_duration"`
	StartRate    float64       `mapstructure:"start_rate"`
	StepRate     float64       `mapstructure:"step_rate"`
	MaxRate      float64       `mapstructure:"max_rate"`
	// SLO: a request is good when it succeeded and meets every set bound.
	TTFT time.Duration `mapstructure:"ttft"`
	TPOT time.Duration `mapstructure:"tpot"`
	E2E  time.Duration `mapstructure:"e2e"`
	// MinGoodRatio is the share of good requests a step must reach.
	MinGoodRatio float64 `mapstructure:"min_good_ratio"`
	// SaturationRatio: a step whose completed rate is below this share of
	// the offered rate has saturated the endpoint.
	SaturationRatio float64 `mapstructure:"saturation_ratio"`
	// Server watches the server's own /metrics during each step and stops
	// on its saturation signals (internal/live/sweep_server.go).
	Server SweepServerConfig `mapstructure:"server"`
	// Search is steps (from start_rate by step_rate until a step fails),
	// bisect (the largest passing rate between start_rate and max_rate, to
	// within Tolerance req/s) or range (one user, then ThroughputUsers
	// users, then Rates open-loop rates evenly between the two rates
	// measured).
	Search    string  `mapstructure:"search"`
	Tolerance float64 `mapstructure:"tolerance"`
	// Rates is how many rates a range search offers between its
	// synchronous and its throughput rate.
	Rates int `mapstructure:"rates"`
	// ThroughputUsers are the closed-loop users of a range search's
	// throughput step; 0 means live.max_concurrency.
	ThroughputUsers int `mapstructure:"throughput_users"`
}

// Sweep searches.
const (
	SweepSteps  = "steps"
	SweepBisect = "bisect"
	SweepRange  = "range"
)

// Validate is called by the collector's configuration walk in every mode, so
// it must accept the default (unset) live section. Checks that apply only
// when mode is live belong in validateLive.
func (*LiveConfig) Validate() error { return nil }

// validateLive checks the live section and the top-level fields live mode
// uses; Config.Validate calls it when mode is live.
func (l *LiveConfig) validateLive(cfg *Config) error {
	errs := l.validateRequest()
	errs = append(errs, l.validateStreamAndPacer()...)
	errs = append(errs, l.validateWorkload()...)
	for name, d := range map[string]time.Duration{"connect": l.Timeouts.Connect, "ttft": l.Timeouts.TTFT, "idle": l.Timeouts.Idle, "total": l.Timeouts.Total} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("live.timeouts.%s: must be > 0, got %v", name, d))
		}
	}
	if l.DrainTimeout < 0 {
		errs = append(errs, fmt.Errorf("live.drain_timeout: must be >= 0, got %v", l.DrainTimeout))
	}
	errs = append(errs, l.Sweep.validate(cfg.Arrival.Type, l.MaxConcurrency))
	errs = append(errs, l.validateRunFields(cfg)...)
	return errors.Join(errs...)
}

// validateRequest checks what every request is built from: the endpoint,
// the model and the body's parameters (errors.Join drops the nils).
func (l *LiveConfig) validateRequest() []error {
	var errs []error
	if l.Client.Endpoint == "" {
		errs = append(errs, errors.New("live.client.endpoint: must be the API base URL, e.g. http://127.0.0.1:8000/v1"))
	} else if u, err := url.Parse(l.Client.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("live.client.endpoint: %q is not an http or https URL", l.Client.Endpoint))
	}
	if l.Client.Timeout != 0 {
		errs = append(errs, fmt.Errorf("live.client.timeout: must be 0 (a whole-request timeout cuts long streams); use live.timeouts.connect, ttft, idle and total, got %v", l.Client.Timeout))
	}
	if l.Model == "" {
		errs = append(errs, errors.New("live.model: must not be empty"))
	}
	if l.Provider == "" {
		errs = append(errs, errors.New("live.provider: must not be empty (e.g. openai, vllm)"))
	}
	errs = append(errs, oneOf("live.operation", l.Operation, allowedLiveOps), oneOf("live.chunk_events", l.ChunkEvents, allowedChunkEvents))
	if l.MaxTokens < 1 {
		errs = append(errs, fmt.Errorf("live.max_tokens: must be >= 1, got %d", l.MaxTokens))
	}
	if l.MaxConcurrency < 0 {
		errs = append(errs, fmt.Errorf("live.max_concurrency: must be >= 0, got %d", l.MaxConcurrency))
	}
	if l.MaxQueue < 0 {
		errs = append(errs, fmt.Errorf("live.max_queue: must be >= 0, got %d", l.MaxQueue))
	}
	if _, err := json.Marshal(l.ExtraBody); err != nil {
		errs = append(errs, fmt.Errorf("live.extra_body: cannot be encoded as JSON: %w", err))
	}
	return errs
}

// validateRunFields checks the top-level fields live mode shares with
// synthetic mode.
func (l *LiveConfig) validateRunFields(cfg *Config) []error {
	var errs []error
	if l.Sweep.StepDuration == 0 {
		errs = append(errs, cfg.Arrival.validate())
	}
	if cfg.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration: must be >= 0, got %v", cfg.Duration))
	}
	if cfg.Requests < 0 {
		errs = append(errs, fmt.Errorf("requests: must be >= 0, got %d", cfg.Requests))
	}
	if cfg.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("batch_size: must be >= 1, got %d", cfg.BatchSize))
	}
	if cfg.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("flush_interval: must be > 0, got %v", cfg.FlushInterval))
	}
	if cfg.Metrics.Interval <= 0 {
		errs = append(errs, fmt.Errorf("metrics.interval: must be > 0, got %v", cfg.Metrics.Interval))
	}
	return errs
}

func (s *LiveSweepConfig) validate(arrivalType string, maxConcurrency int) error {
	if s.StepDuration == 0 {
		if s.Server.MetricsURL != "" {
			return errors.New("live.sweep.server: watches the server between sweep steps; set live.sweep.step_duration")
		}
		return nil
	}
	errs := s.Server.validate()
	if s.StepDuration < 0 {
		errs = append(errs, fmt.Errorf("live.sweep.step_duration: must be >= 0, got %v", s.StepDuration))
	}
	if arrivalType == ArrivalConcurrency {
		errs = append(errs, fmt.Errorf("live.sweep: needs an open-loop arrival.type (%s), got %s",
			strings.Join([]string{ArrivalConstant, ArrivalPoisson, ArrivalGamma}, ", "), arrivalType))
	}
	if s.Search != "" { // "" as steps, for configs built in code
		if err := oneOf("live.sweep.search", s.Search, []string{SweepSteps, SweepBisect, SweepRange}); err != nil {
			errs = append(errs, err)
		}
	}
	if s.Search == SweepRange {
		errs = append(errs, s.validateRange(maxConcurrency)...)
	} else {
		errs = append(errs, s.validateRates()...)
	}
	if s.MinGoodRatio <= 0 || s.MinGoodRatio > 1 {
		errs = append(errs, fmt.Errorf("live.sweep.min_good_ratio: must be in (0, 1], got %v", s.MinGoodRatio))
	}
	if s.SaturationRatio <= 0 || s.SaturationRatio > 1 {
		errs = append(errs, fmt.Errorf("live.sweep.saturation_ratio: must be in (0, 1], got %v", s.SaturationRatio))
	}
	return errors.Join(errs...)
}

// validateRates checks a stepped or bisected sweep: its rates and at least
// one SLO bound, which decides where it stops.
func (s *LiveSweepConfig) validateRates() []error {
	var errs []error
	if s.StartRate <= 0 || s.StepRate <= 0 || s.MaxRate < s.StartRate {
		errs = append(errs, fmt.Errorf("live.sweep: start_rate and step_rate must be > 0 and max_rate >= start_rate, got %v, %v, %v", s.StartRate, s.StepRate, s.MaxRate))
	}
	if s.TTFT <= 0 && s.TPOT <= 0 && s.E2E <= 0 {
		errs = append(errs, errors.New("live.sweep: set at least one SLO bound (ttft, tpot or e2e)"))
	}
	if s.Search == SweepBisect && !(s.Tolerance > 0 && s.Tolerance < s.MaxRate-s.StartRate) {
		errs = append(errs, fmt.Errorf("live.sweep.tolerance: a bisection needs 0 < tolerance < max_rate − start_rate, got %v", s.Tolerance))
	}
	return errs
}

// validateRange checks a range search: its rate count and the users of its
// throughput step (SLO bounds are optional: without them only saturation
// fails a step).
func (s *LiveSweepConfig) validateRange(maxConcurrency int) []error {
	var errs []error
	if s.Rates < 1 || s.Rates > 100 {
		errs = append(errs, fmt.Errorf("live.sweep.rates: must be between 1 and 100, got %d", s.Rates))
	}
	switch {
	case s.ThroughputUsers < 0:
		errs = append(errs, fmt.Errorf("live.sweep.throughput_users: must be >= 0, got %d", s.ThroughputUsers))
	case s.ThroughputUsers == 0 && maxConcurrency == 0:
		errs = append(errs, errors.New("live.sweep.throughput_users: set it, or live.max_concurrency, for the throughput step"))
	}
	return errs
}

// validateStreamAndPacer checks the stream options and live.pacer.
func (l *LiveConfig) validateStreamAndPacer() []error {
	var errs []error
	if l.IncludeUsage && !l.Stream {
		errs = append(errs, errors.New("live.include_usage: applies to streaming requests only; set live.stream: true or include_usage: false"))
	}
	if l.ContinuousUsage && !(l.Stream && l.IncludeUsage) {
		errs = append(errs, errors.New("live.continuous_usage: needs live.stream and live.include_usage"))
	}
	if err := oneOf("live.pacer.clock", l.Pacer.Clock, []string{PacerTimerfd, PacerRuntime}); err != nil {
		errs = append(errs, err)
	}
	if l.Pacer.Spin < 0 || l.Pacer.Spin > 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("live.pacer.spin: must be between 0 and 10ms, got %v", l.Pacer.Spin))
	}
	errs = append(errs, oneOf("live.transport", l.Transport, []string{TransportAuto, TransportRaw, TransportNetHTTP}))
	if why := l.netHTTPOnly(); l.Transport == TransportRaw && why != "" {
		errs = append(errs, fmt.Errorf("live.transport: raw cannot serve this client: %s; use auto or net_http", why))
	}
	return errs
}

// validateWorkload checks where prompts come from: the synthetic prompt,
// live.dataset or live.trace.
func (l *LiveConfig) validateWorkload() []error {
	var errs []error
	for i, m := range l.Prompt.FewShot {
		if err := oneOf(fmt.Sprintf("live.prompt.few_shot[%d].role", i), m.Role, []string{"user", "assistant", "system"}); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, l.Prompt.InputTokens.validate("live.prompt.input_tokens"))
	errs = append(errs, l.Prompt.Tokenizer.Validate("live.prompt.tokenizer"))
	errs = append(errs, l.Dataset.Validate("live.dataset"))
	if l.Trace.Path != "" {
		errs = append(errs, l.validateTrace()...)
	}
	if sp := l.Prompt.SharedPrefix; sp.Groups != 0 || sp.Tokens != 0 {
		errs = append(errs, l.validateSharedPrefix()...)
	}
	if l.Prompt.ContextWindow <= l.MaxTokens {
		errs = append(errs, fmt.Errorf("live.prompt.context_window: must be larger than live.max_tokens (%d), got %d", l.MaxTokens, l.Prompt.ContextWindow))
	}
	return append(errs, l.Session.validate(l))
}

// validateTrace checks live.trace and what it excludes: a dataset and a
// sweep.
func (l *LiveConfig) validateTrace() []error {
	errs := []error{l.Trace.Validate("live.trace")}
	if l.Dataset.Path != "" {
		errs = append(errs, errors.New("live.trace: a trace brings its own prompts; remove live.dataset"))
	}
	if l.Sweep.StepDuration > 0 {
		errs = append(errs, errors.New("live.trace: a trace sets the send times; remove live.sweep"))
	}
	return errs
}

// validateSharedPrefix checks live.prompt.shared_prefix: its groups, its
// size against the context window, and that the prompt is synthetic.
func (l *LiveConfig) validateSharedPrefix() []error {
	var errs []error
	sp := l.Prompt.SharedPrefix
	switch {
	case sp.Groups < 1 || sp.Groups > 100_000:
		errs = append(errs, fmt.Errorf("live.prompt.shared_prefix.groups: must be from 1 to 100000, got %d", sp.Groups))
	case sp.Tokens < 1 || sp.Tokens+l.MaxTokens >= l.Prompt.ContextWindow:
		errs = append(errs, fmt.Errorf("live.prompt.shared_prefix.tokens: must be >= 1 and leave room for max_tokens (%d) in context_window (%d), got %d", l.MaxTokens, l.Prompt.ContextWindow, sp.Tokens))
	}
	if l.Dataset.Path != "" || l.Trace.Path != "" {
		errs = append(errs, errors.New("live.prompt.shared_prefix: applies to the synthetic prompt; live.dataset and live.trace bring their own"))
	}
	return errs
}

func (s LiveSessionConfig) validate(l *LiveConfig) error {
	if s.Turns == 0 && s.ThinkTime == 0 {
		return nil
	}
	var errs []error
	if s.Turns < 2 || s.Turns > 1000 {
		errs = append(errs, fmt.Errorf("live.session.turns: must be from 2 to 1000 (0 turns sessions off), got %d", s.Turns))
	}
	if s.ThinkTime < 0 {
		errs = append(errs, fmt.Errorf("live.session.think_time: must not be negative, got %s", s.ThinkTime))
	}
	if l.Operation != LiveOpChat {
		errs = append(errs, fmt.Errorf("live.session: a conversation needs operation %q, got %q", LiveOpChat, l.Operation))
	}
	if l.Trace.Path != "" {
		errs = append(errs, errors.New("live.session: a trace sets every request's send time; remove live.trace"))
	}
	if l.Dataset.Path != "" && l.Dataset.Format != dataset.FormatShareGPT {
		errs = append(errs, fmt.Errorf("live.session: sessions from live.dataset need format %q (conversations with later human turns), got %q", dataset.FormatShareGPT, l.Dataset.Format))
	}
	if l.Sweep.StepDuration > 0 {
		errs = append(errs, errors.New("live.session: a sweep counts single requests per step; remove live.sweep"))
	}
	return errors.Join(errs...)
}

// SweepServerConfig is sweep.server.
type SweepServerConfig struct {
	// MetricsURL is the server's Prometheus page, e.g.
	// http://vllm:8000/metrics; empty turns the watch off.
	MetricsURL string `mapstructure:"metrics_url"`
	// Interval between two scrapes during a step.
	Interval time.Duration `mapstructure:"interval"`
	// KVCacheUsage (0..1) held for Sustained within a step stops the sweep;
	// 0 turns the check off.
	KVCacheUsage float64       `mapstructure:"kv_cache_usage"`
	Sustained    time.Duration `mapstructure:"sustained"`
	// Preemptions stops the sweep at a step during which the server
	// preempted a request.
	Preemptions bool `mapstructure:"preemptions"`
	// QueueGrowth stops the sweep at a step whose waiting queue rose: a
	// least-squares slope above zero at Confidence, by one request or more
	// over the step.
	QueueGrowth bool    `mapstructure:"queue_growth"`
	Confidence  float64 `mapstructure:"confidence"`
}

func defaultSweepServer() SweepServerConfig {
	return SweepServerConfig{Interval: time.Second, KVCacheUsage: 0.95, Sustained: 5 * time.Second,
		Preemptions: true, QueueGrowth: true, Confidence: 0.95}
}

func (c *SweepServerConfig) validate() []error {
	if c.MetricsURL == "" {
		return nil
	}
	var errs []error
	if u, err := url.Parse(c.MetricsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("live.sweep.server.metrics_url: must be an http(s) URL of the server's /metrics, got %q", c.MetricsURL))
	}
	if c.Interval <= 0 {
		errs = append(errs, fmt.Errorf("live.sweep.server.interval: must be > 0, got %v", c.Interval))
	}
	if c.KVCacheUsage < 0 || c.KVCacheUsage > 1 {
		errs = append(errs, fmt.Errorf("live.sweep.server.kv_cache_usage: must be in [0, 1] (0: off), got %v", c.KVCacheUsage))
	}
	if c.Sustained < 0 {
		errs = append(errs, fmt.Errorf("live.sweep.server.sustained: must be >= 0, got %v", c.Sustained))
	}
	if c.Confidence < 0.5 || c.Confidence >= 1 {
		errs = append(errs, fmt.Errorf("live.sweep.server.confidence: must be in [0.5, 1), got %v", c.Confidence))
	}
	return errs
}
