package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// TimePerOutputToken is the mean time per output token after the first one
// (TPOT, also the mean inter-token latency): (e2e − ttft) / (outputTokens − 1).
// It is undefined, and ok is false, below two output tokens.
//
// T is float64 seconds (llm_metrics, load_report, llm_semconv) or a
// time.Duration (llm_loadgen, whose integer division truncates to the
// nanosecond). The caller decides which e2e and ttft are valid (e.g. a TTFT
// within the duration); the formula does not clamp.
func TimePerOutputToken[T ~int64 | ~float64](e2e, ttft T, outputTokens int64) (tpot T, ok bool) {
	if outputTokens < 2 {
		return 0, false
	}
	return (e2e - ttft) / T(outputTokens-1), true
}
