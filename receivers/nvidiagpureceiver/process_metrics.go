package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// processes emits per-process memory and, opt-in, utilization.
func (sc *gpuScraper) processes(g *gpu, b *metricBuilder, errs *scrapeErrors, lost *bool) {
	if b.on(mProcessMemoryUsage) && !g.calls.skip("GetComputeRunningProcesses") {
		sc.processMemory(g, b, errs, lost)
	}
	if b.on(mProcessUtilization) && !g.calls.skip("GetProcessUtilization") {
		sc.processUtilization(g, b, errs, lost)
	}
}

// processMemory emits the memory of each compute process, by PID.
func (sc *gpuScraper) processMemory(g *gpu, b *metricBuilder, errs *scrapeErrors, lost *bool) {
	procs, ret := g.dev.GetComputeRunningProcesses()
	if !sc.ok(g, &g.calls, "GetComputeRunningProcesses", ret, errs, lost) {
		return
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i].Pid < procs[j].Pid })
	for _, p := range procs {
		dp := b.point(mProcessMemoryUsage)
		dp.SetIntValue(int64(p.UsedGpuMemory))
		putProcess(dp.Attributes(), p.Pid, sc.s.procs.lookup(p.Pid))
		device := g.uuid
		if p.GpuInstanceId != noInstance {
			dp.Attributes().PutInt("nvidia.gpu.mig.gpu_instance_id", int64(p.GpuInstanceId))
			device = g.migByGI[int64(p.GpuInstanceId)]
		}
		sc.putOwner(dp.Attributes(), device)
	}
}

// processUtilization emits each process's SM, encoder and decoder
// utilization averaged over its samples since the previous scrape, by PID.
func (sc *gpuScraper) processUtilization(g *gpu, b *metricBuilder, errs *scrapeErrors, lost *bool) {
	samples, ret := g.dev.GetProcessUtilization(g.lastProcUtil)
	if ret == nvml.ERROR_NOT_FOUND || (ret == nvml.ERROR_INSUFFICIENT_SIZE && len(samples) == 0) {
		return // no samples since the previous scrape
	}
	if !sc.ok(g, &g.calls, "GetProcessUtilization", ret, errs, lost) {
		return
	}
	per := sumProcessUtilization(samples, g.lastProcUtil)
	for _, smp := range samples {
		if smp.TimeStamp > g.lastProcUtil {
			g.lastProcUtil = smp.TimeStamp
		}
	}
	pids := make([]uint32, 0, len(per))
	for pid := range per {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	for _, pid := range pids {
		a := per[pid]
		info := sc.s.procs.lookup(pid)
		for _, t := range [...]struct {
			task string
			v    float64
		}{{"general", a.sm}, {"encoder", a.enc}, {"decoder", a.dec}} {
			dp := b.point(mProcessUtilization)
			dp.SetDoubleValue(t.v / a.n / 100)
			putProcess(dp.Attributes(), pid, info)
			sc.putOwner(dp.Attributes(), g.uuid)
			dp.Attributes().PutStr("hw.gpu.task", t.task)
		}
	}
}

// processUtilSum is the sum of one process's utilization samples.
type processUtilSum struct{ sm, enc, dec, n float64 }

// sumProcessUtilization sums the samples newer than since, per PID.
func sumProcessUtilization(samples []nvml.ProcessUtilizationSample, since uint64) map[uint32]*processUtilSum {
	per := map[uint32]*processUtilSum{}
	for _, smp := range samples {
		if smp.TimeStamp <= since {
			continue
		}
		a := per[smp.Pid]
		if a == nil {
			a = &processUtilSum{}
			per[smp.Pid] = a
		}
		a.sm += float64(smp.SmUtil)
		a.enc += float64(smp.EncUtil)
		a.dec += float64(smp.DecUtil)
		a.n++
	}
	return per
}

func putProcess(m pcommon.Map, pid uint32, info processInfo) {
	m.PutInt("process.pid", int64(pid))
	if info.name != "" {
		m.PutStr("process.executable.name", info.name)
	}
	if info.containerID != "" {
		m.PutStr("container.id", info.containerID)
	}
	if info.podUID != "" {
		m.PutStr("k8s.pod.uid", info.podUID)
	}
}
