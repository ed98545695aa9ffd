package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Resource attributes with which llm_loadgen identifies a run and its shard
// on every span and metric it emits, so that a gateway's load_report can merge
// the shards of a distributed run and tell them apart. They are not GenAI
// conventions: the llm_loadgen.* namespace is the load generator's own.
const (
	AttrLoadgenRunID      = "llm_loadgen.run.id"
	AttrLoadgenShardIndex = "llm_loadgen.shard.index"
	AttrLoadgenShardCount = "llm_loadgen.shard.count"
)

// Span attributes of llm_loadgen's live client spans that other components
// read: load_report's per-request CSV and its target-rate line.
const (
	// AttrLoadgenTargetRate is the offered request rate (requests per second)
	// the schedule had when the request was due.
	AttrLoadgenTargetRate = "llm_loadgen.target_rate"
	// AttrLoadgenSequence is the request's number in the run.
	AttrLoadgenSequence = "llm_loadgen.sequence"
	// AttrLoadgenQueueTime is the time from the scheduled send to leaving
	// the client-side queue, in seconds.
	AttrLoadgenQueueTime = "llm_loadgen.queue_time"
	// AttrLoadgenITLMean and AttrLoadgenITLMax are the mean and largest gap
	// between content chunks, in seconds.
	AttrLoadgenITLMean = "llm_loadgen.itl_mean"
	AttrLoadgenITLMax  = "llm_loadgen.itl_max"
	// AttrLoadgenITLPerToken is the mean inter-token latency when the
	// chunks' token counts are known: the gaps' sum over their tokens.
	AttrLoadgenITLPerToken = "llm_loadgen.itl_per_token_mean"
	// AttrLoadgenConcurrencyCap is the most requests the generator keeps in
	// flight when the request was sent (this shard's virtual users in a
	// closed loop, live.max_concurrency in an open one); load_report's
	// steady state is the time in-flight requests stay near it.
	AttrLoadgenConcurrencyCap = "llm_loadgen.concurrency_cap"
	// AttrLoadgenTimeToFirstAnswer is a reasoning model's time from the
	// scheduled send to its first content that is not thinking, in seconds;
	// load_report shows its percentiles next to TTFT.
	AttrLoadgenTimeToFirstAnswer = "llm_loadgen.time_to_first_answer"
	// AttrLoadgenTimestamps says which clock timed the request's events:
	// "kernel" (when the kernel received each event's bytes; the client's
	// own delay is then kept out of TTFT, ITL and E2E) or "user" (when the
	// client's parser saw them).
	AttrLoadgenTimestamps = "llm_loadgen.timestamps"
	// AttrLoadgenClientDelayFirst, AttrLoadgenClientDelayMean and
	// AttrLoadgenClientDelayMax are the client's own delay (user-space time
	// minus kernel receive time) at the first content event and over all
	// events, in seconds; set with kernel timestamps. load_report shows
	// their percentiles and calls a run client-bound when they are large.
	AttrLoadgenClientDelayFirst = "llm_loadgen.client_delay.first_token"
	AttrLoadgenClientDelayMean  = "llm_loadgen.client_delay.mean"
	AttrLoadgenClientDelayMax   = "llm_loadgen.client_delay.max"
	// AttrLoadgenSharedStamps counts a request's content events that carry
	// the same kernel receive time as the next one (set when not 0). The
	// kernel keeps one time for the segments a reader leaves waiting, the
	// latest: an event the client read only after the next had arrived is
	// stamped with the next one's arrival, so its TTFT or gap is an upper
	// bound and the gap after it 0. A server that writes two events at once
	// counts the same way.
	AttrLoadgenSharedStamps = "llm_loadgen.client_delay.shared_stamps"
	// AttrLoadgenProcessCPU is the CPU the load generator's process used
	// over about the last second when the request ended, as a fraction of
	// the CPUs it may use (GOMAXPROCS). load_report calls a run
	// client-bound when its median is 0.9 or more.
	AttrLoadgenProcessCPU = "llm_loadgen.process.cpu_utilization"
)

