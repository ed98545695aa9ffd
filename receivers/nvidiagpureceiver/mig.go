package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// scrapeMIG emits one resource per MIG device of a MIG-enabled GPU.
func (sc *gpuScraper) scrapeMIG(md pmetric.Metrics, g *gpu, now pcommon.Timestamp, errs *scrapeErrors, lost *bool) {
	if !(sc.enabled[mMIGMemoryUsage] || sc.enabled[mMIGMemoryLimit] || sc.enabled[mMIGMemoryUtilization]) {
		return
	}
	if g.calls.skip("GetMigMode") {
		return
	}
	current, _, ret := g.dev.GetMigMode()
	if !sc.ok(g, &g.calls, "GetMigMode", ret, errs, lost) || current != nvml.DEVICE_MIG_ENABLE {
		return
	}
	count, ret := g.dev.GetMaxMigDeviceCount()
	if !sc.ok(g, &g.calls, "GetMaxMigDeviceCount", ret, errs, lost) {
		return
	}
	for i := 0; i < count; i++ {
		sc.scrapeMIGDevice(md, g, i, now, errs, lost)
	}
}

// scrapeMIGDevice emits the resource of the MIG device in slot i, if any.
func (sc *gpuScraper) scrapeMIGDevice(md pmetric.Metrics, g *gpu, i int, now pcommon.Timestamp, errs *scrapeErrors, lost *bool) {
	mdev, ret := g.dev.GetMigDeviceHandleByIndex(i)
	if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
		return // no MIG device in this slot
	}
	if !sc.ok(g, &g.calls, "GetMigDeviceHandleByIndex", ret, errs, lost) {
		return
	}
	uuid, ret := mdev.GetUUID()
	if !sc.ok(g, &g.calls, "GetUUID(mig)", ret, errs, lost) {
		return
	}
	guard := g.mig[uuid]
	if guard == nil {
		guard = &callGuard{unsupported: map[string]bool{}}
		g.mig[uuid] = guard
	}
	rm, b := sc.builder(md, now)
	a := rm.Resource().Attributes()
	sc.putMIGResource(a, g, mdev, uuid, i)
	sc.putOwner(a, uuid)
	if gi, ok := a.Get("nvidia.gpu.mig.gpu_instance_id"); ok {
		g.migByGI[gi.Int()] = uuid
	}
	if used, total, good := sc.memory(g, guard, mdev, errs, lost); good {
		b.int(mMIGMemoryUsage, int64(used))
		b.int(mMIGMemoryLimit, int64(total))
		if total > 0 {
			b.double(mMIGMemoryUtilization, float64(used)/float64(total))
		}
	}
}

// putMIGResource describes a MIG device and the GPU it is part of.
func (sc *gpuScraper) putMIGResource(a pcommon.Map, g *gpu, mdev nvml.Device, uuid string, i int) {
	a.PutStr("hw.id", uuid)
	a.PutStr("hw.parent", g.uuid)
	a.PutStr("hw.type", "gpu")
	a.PutStr("hw.vendor", "NVIDIA")
	if name, ret := mdev.GetName(); ret == nvml.SUCCESS {
		a.PutStr("hw.model", name)
	}
	a.PutInt("nvidia.gpu.index", int64(g.index))
	a.PutInt("nvidia.gpu.mig.index", int64(i))
	if gi, ret := mdev.GetGpuInstanceId(); ret == nvml.SUCCESS {
		a.PutInt("nvidia.gpu.mig.gpu_instance_id", int64(gi))
	}
	if ci, ret := mdev.GetComputeInstanceId(); ret == nvml.SUCCESS {
		a.PutInt("nvidia.gpu.mig.compute_instance_id", int64(ci))
	}
	if sc.s.hostname != "" {
		a.PutStr("host.name", sc.s.hostname)
	}
}
