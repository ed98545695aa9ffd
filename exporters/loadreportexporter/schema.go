package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import "time"

// The report's schema: report.json is Report, encoded as JSON. The builders
// that fill it are in report.go (rows, timeline), slo.go (verdicts, load
// curve), summary.go and shards.go.

// Report is the load-test report; report.json is this structure.
type Report struct {
	Title       string       `json:"title"`
	RunID       string       `json:"run_id,omitempty"`
	GeneratedAt time.Time    `json:"generated_at"`
	Final       bool         `json:"final"`
	Run         RunInfo      `json:"run"`
	Accuracy    AccuracyInfo `json:"accuracy"`
	Verdict     string       `json:"verdict"`
	// Summary is what to read first: the verdict, the SLO that decided it
	// and the number to look at (summary.go).
	Summary Summary     `json:"summary"`
	SLOs    []SLOResult `json:"slos"`
	// SLOsNotEvaluated names the SLOs on a signal this pipeline does not
	// have (span_loss without span_guard); they take no part in the verdict.
	SLOsNotEvaluated []string     `json:"slos_not_evaluated,omitempty"`
	Goodput          GoodputInfo  `json:"goodput_objectives"`
	Total            Row          `json:"total"`
	Rows             []Row        `json:"rows"`
	SpanLoss         *SpanLoss    `json:"span_loss,omitempty"`
	GPUs             []GPUSummary `json:"gpus,omitempty"`
	Timeline         Timeline     `json:"timeline"`
	LoadCurve        *LoadCurve   `json:"load_curve,omitempty"`
	// Workload breaks TTFT down by session turn and cacheable share
	// (workload.go); absent when the spans carry neither.
	Workload *WorkloadBreakdown `json:"workload,omitempty"`
	// ServerSide joins each client span with the server's span of the same
	// request and splits the time into client and server parts
	// (decompose.go); absent when no server span arrived.
	ServerSide *ServerSide `json:"server_side,omitempty"`
	// Server is what the inference server's own /metrics showed during the
	// run (servermetrics.go); absent without them.
	Server *ServerMetrics `json:"server,omitempty"`
	// Saturation lists signs that the target ran out of capacity
	// (saturation.go), earliest first.
	Saturation []SaturationWarning `json:"saturation,omitempty"`
	// SteadyState is the stretch in which requests in flight stayed near the
	// generator's bound (steady.go); absent when the spans carry no bound.
	SteadyState *SteadyState `json:"steady_state,omitempty"`
	// Baseline compares the total with an earlier report (baseline.go).
	Baseline   *BaselineComparison `json:"baseline,omitempty"`
	Histograms Histograms          `json:"histograms"`
	// Shards is the per-shard view of a distributed run (shards.go).
	Shards *ShardReport `json:"shards,omitempty"`
	// Files are the files written next to this one, by format.
	Files []string `json:"files"`
}

// RunInfo describes the run window.
type RunInfo struct {
	Start     *time.Time `json:"start,omitempty"`
	End       *time.Time `json:"end,omitempty"`
	DurationS float64    `json:"duration_s"`
	Source    string     `json:"source"` // spans, metrics, spans+metrics or none
	Spans     int64      `json:"spans_seen"`
}

// AccuracyInfo states how the percentiles are computed.
type AccuracyInfo struct {
	Sketch           string  `json:"sketch"`
	RelativeAccuracy float64 `json:"relative_accuracy"`
	Note             string  `json:"note"`
}

// GoodputInfo lists the goodput objectives in seconds (0 = not applied).
type GoodputInfo struct {
	TTFT float64 `json:"ttft_s"`
	TPOT float64 `json:"tpot_s"`
	E2E  float64 `json:"e2e_s"`
}

// SLOResult is one objective's outcome.
type SLOResult struct {
	Name       string   `json:"name"`
	Quantity   string   `json:"quantity"`
	Percentile float64  `json:"percentile,omitempty"`
	Value      *float64 `json:"value"`
	Unit       string   `json:"unit"`
	Objective  string   `json:"objective"`
	Verdict    string   `json:"verdict"`

	cfg *SLOConfig // the objective judged (nil in a report read back from JSON)
}

