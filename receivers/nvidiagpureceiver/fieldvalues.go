package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// fieldValues reads the PCIe and NVLink counters in one GetFieldValues call.
// Fields a GPU does not support are remembered and left out of later calls.
func (sc *gpuScraper) fieldValues(g *gpu, b *metricBuilder, errs *scrapeErrors, lost *bool) {
	if *lost || g.calls.skip("GetFieldValues") {
		return
	}
	var defs []fieldDef
	for _, f := range fieldDefs {
		if b.on(f.metric) && !g.calls.skip(fieldCall(f.id)) {
			defs = append(defs, f)
		}
	}
	if len(defs) == 0 {
		return
	}
	values := make([]nvml.FieldValue, len(defs))
	for i, f := range defs {
		values[i] = nvml.FieldValue{FieldId: f.id, ScopeId: f.scope}
	}
	if !sc.ok(g, &g.calls, "GetFieldValues", g.dev.GetFieldValues(values), errs, lost) {
		return
	}
	for i, f := range defs {
		ret := nvml.Return(values[i].NvmlReturn)
		if !sc.ok(g, &g.calls, fieldCall(f.id), ret, errs, lost) {
			continue
		}
		v := numericValue(nvml.ValueType(values[i].ValueType), values[i].Value)
		if v != v {
			continue
		}
		b.int(f.metric, int64(v*f.scale), f.attr, f.value)
	}
}

// fieldCalls names each field for the unsupported-call memory and telemetry.
var fieldCalls = func() map[uint32]string {
	m := make(map[uint32]string, len(fieldDefs))
	for _, f := range fieldDefs {
		m[f.id] = "GetFieldValues(" + strconv.FormatUint(uint64(f.id), 10) + ")"
	}
	return m
}()

func fieldCall(id uint32) string { return fieldCalls[id] }
