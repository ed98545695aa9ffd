package genai // import "github.com/otelcol-llm/otelcol-llm/internal/genai"

// Hardware semantic-convention names (hw.*) of the GPU metrics that the
// nvidia_gpu receiver writes and load_report reads for the report's GPU
// lines (memory growth, utilization).
const (
	MetricHWGPUMemoryUsage = "hw.gpu.memory.usage"
	MetricHWGPUMemoryLimit = "hw.gpu.memory.limit"
	MetricHWGPUUtilization = "hw.gpu.utilization"

	AttrHWID      = "hw.id"
	AttrHWName    = "hw.name"
	AttrHWModel   = "hw.model"
	AttrHWGPUTask = "hw.gpu.task"

	// HWGPUTaskGeneral is the hw.gpu.task of overall utilization (the
	// others are encoder and decoder).
	HWGPUTaskGeneral = "general"
)