// Latency is the distribution of one latency in seconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// ErrorCount is the count of one error.type.
type ErrorCount struct {
	Type      string  `json:"type"`
	Count     int64   `json:"count"`
	Share     float64 `json:"share_of_requests"`
	Cancelled bool    `json:"cancelled,omitempty"`
}

// Row is one target/model/scenario (or the total).
type Row struct {
	Target        string       `json:"target"`
	Model         string       `json:"model"`
	Scenario      string       `json:"scenario"`
	Source        string       `json:"source"`
	Requests      int64        `json:"requests"`
	Successes     int64        `json:"successes"`
	Errors        int64        `json:"errors"`
	Cancelled     int64        `json:"cancelled"`
	ErrorRate     float64      `json:"error_rate"`
	CancelledRate float64      `json:"cancelled_rate"`
	ErrorsByType  []ErrorCount `json:"errors_by_type"`
	TTFT          *Latency     `json:"ttft,omitempty"`
	// TimeToFirstAnswer is a reasoning model's time to its first answer
	// token (after its thinking), from llm_loadgen.time_to_first_answer.
	TimeToFirstAnswer *Latency `json:"time_to_first_answer,omitempty"`
	// ClientDelay is the load generator's own delay at the first token:
	// how long after the kernel received it the client saw it
	// (llm_loadgen.client_delay.first_token, with kernel timestamps). TTFT
	// and ITL exclude it; large values mean the generator is the bottleneck.
	ClientDelay *Latency `json:"client_delay,omitempty"`
	// GeneratorCPU is the CPU the load generator's process used when each
	// request ended, as a fraction of the CPUs it may use
	// (llm_loadgen.process.cpu_utilization): a distribution of fractions,
	// not of seconds.
	GeneratorCPU  *Latency `json:"generator_cpu,omitempty"`
	ITL           *Latency `json:"itl,omitempty"`
	ITLSource     string   `json:"itl_source,omitempty"`
	TPOT          *Latency `json:"tpot,omitempty"`
	E2E           *Latency `json:"e2e,omitempty"`
	DurationS     float64  `json:"duration_s"`
	RequestRate   float64  `json:"requests_per_s"`
	OutputTokenPS float64  `json:"output_tokens_per_s"`
	InputTokens   int64    `json:"input_tokens"`
	OutputTokens  int64    `json:"output_tokens"`
	GoodRequests  int64    `json:"good_requests"`
	GoodputRate   float64  `json:"goodput_per_s"`
	GoodputRatio  float64  `json:"goodput_ratio"`
	Concurrency   float64  `json:"mean_concurrency"`
	PeakConc      float64  `json:"peak_concurrency,omitempty"`
	Verdict       string   `json:"verdict"`
}

// BaselineComparison is the run's total against an earlier report.json.
type BaselineComparison struct {
	Path        string          `json:"path"`
	RunID       string          `json:"run_id,omitempty"`
	GeneratedAt time.Time       `json:"generated_at"`
	Tolerance   float64         `json:"tolerance"`
	Verdict     string          `json:"verdict"` // REGRESSED, IMPROVED or SAME
	Regressed   []string        `json:"regressed,omitempty"`
	Metrics     []BaselineDelta `json:"metrics"`
}

// BaselineDelta is one metric against the baseline (seconds for latencies);
// Relative is (current − baseline) / baseline, absent for a zero baseline.
type BaselineDelta struct {
	Metric   string   `json:"metric"`
	Baseline float64  `json:"baseline"`
	Current  float64  `json:"current"`
	Relative *float64 `json:"relative,omitempty"`
	Verdict  string   `json:"verdict"`
}

// WorkloadBreakdown is the TTFT of successful requests by session turn
// (llm_loadgen.session.turn) and by the share of their input tokens a
// prefix cache could serve (a session's history, a shared prefix).
type WorkloadBreakdown struct {
	ByTurn           []BreakdownRow `json:"by_turn,omitempty"`
	ByCacheableShare []BreakdownRow `json:"by_cacheable_share,omitempty"`
}

// BreakdownRow is one row of a breakdown; TTFT.Count is its requests.
type BreakdownRow struct {
	Label string   `json:"label"`
	TTFT  *Latency `json:"ttft"`
}

// SpanLoss is what span_guard removed.
type SpanLoss struct {
	Source   string           `json:"source"` // metrics or summary_spans
	Received int64            `json:"received"`
	Dropped  int64            `json:"dropped"`
	Refused  int64            `json:"refused"`
	Ratio    float64          `json:"ratio"`
	ByReason map[string]int64 `json:"by_reason"`
}

