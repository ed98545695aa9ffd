// Package nvidiagpureceiver implements the nvidia_gpu receiver: it reads NVIDIA
// GPUs through NVML (github.com/NVIDIA/go-nvml) and emits hw.gpu.* metrics in
// the OpenTelemetry hardware semantic conventions, NVIDIA-specific extras under
// the nvidia.gpu.* namespace (clocks, clock-event reasons, NVLink, PCIe replays,
// XID counts, remapped rows, per MIG instance and per process), and XID and
// other critical NVML events as log records.
//
// Utilization and power are summarized over each collection interval from the
// samples NVML buffers (average and maximum), not read once. Calls a driver does
// not support are detected once per device and skipped from then on; an error in
// one device or call is reported as a partial scrape error. Without NVML or a
// GPU the receiver stays idle (on_missing: warn) or refuses to start
// (on_missing: fail).
package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"
