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
)