// GPUSummary summarizes one GPU.
type GPUSummary struct {
	ID               string   `json:"id"`
	Name             string   `json:"name,omitempty"`
	PeakMemoryBytes  float64  `json:"peak_memory_bytes"`
	MemoryLimitBytes float64  `json:"memory_limit_bytes,omitempty"`
	FirstMemoryBytes float64  `json:"first_memory_bytes"`
	LastMemoryBytes  float64  `json:"last_memory_bytes"`
	GrowthMiBPerMin  *float64 `json:"memory_growth_mib_per_min"`
	MeanUtilization  *float64 `json:"mean_utilization"`
	PeakUtilization  *float64 `json:"peak_utilization"`
	Samples          int64    `json:"memory_samples"`
}

// Timeline is the run over time.
type Timeline struct {
	ResolutionS float64     `json:"resolution_s"`
	Points      []TimePoint `json:"points"`
}

// TimePoint is one timeline interval; latencies are of requests sent in it.
type TimePoint struct {
	OffsetS     float64  `json:"offset_s"`
	Started     int64    `json:"started"`
	Completed   int64    `json:"completed"`
	Errors      int64    `json:"errors"`
	AchievedRPS float64  `json:"achieved_rps"`
	TargetRPS   *float64 `json:"target_rps,omitempty"`
	Concurrency float64  `json:"concurrency"`
	TokensPS    float64  `json:"output_tokens_per_s"`
	TTFTP50     *float64 `json:"ttft_p50,omitempty"`
	TTFTP95     *float64 `json:"ttft_p95,omitempty"`
	TTFTP99     *float64 `json:"ttft_p99,omitempty"`
	E2EP50      *float64 `json:"e2e_p50,omitempty"`
	E2EP95      *float64 `json:"e2e_p95,omitempty"`
	E2EP99      *float64 `json:"e2e_p99,omitempty"`
}

// LoadCurve is latency against offered load, one point per load level.
type LoadCurve struct {
	Basis  string      `json:"basis"` // target_rate or arrival_rate
	Points []LoadPoint `json:"points"`
	Knee   *LoadPoint  `json:"knee,omitempty"`
}

// LoadPoint is one load level.
type LoadPoint struct {
	OfferedRPS  float64 `json:"offered_rps"`
	AchievedRPS float64 `json:"achieved_rps"`
	Requests    int64   `json:"requests"`
	LatencyP95  float64 `json:"latency_p95_s"`
	Latency     string  `json:"latency"` // ttft or e2e
}

// Histograms are the TTFT and ITL distributions for charts.
type Histograms struct {
	TTFT []HistBin `json:"ttft"`
	ITL  []HistBin `json:"itl"`
}

// HistBin is one histogram bar [Lo, Hi) in seconds.
type HistBin struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count float64 `json:"count"`
}

// ServerSide is the per-request join of client and server spans: counts,
// each part's distribution, and the parts of the requests at TTFT and E2E
// p50/p95/p99 (they add up to that percentile's value).
type ServerSide struct {
	ClientSpans   int64   `json:"client_spans"`
	ServerSpans   int64   `json:"server_spans"`
	Joined        int64   `json:"joined"`
	JoinedByTrace int64   `json:"joined_by_trace_only"`
	JoinedRatio   float64 `json:"joined_ratio"`
	Decomposed    int64   `json:"decomposed"`
	// WithoutTTFT are joined requests that either side gives no TTFT for
	// (failed or not streamed): counted, not decomposed.
	WithoutTTFT      int64            `json:"joined_without_ttft"`
	NetworkBelowZero int64            `json:"network_below_zero"`
	UnjoinedClient   map[string]int64 `json:"unjoined_client"`
	UnjoinedServer   map[string]int64 `json:"unjoined_server"`
	WaitingClient    int64            `json:"waiting_client"`
	WaitingServer    int64            `json:"waiting_server"`
	HoldS            float64          `json:"hold_s"`
	ServerTTFT       *Latency         `json:"server_ttft,omitempty"`
	ServerE2E        *Latency         `json:"server_e2e,omitempty"`
	Parts            []PartLatency    `json:"parts"`
	TTFT             []Stack          `json:"ttft_at"`
	E2E              []Stack          `json:"e2e_at"`
	Dominant         string           `json:"dominant,omitempty"`
	Note             string           `json:"note"`
}

