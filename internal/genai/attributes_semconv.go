package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Attributes the llm_semconv processor writes in the project namespace, for
// facts the GenAI conventions have no name for. Components downstream of it
// (metrics, reports) can read them.
const (
	// SemconvAttrDialect is the source dialect llm_semconv detected on an item.
	SemconvAttrDialect = "otelcol_llm.semconv.dialect"
	// SemconvAttrUnmapped lists foreign attributes left on the item unmapped.
	SemconvAttrUnmapped = "otelcol_llm.semconv.unmapped"
	// SemconvAttrConflicts lists foreign attributes kept because they
	// disagree with an official value already present.
	SemconvAttrConflicts = "otelcol_llm.semconv.conflicts"
	// SemconvAttrRollupPrefix prefixes the token usage of wrapper spans that
	// aggregate their children (e.g. Vercel AI SDK ai.generateText), kept out
	// of gen_ai.usage.* so that it is not counted twice.
	SemconvAttrRollupPrefix = "otelcol_llm.semconv.rollup."
	// SemconvAttrOriginalSizePrefix prefixes the original size in bytes of a
	// content attribute the content policy truncated, redacted or hashed.
	SemconvAttrOriginalSizePrefix = "otelcol_llm.semconv.original_size."
	// SemconvAttrInvalidPrefix prefixes an official attribute whose value is
	// not in the convention's format and could not be rebuilt (e.g.
	// gen_ai.tool.definitions that is not JSON), moved out of the official name.
	SemconvAttrInvalidPrefix = "otelcol_llm.semconv.invalid."
	// SemconvAttrWrappedText lists the official message attributes that held
	// plain text rather than JSON and were rebuilt as one text message.
	SemconvAttrWrappedText = "otelcol_llm.semconv.wrapped_text"

	// SemconvAttrTimePerOutputToken is (duration - time to first chunk) /
	// (output tokens - 1), in seconds.
	SemconvAttrTimePerOutputToken = "otelcol_llm.time_per_output_token"
	// SemconvAttrOutputTokensPerSecond is output tokens / decode time, where
	// decode time is the span duration minus the time to first chunk when known.
	SemconvAttrOutputTokensPerSecond = "otelcol_llm.output_tokens_per_second"

	// SemconvAttrCostUSD is the span's own cost from the configured price table.
	SemconvAttrCostUSD        = "otelcol_llm.cost.usd"
	SemconvAttrCostInputUSD   = "otelcol_llm.cost.input_usd"
	SemconvAttrCostOutputUSD  = "otelcol_llm.cost.output_usd"
	SemconvAttrCostPriceModel = "otelcol_llm.cost.price_model"
)