// Values of AttrLoadgenTimestamps.
const (
	TimestampsKernel = "kernel"
	TimestampsUser   = "user"
)

// Span attributes of llm_loadgen's synthetic spans that other components read.
const (
	// AttrLoadgenScenario is the scenario (chat, rag, agent, embeddings) of a
	// request, on its root span; load_report's default dimensions.scenario.
	AttrLoadgenScenario = "llm_loadgen.scenario"
	// AttrLoadgenSessionTurn is a live request's turn in its multi-turn
	// session (1-based), and AttrLoadgenHistoryTokens the estimated tokens
	// of the earlier turns it carried; AttrLoadgenCacheableTokens the
	// tokens a shared-prefix request shares with its group. load_report
	// breaks TTFT down by them.
	AttrLoadgenSessionTurn     = "llm_loadgen.session.turn"
	AttrLoadgenHistoryTokens   = "llm_loadgen.session.history_tokens"
	AttrLoadgenCacheableTokens = "llm_loadgen.prefix.cacheable_tokens"
)

// Span events llm_loadgen writes that other components read.
const (
	// EventLoadgenResponseChunk marks one streamed chunk on a synthetic model
	// call of the GenAI dialects; load_report takes the gaps between
	// consecutive ones as ITL samples (with the dialect chunk events of
	// ChunkEventNames).
	EventLoadgenResponseChunk = "gen_ai.response.chunk"
	// EventLoadgenFirstChunk marks the first content chunk of a live
	// request; llm_semconv's default derive.first_chunk_events derives the
	// time to first chunk from it.
	EventLoadgenFirstChunk = "gen_ai.first_chunk"
)

// Metrics llm_loadgen emits that load_report reads.
const (
	// MetricLoadgenScheduleLag is the histogram of how late (seconds) the
	// scheduler of an identified (sharded) run started each request.
	MetricLoadgenScheduleLag = "llm_loadgen.schedule.lag"
	// MetricLoadgenScheduleSkipped counts the arrivals such a run skipped.
	MetricLoadgenScheduleSkipped = "llm_loadgen.schedule.skipped"
	// MetricLoadgenTargetRate is llm_loadgen's self-metric (gauge) of the
	// profile's target rate; load_report's default target_rate.metrics.
	MetricLoadgenTargetRate = "otelcol_llm_loadgen_target_rate"
)

// EventLoadgenLiveChunk is the span event live mode writes for each content
// chunk (chunk_events: all), at the time the chunk was read. When the
// server said how many tokens the chunk carried (usage on every chunk), the
// event has AttrLoadgenChunkTokens: load_report then splits the gap that
// chunk ended into that many inter-token latencies.
const (
	EventLoadgenLiveChunk  = "gen_ai.chunk"
	AttrLoadgenChunkTokens = "llm_loadgen.chunk.tokens"
)

// ChunkEventNames are the span event names that mark one streamed chunk, as
// llm_loadgen writes them per synthetic dialect (GenAI, OpenLLMetry, legacy
// llm.*) and in live mode; load_report reads them for ITL.
var ChunkEventNames = []string{EventLoadgenResponseChunk, OpenLLMetryEventCompletionChunk, LegacyLLMEventCompletionChunk, EventLoadgenLiveChunk}

// error.type values of llm_loadgen's requests that the client cancelled;
// load_report's default cancelled_error_types counts them as cancelled, not
// as errors.
const (
	// LoadgenErrorTypeCancelled: a live request cancelled by the client
	// (the run ended or the context was cancelled).
	LoadgenErrorTypeCancelled = "cancelled"
	// LoadgenErrorTypeContextCanceled: a synthetic request of the cancel
	// fault.
	LoadgenErrorTypeContextCanceled = "context_canceled"
)