// PartLatency is one part's own distribution over the decomposed requests.
type PartLatency struct {
	Part string `json:"part"`
	Latency
}

// Stack is the mean parts of the requests at one percentile of a total.
type Stack struct {
	Percentile float64     `json:"percentile"`
	TotalS     float64     `json:"total_s"`
	Requests   int64       `json:"requests"`
	Parts      []StackPart `json:"parts"`
	Dominant   string      `json:"dominant"`
}

// StackPart is one part of a Stack, in seconds and as a share of its total.
type StackPart struct {
	Part  string  `json:"part"`
	S     float64 `json:"s"`
	Share float64 `json:"share"`
}

// ServerMetrics is the inference server's metrics over the run: gauges
// summarized and over time, counters and histograms as their increase from
// the first scrape to the last.
type ServerMetrics struct {
	Server string `json:"server"`
	// Names are the metric names read, by role.
	Names    map[string]string  `json:"names"`
	Gauges   []GaugeSummary     `json:"gauges"`
	Counters map[string]float64 `json:"counters"`
	// PrefixCacheHitRate is prefix_hits / prefix_queries over the run.
	PrefixCacheHitRate *float64          `json:"prefix_cache_hit_rate,omitempty"`
	Histograms         []ServerHistogram `json:"histograms"`
	Timeline           []ServerPoint     `json:"timeline"`
	// FirstScrapeS and LastScrapeS are the first and the latest scrape, in
	// seconds from the run's first request (0 when before it). Counters
	// and histograms are the increase between them.
	FirstScrapeS *float64 `json:"first_scrape_s,omitempty"`
	LastScrapeS  *float64 `json:"last_scrape_s,omitempty"`
}

// GaugeSummary is one gauge over the run; the slope (per second) with its
// confidence half-width.
type GaugeSummary struct {
	Role        string   `json:"role"`
	Samples     int64    `json:"samples"`
	Mean        float64  `json:"mean"`
	Max         float64  `json:"max"`
	Last        float64  `json:"last"`
	SlopePerS   *float64 `json:"slope_per_s,omitempty"`
	SlopeMargin *float64 `json:"slope_margin,omitempty"`
}

// ServerHistogram is a server latency histogram's increase over the run in
// seconds, next to the client's measure of the same quantity.
type ServerHistogram struct {
	Role   string   `json:"role"`
	Name   string   `json:"name"`
	Count  float64  `json:"count"`
	Mean   float64  `json:"mean"`
	P50    float64  `json:"p50"`
	P95    float64  `json:"p95"`
	P99    float64  `json:"p99"`
	Client *Latency `json:"client,omitempty"`
}

// ServerPoint is one scrape of the gauges, seconds from the run's first
// request.
type ServerPoint struct {
	OffsetS      float64  `json:"offset_s"`
	KVCacheUsage *float64 `json:"kv_cache_usage,omitempty"`
	Running      *float64 `json:"running,omitempty"`
	Waiting      *float64 `json:"waiting,omitempty"`
}

// SaturationWarning is one sign of saturation: its kind, when it started
// (seconds from the run's first request) and what it was.
type SaturationWarning struct {
	Kind       string   `json:"kind"`
	StartedAtS *float64 `json:"started_at_s,omitempty"`
	Message    string   `json:"message"`
}

// SteadyState is the longest stretch of the run in which requests in
// flight stayed at Share of the bound (Cap) or more, and the latencies of
// the requests sent in it; StartS and EndS are seconds from the timeline's
// start. Without such a stretch only Note, Cap and PeakInFlight are set.
type SteadyState struct {
	Cap          float64  `json:"cap"`
	Share        float64  `json:"share"`
	PeakInFlight float64  `json:"peak_in_flight"`
	StartS       *float64 `json:"start_s,omitempty"`
	EndS         *float64 `json:"end_s,omitempty"`
	Requests     int64    `json:"requests"`
	TTFT         *Latency `json:"ttft,omitempty"`
	E2E          *Latency `json:"e2e,omitempty"`
	Note         string   `json:"note,omitempty"`
}
