package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// returnReasons names NVML return codes for telemetry attributes and log
// messages; it does not need the library to be loaded.
var returnReasons = map[nvml.Return]string{
	nvml.SUCCESS:                       "success",
	nvml.ERROR_UNINITIALIZED:           "uninitialized",
	nvml.ERROR_INVALID_ARGUMENT:        "invalid_argument",
	nvml.ERROR_NOT_SUPPORTED:           "not_supported",
	nvml.ERROR_NO_PERMISSION:           "no_permission",
	nvml.ERROR_NOT_FOUND:               "not_found",
	nvml.ERROR_INSUFFICIENT_SIZE:       "insufficient_size",
	nvml.ERROR_DRIVER_NOT_LOADED:       "driver_not_loaded",
	nvml.ERROR_TIMEOUT:                 "timeout",
	nvml.ERROR_IRQ_ISSUE:               "irq_issue",
	nvml.ERROR_LIBRARY_NOT_FOUND:       "library_not_found",
	nvml.ERROR_FUNCTION_NOT_FOUND:      "function_not_found",
	nvml.ERROR_CORRUPTED_INFOROM:       "corrupted_inforom",
	nvml.ERROR_GPU_IS_LOST:             "gpu_is_lost",
	nvml.ERROR_RESET_REQUIRED:          "reset_required",
	nvml.ERROR_OPERATING_SYSTEM:        "operating_system",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: "driver_mismatch",
	nvml.ERROR_IN_USE:                  "in_use",
	nvml.ERROR_MEMORY:                  "memory",
	nvml.ERROR_NO_DATA:                 "no_data",
	nvml.ERROR_UNKNOWN:                 "unknown",
}

func returnReason(r nvml.Return) string {
	if s, ok := returnReasons[r]; ok {
		return s
	}
	return fmt.Sprintf("nvml_error_%d", int32(r))
}

// initHints explains the usual cause of an initialization failure.
var initHints = map[nvml.Return]string{
	nvml.ERROR_LIBRARY_NOT_FOUND: "libnvidia-ml.so.1 could not be loaded: no NVIDIA driver on this host, or (in a container) the NVIDIA runtime is not in use; set library_path if it lives elsewhere",
	nvml.ERROR_DRIVER_NOT_LOADED: "the NVIDIA kernel driver is not loaded",
	nvml.ERROR_NO_PERMISSION:     "no permission to open the NVIDIA device files (/dev/nvidia*)",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: "the NVML library and the kernel driver have different versions " +
		"(driver updated without a reboot, or a container image ships its own libnvidia-ml)",
}

// unsupported reports whether a return code means the call will never work on
// this device with this driver.
func unsupported(r nvml.Return) bool {
	return r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_FUNCTION_NOT_FOUND
}

// numericValue decodes an NVML sample or field value of the given type.
func numericValue(vt nvml.ValueType, v [8]byte) float64 {
	switch vt {
	case nvml.VALUE_TYPE_DOUBLE:
		return math.Float64frombits(binary.NativeEndian.Uint64(v[:]))
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.NativeEndian.Uint32(v[:4]))
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return float64(binary.NativeEndian.Uint64(v[:]))
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.NativeEndian.Uint64(v[:])))
	case nvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.NativeEndian.Uint32(v[:4])))
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.NativeEndian.Uint16(v[:2]))
	default:
		return math.NaN()
	}
}

// cString converts a NUL-terminated C char array.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// clockEventReasons maps the bits of GetCurrentClocksEventReasons to the
// values of the nvidia.gpu.clock.event_reason attribute.
var clockEventReasons = []struct {
	name string
	bit  uint64
}{
	{"gpu_idle", nvml.ClocksEventReasonGpuIdle},
	{"applications_clocks_setting", nvml.ClocksEventReasonApplicationsClocksSetting},
	{"sw_power_cap", nvml.ClocksEventReasonSwPowerCap},
	{"hw_slowdown", nvml.ClocksThrottleReasonHwSlowdown},
	{"sync_boost", nvml.ClocksEventReasonSyncBoost},
	{"sw_thermal_slowdown", nvml.ClocksEventReasonSwThermalSlowdown},
	{"hw_thermal_slowdown", nvml.ClocksThrottleReasonHwThermalSlowdown},
	{"hw_power_brake_slowdown", nvml.ClocksThrottleReasonHwPowerBrakeSlowdown},
	{"display_clock_setting", nvml.ClocksEventReasonDisplayClockSetting},
}

// Field values read in one GetFieldValues call per GPU.
type fieldDef struct {
	id     uint32
	scope  uint32
	metric string
	attr   string // attribute key
	value  string // attribute value
	scale  float64
}

const allLinks = math.MaxUint32 // scopeId that sums a field over every NVLink

var fieldDefs = []fieldDef{
	{nvml.FI_DEV_PCIE_COUNT_TX_BYTES, 0, mGPUIO, "network.io.direction", "transmit", 1},
	{nvml.FI_DEV_PCIE_COUNT_RX_BYTES, 0, mGPUIO, "network.io.direction", "receive", 1},
	// NVLink throughput counters are in KiB.
	{nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, allLinks, mNVLinkIO, "network.io.direction", "transmit", 1024},
	{nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, allLinks, mNVLinkIO, "network.io.direction", "receive", 1024},
	{nvml.FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, 0, mNVLinkErrors, "nvidia.gpu.nvlink.error_type", "crc_flit", 1},
	{nvml.FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, 0, mNVLinkErrors, "nvidia.gpu.nvlink.error_type", "crc_data", 1},
	{nvml.FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, 0, mNVLinkErrors, "nvidia.gpu.nvlink.error_type", "replay", 1},
	{nvml.FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, 0, mNVLinkErrors, "nvidia.gpu.nvlink.error_type", "recovery", 1},
}
