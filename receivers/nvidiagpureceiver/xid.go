package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	_ "embed"
	"fmt"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.yaml.in/yaml/v3"
)

//go:embed xid.yaml
var xidYAML []byte

// xidInfo is one row of xid.yaml.
type xidInfo struct {
	Code     uint64 `yaml:"code"`
	Meaning  string `yaml:"meaning"`
	Severity string `yaml:"severity"`
	Origin   string `yaml:"origin"`
	Action   string `yaml:"action"`
}

var severities = map[string]plog.SeverityNumber{
	"info":  plog.SeverityNumberInfo,
	"warn":  plog.SeverityNumberWarn,
	"error": plog.SeverityNumberError,
	"fatal": plog.SeverityNumberFatal,
}

var origins = map[string]bool{"application": true, "driver": true, "hardware": true}

// parseXIDTable reads and checks the XID table.
func parseXIDTable(data []byte) (map[uint64]xidInfo, error) {
	var rows []xidInfo
	if err := yaml.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("xid table: %w", err)
	}
	out := make(map[uint64]xidInfo, len(rows))
	for _, r := range rows {
		if _, dup := out[r.Code]; dup {
			return nil, fmt.Errorf("xid table: code %d listed twice", r.Code)
		}
		if _, ok := severities[r.Severity]; !ok {
			return nil, fmt.Errorf("xid table: code %d: severity %q, allowed values: info, warn, error, fatal", r.Code, r.Severity)
		}
		if !origins[r.Origin] {
			return nil, fmt.Errorf("xid table: code %d: origin %q, allowed values: application, driver, hardware", r.Code, r.Origin)
		}
		if r.Meaning == "" {
			return nil, fmt.Errorf("xid table: code %d: empty meaning", r.Code)
		}
		out[r.Code] = r
	}
	return out, nil
}

var xidTable = func() map[uint64]xidInfo {
	t, err := parseXIDTable(xidYAML)
	if err != nil {
		panic(err) // the embedded table is tested; this cannot happen in a release
	}
	return t
}()

// lookupXID returns what is known about an XID code.
func lookupXID(code uint64) xidInfo {
	if info, ok := xidTable[code]; ok {
		return info
	}
	return xidInfo{Code: code, Meaning: "Unknown XID", Severity: "warn", Origin: "unknown", Action: "see NVIDIA's XID catalogue"}
}

// eventType is an NVML event type the receiver can register for.
type eventType struct {
	name     string
	mask     uint64
	severity plog.SeverityNumber
	meaning  string
}

var eventTypes = []eventType{
	{"xid_critical_error", nvml.EventTypeXidCriticalError, plog.SeverityNumberError, "XID critical error"},
	{"double_bit_ecc_error", nvml.EventTypeDoubleBitEccError, plog.SeverityNumberError, "Double bit ECC error"},
	{"single_bit_ecc_error", nvml.EventTypeSingleBitEccError, plog.SeverityNumberWarn, "Single bit ECC error"},
	{"single_bit_ecc_error_storm", nvml.EventTypeSingleBitEccErrorStorm, plog.SeverityNumberWarn, "Storm of single bit ECC errors"},
	{"pstate_change", nvml.EventTypePState, plog.SeverityNumberInfo, "Performance state changed"},
	{"clock_change", nvml.EventTypeClock, plog.SeverityNumberInfo, "Clock changed"},
	{"power_source_change", nvml.EventTypePowerSourceChange, plog.SeverityNumberWarn, "Power source changed"},
	{"dram_retirement", nvml.EventTypeDramRetirementEvent, plog.SeverityNumberWarn, "Memory row retired or remapped"},
	{"dram_retirement_failure", nvml.EventTypeDramRetirementFailure, plog.SeverityNumberError, "Memory row retirement or remapping failed"},
	{"non_fatal_poison_error", nvml.EventTypeNonFatalPoisonError, plog.SeverityNumberWarn, "Non-fatal poison error"},
	{"fatal_poison_error", nvml.EventTypeFatalPoisonError, plog.SeverityNumberFatal, "Fatal poison error"},
	{"gpu_unavailable", nvml.EventTypeGpuUnavailableError, plog.SeverityNumberFatal, "GPU unavailable"},
	{"gpu_recovery_action", nvml.EventTypeGpuRecoveryAction, plog.SeverityNumberError, "GPU recovery action required"},
}

var defaultEventTypes = []string{
	"xid_critical_error", "double_bit_ecc_error", "dram_retirement_failure",
	"fatal_poison_error", "gpu_unavailable", "gpu_recovery_action",
}

var eventTypesByName = func() map[string]eventType {
	m := make(map[string]eventType, len(eventTypes))
	for _, e := range eventTypes {
		m[e.name] = e
	}
	return m
}()

func eventTypeNames() []string {
	out := make([]string, 0, len(eventTypes))
	for _, e := range eventTypes {
		out = append(out, e.name)
	}
	sort.Strings(out)
	return out
}

// eventTypeByMask finds the event type of a delivered event.
func eventTypeByMask(mask uint64) (eventType, bool) {
	for _, e := range eventTypes {
		if e.mask == mask {
			return e, true
		}
	}
	return eventType{}, false
}
