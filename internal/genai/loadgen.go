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
