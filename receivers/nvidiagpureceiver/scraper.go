package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	"google.golang.org/grpc/status"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

// scrapeErrors collects the failures of one scrape; they become one partial
// scrape error.
type scrapeErrors struct {
	errs   []error
	failed int
}

func (e *scrapeErrors) add(err error) {
	e.errs = append(e.errs, err)
	e.failed++
}

// metricBuilder appends data points to one resource's metrics, creating each
// metric on first use.
type metricBuilder struct {
	enabled map[string]bool
	sm      pmetric.ScopeMetrics
	metrics map[string]pmetric.Metric
	now     pcommon.Timestamp
	start   pcommon.Timestamp
}

func (b *metricBuilder) on(name string) bool { return b.enabled[name] }

// point returns a new data point of an enabled metric.
func (b *metricBuilder) point(name string) pmetric.NumberDataPoint {
	m, ok := b.metrics[name]
	if !ok {
		d := metricDefsByName[name]
		m = b.sm.Metrics().AppendEmpty()
		m.SetName(d.name)
		m.SetUnit(d.unit)
		m.SetDescription(d.description)
		switch d.inst {
		case counter, upDownCounter:
			sum := m.SetEmptySum()
			sum.SetIsMonotonic(d.inst == counter)
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		default:
			m.SetEmptyGauge()
		}
		b.metrics[name] = m
	}
	var dp pmetric.NumberDataPoint
	if m.Type() == pmetric.MetricTypeSum {
		dp = m.Sum().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(b.start)
	} else {
		dp = m.Gauge().DataPoints().AppendEmpty()
	}
	dp.SetTimestamp(b.now)
	return dp
}

func (b *metricBuilder) double(name string, v float64, kv ...string) {
	if !b.on(name) {
		return
	}
	dp := b.point(name)
	dp.SetDoubleValue(v)
	putAttrs(dp.Attributes(), kv)
}

func (b *metricBuilder) int(name string, v int64, kv ...string) {
	if !b.on(name) {
		return
	}
	dp := b.point(name)
	dp.SetIntValue(v)
	putAttrs(dp.Attributes(), kv)
}

func putAttrs(m pcommon.Map, kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		m.PutStr(kv[i], kv[i+1])
	}
}

// gpuScraper is the scraper the metrics controller drives.
type gpuScraper struct {
	s       *session
	enabled map[string]bool
	owners  map[string][]deviceOwner // device ID -> containers, this scrape
}

func newGPUScraper(s *session) *gpuScraper {
	enabled := make(map[string]bool, len(metricDefs))
	for _, d := range metricDefs {
		enabled[d.name] = s.cfg.metricEnabled(d.name)
	}
	return &gpuScraper{s: s, enabled: enabled}
}

// scrape reads every GPU. An error in one call or device is a partial scrape
// error; the points that could be read are still returned.
func (sc *gpuScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	s := sc.s
	s.mu.Lock()
	defer s.mu.Unlock()
	md := pmetric.NewMetrics()
	s.retryLocked()
	if !s.ready {
		return md, nil
	}
	now := pcommon.NewTimestampFromTime(time.Now())
	sc.owners = nil
	if s.pods != nil {
		owners, err := s.pods.owners(ctx)
		if err != nil {
			s.tel.podResourcesErrs.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", status.Code(err).String())))
			s.logger.Debug("nvidia_gpu: kubelet pod-resources List failed", zap.Error(err))
		}
		sc.owners = owners
	}
	var errs scrapeErrors
	for _, g := range s.gpus {
		t0 := time.Now()
		sc.scrapeGPU(md, g, now, &errs)
		s.tel.scrapeDuration.Record(context.Background(), time.Since(t0).Seconds(),
			metric.WithAttributes(attribute.String("hw.id", g.uuid)))
	}
	s.procs.sweep()
	if len(errs.errs) > 0 {
		return md, scrapererror.NewPartialScrapeError(errors.Join(errs.errs...), errs.failed)
	}
	return md, nil
}

func (sc *gpuScraper) builder(md pmetric.Metrics, now pcommon.Timestamp) (pmetric.ResourceMetrics, *metricBuilder) {
	rm := md.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	return rm, &metricBuilder{enabled: sc.enabled, sm: sm, metrics: map[string]pmetric.Metric{}, now: now, start: sc.s.start}
}

// ok handles the return code of an NVML call: unsupported calls are
// remembered and skipped from then on, other failures become part of the
// partial scrape error. It reports whether the call succeeded.
func (sc *gpuScraper) ok(g *gpu, guard *callGuard, call string, ret nvml.Return, errs *scrapeErrors, lost *bool) bool {
	switch {
	case ret == nvml.SUCCESS:
		return true
	case unsupported(ret):
		guard.unsupported[call] = true
		sc.s.tel.callUnsupported(call)
		sc.s.logger.Info("nvidia_gpu: call not supported by this GPU or driver; skipped from now on",
			zap.String("hw.id", g.uuid), zap.String("call", call))
		return false
	default:
		if ret == nvml.ERROR_GPU_IS_LOST {
			*lost = true
		}
		sc.s.tel.callFailed(call, returnReason(ret))
		errs.add(fmt.Errorf("%s %s: %s", g.uuid, call, returnReason(ret)))
		return false
	}
}

var samplingCalls = [...]string{
	nvml.TOTAL_POWER_SAMPLES:        "GetSamples(total_power)",
	nvml.GPU_UTILIZATION_SAMPLES:    "GetSamples(gpu_utilization)",
	nvml.MEMORY_UTILIZATION_SAMPLES: "GetSamples(memory_utilization)",
}

// summarize reads the NVML samples of one type buffered since the previous
// scrape and returns their average and maximum; n is 0 when there were none.
func (sc *gpuScraper) summarize(g *gpu, st nvml.SamplingType, errs *scrapeErrors, lost *bool) (avg, peak float64, n int) {
	call := samplingCalls[st]
	if g.calls.skip(call) {
		return 0, 0, 0
	}
	vt, samples, ret := g.dev.GetSamples(st, g.lastSeen[st])
	if ret == nvml.ERROR_NOT_FOUND {
		return 0, 0, 0 // no sample since the previous scrape
	}
	if !sc.ok(g, &g.calls, call, ret, errs, lost) {
		return 0, 0, 0
	}
	var sum float64
	for _, smp := range samples {
		if smp.TimeStamp <= g.lastSeen[st] {
			continue
		}
		v := numericValue(vt, smp.SampleValue)
		if v != v { // NaN: unknown value type
			continue
		}
		sum += v
		if n == 0 || v > peak {
			peak = v
		}
		n++
	}
	for _, smp := range samples {
		if smp.TimeStamp > g.lastSeen[st] {
			g.lastSeen[st] = smp.TimeStamp
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return sum / float64(n), peak, n
}

func (sc *gpuScraper) scrapeGPU(md pmetric.Metrics, g *gpu, now pcommon.Timestamp, errs *scrapeErrors) {
	s := sc.s
	rm, b := sc.builder(md, now)
	s.resource(rm.Resource(), g)
	sc.putOwner(rm.Resource().Attributes(), g.uuid)
	lost := false
	ok := func(call string, ret nvml.Return) bool { return sc.ok(g, &g.calls, call, ret, errs, &lost) }
	can := func(call string) bool { return !g.calls.skip(call) && !lost }

	// Utilization: average and peak of the samples since the previous
	// scrape; a single read when the GPU keeps no samples.
	var rates *nvml.Utilization
	readRates := func() *nvml.Utilization {
		if rates == nil && can("GetUtilizationRates") {
			if u, ret := g.dev.GetUtilizationRates(); ok("GetUtilizationRates", ret) {
				rates = &u
			}
		}
		return rates
	}
	if b.on(mGPUUtilization) || b.on(mUtilizationMax) {
		avg, peak, n := sc.summarize(g, nvml.GPU_UTILIZATION_SAMPLES, errs, &lost)
		if n == 0 {
			if u := readRates(); u != nil {
				avg, peak, n = float64(u.Gpu), float64(u.Gpu), 1
			}
		}
		if n > 0 {
			b.double(mGPUUtilization, avg/100, "hw.gpu.task", "general")
			b.double(mUtilizationMax, peak/100, "hw.gpu.task", "general")
		}
	}
	if b.on(mGPUUtilization) {
		if can("GetEncoderUtilization") {
			if v, _, ret := g.dev.GetEncoderUtilization(); ok("GetEncoderUtilization", ret) {
				b.double(mGPUUtilization, float64(v)/100, "hw.gpu.task", "encoder")
			}
		}
		if can("GetDecoderUtilization") {
			if v, _, ret := g.dev.GetDecoderUtilization(); ok("GetDecoderUtilization", ret) {
				b.double(mGPUUtilization, float64(v)/100, "hw.gpu.task", "decoder")
			}
		}
	}
	if b.on(mMemoryActivity) {
		avg, _, n := sc.summarize(g, nvml.MEMORY_UTILIZATION_SAMPLES, errs, &lost)
		if n == 0 {
			if u := readRates(); u != nil {
				avg, n = float64(u.Memory), 1
			}
		}
		if n > 0 {
			b.double(mMemoryActivity, avg/100)
		}
	}

	// Memory.
	if (b.on(mGPUMemoryUsage) || b.on(mGPUMemoryLimit) || b.on(mGPUMemoryUtilization)) && can("GetMemoryInfo") {
		if used, total, good := sc.memory(g, &g.calls, g.dev, errs, &lost); good {
			b.int(mGPUMemoryUsage, int64(used))
			b.int(mGPUMemoryLimit, int64(total))
			if total > 0 {
				b.double(mGPUMemoryUtilization, float64(used)/float64(total))
			}
		}
	}

	// Power and energy.
	if b.on(mPower) || b.on(mPowerMax) {
		avg, peak, n := sc.summarize(g, nvml.TOTAL_POWER_SAMPLES, errs, &lost)
		if n == 0 && can("GetPowerUsage") {
			if v, ret := g.dev.GetPowerUsage(); ok("GetPowerUsage", ret) {
				avg, peak, n = float64(v), float64(v), 1
			}
		}
		if n > 0 {
			b.double(mPower, avg/1000, "hw.type", "gpu")
			b.double(mPowerMax, peak/1000)
		}
	}
	if b.on(mPowerLimit) && can("GetEnforcedPowerLimit") {
		if v, ret := g.dev.GetEnforcedPowerLimit(); ok("GetEnforcedPowerLimit", ret) {
			b.double(mPowerLimit, float64(v)/1000)
		}
	}
	if b.on(mEnergy) && can("GetTotalEnergyConsumption") {
		if v, ret := g.dev.GetTotalEnergyConsumption(); ok("GetTotalEnergyConsumption", ret) {
			b.double(mEnergy, float64(v)/1000, "hw.type", "gpu")
		}
	}

	// Temperature, fan, performance state, clocks.
	if b.on(mTemperature) && can("GetTemperature") {
		if v, ret := g.dev.GetTemperature(nvml.TEMPERATURE_GPU); ok("GetTemperature", ret) {
			b.double(mTemperature, float64(v), "hw.sensor_location", "gpu")
		}
	}
	if b.on(mFanSpeed) && can("GetFanSpeed") {
		if v, ret := g.dev.GetFanSpeed(); ok("GetFanSpeed", ret) {
			b.double(mFanSpeed, float64(v)/100)
		}
	}
	if b.on(mPerformanceState) && can("GetPerformanceState") {
		if v, ret := g.dev.GetPerformanceState(); ok("GetPerformanceState", ret) && v != nvml.PSTATE_UNKNOWN {
			b.int(mPerformanceState, int64(v))
		}
	}
	if b.on(mClockFrequency) {
		for _, c := range []struct {
			call, domain string
			typ          nvml.ClockType
		}{{"GetClockInfo(sm)", "sm", nvml.CLOCK_SM}, {"GetClockInfo(memory)", "memory", nvml.CLOCK_MEM}} {
			if can(c.call) {
				if v, ret := g.dev.GetClockInfo(c.typ); ok(c.call, ret) {
					b.double(mClockFrequency, float64(v)*1e6, "nvidia.gpu.clock.domain", c.domain)
				}
			}
		}
	}
	if b.on(mClockEventReason) && can("GetCurrentClocksEventReasons") {
		if mask, ret := g.dev.GetCurrentClocksEventReasons(); ok("GetCurrentClocksEventReasons", ret) {
			for _, r := range clockEventReasons {
				var v int64
				if mask&r.bit != 0 {
					v = 1
				}
				b.int(mClockEventReason, v, "nvidia.gpu.clock.event_reason", r.name)
			}
		}
	}

	// PCIe.
	if b.on(mPCIeReplays) && can("GetPcieReplayCounter") {
		if v, ret := g.dev.GetPcieReplayCounter(); ok("GetPcieReplayCounter", ret) {
			b.int(mPCIeReplays, int64(v))
		}
	}
	if b.on(mPCIeThroughput) {
		for _, c := range []struct {
			call, dir string
			ctr       nvml.PcieUtilCounter
		}{{"GetPcieThroughput(tx)", "transmit", nvml.PCIE_UTIL_TX_BYTES}, {"GetPcieThroughput(rx)", "receive", nvml.PCIE_UTIL_RX_BYTES}} {
			if can(c.call) {
				if v, ret := g.dev.GetPcieThroughput(c.ctr); ok(c.call, ret) {
					b.double(mPCIeThroughput, float64(v)*1024, "network.io.direction", c.dir)
				}
			}
		}
	}
	sc.fieldValues(g, b, errs, &lost)

	// Reliability.
	var remapPending, remapFailed bool
	if b.on(mErrors) {
		for _, c := range []struct {
			call, typ string
			et        nvml.MemoryErrorType
		}{{"GetTotalEccErrors(corrected)", "corrected", nvml.MEMORY_ERROR_TYPE_CORRECTED}, {"GetTotalEccErrors(uncorrected)", "uncorrected", nvml.MEMORY_ERROR_TYPE_UNCORRECTED}} {
			if can(c.call) {
				if v, ret := g.dev.GetTotalEccErrors(c.et, nvml.AGGREGATE_ECC); ok(c.call, ret) {
					b.int(mErrors, int64(v), "hw.type", "gpu", "error.type", c.typ)
				}
			}
		}
	}
	if (b.on(mRemappedRows) || b.on(mStatus)) && can("GetRemappedRows") {
		if corr, unc, pending, failed, ret := g.dev.GetRemappedRows(); ok("GetRemappedRows", ret) {
			b.int(mRemappedRows, int64(corr), "nvidia.gpu.memory.remap_cause", "correctable")
			b.int(mRemappedRows, int64(unc), "nvidia.gpu.memory.remap_cause", "uncorrectable")
			remapPending, remapFailed = pending, failed
		}
	}

	// Events counted by the event goroutine.
	s.evMu.Lock()
	if b.on(mXIDErrors) {
		codes := make([]uint64, 0, len(s.xidCounts[g.uuid]))
		for c := range s.xidCounts[g.uuid] {
			codes = append(codes, c)
		}
		sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
		for _, c := range codes {
			dp := b.point(mXIDErrors)
			dp.SetIntValue(s.xidCounts[g.uuid][c])
			dp.Attributes().PutInt("nvidia.gpu.xid.code", int64(c))
		}
	}
	if b.on(mEvents) {
		types := make([]string, 0, len(s.eventCounts[g.uuid]))
		for t := range s.eventCounts[g.uuid] {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			b.int(mEvents, s.eventCounts[g.uuid][t], "nvidia.gpu.event.type", t)
		}
	}
	recent := s.recentSev[g.uuid]
	delete(s.recentSev, g.uuid)
	s.evMu.Unlock()

	// MIG instances and processes.
	if s.cfg.MIG && !lost {
		sc.scrapeMIG(md, g, now, errs, &lost)
	}
	if !lost {
		sc.processes(g, b, errs, &lost)
	}

	// Health: failed when the GPU is lost, degraded after a serious XID or
	// while memory rows wait for (or failed) remapping.
	state := "ok"
	switch {
	case lost:
		state = "failed"
	case remapFailed || remapPending || severityRank(recent) >= severityRank("error"):
		state = "degraded"
	}
	for _, st := range []string{"ok", "degraded", "failed"} {
		var v int64
		if st == state {
			v = 1
		}
		b.int(mStatus, v, "hw.type", "gpu", "hw.state", st)
	}
}

// memory reads used and total framebuffer memory, preferring the v2 call
// (which separates reserved memory) and falling back to v1.
func (sc *gpuScraper) memory(g *gpu, guard *callGuard, dev nvml.Device, errs *scrapeErrors, lost *bool) (used, total uint64, good bool) {
	if !guard.skip("GetMemoryInfo_v2") {
		m, ret := dev.GetMemoryInfo_v2()
		if sc.ok(g, guard, "GetMemoryInfo_v2", ret, errs, lost) {
			return m.Used, m.Total, true
		}
		if !unsupported(ret) {
			return 0, 0, false
		}
	}
	if guard.skip("GetMemoryInfo") {
		return 0, 0, false
	}
	m, ret := dev.GetMemoryInfo()
	if sc.ok(g, guard, "GetMemoryInfo", ret, errs, lost) {
		return m.Used, m.Total, true
	}
	return 0, 0, false
}

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
		mdev, ret := g.dev.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue // no MIG device in this slot
		}
		if !sc.ok(g, &g.calls, "GetMigDeviceHandleByIndex", ret, errs, lost) {
			continue
		}
		uuid, ret := mdev.GetUUID()
		if !sc.ok(g, &g.calls, "GetUUID(mig)", ret, errs, lost) {
			continue
		}
		guard := g.mig[uuid]
		if guard == nil {
			guard = &callGuard{unsupported: map[string]bool{}}
			g.mig[uuid] = guard
		}
		rm, b := sc.builder(md, now)
		a := rm.Resource().Attributes()
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
}

// processes emits per-process memory and, opt-in, utilization.
func (sc *gpuScraper) processes(g *gpu, b *metricBuilder, errs *scrapeErrors, lost *bool) {
	s := sc.s
	if b.on(mProcessMemoryUsage) && !g.calls.skip("GetComputeRunningProcesses") {
		procs, ret := g.dev.GetComputeRunningProcesses()
		if sc.ok(g, &g.calls, "GetComputeRunningProcesses", ret, errs, lost) {
			sort.Slice(procs, func(i, j int) bool { return procs[i].Pid < procs[j].Pid })
			for _, p := range procs {
				dp := b.point(mProcessMemoryUsage)
				dp.SetIntValue(int64(p.UsedGpuMemory))
				putProcess(dp.Attributes(), p.Pid, s.procs.lookup(p.Pid))
				device := g.uuid
				if p.GpuInstanceId != noInstance {
					dp.Attributes().PutInt("nvidia.gpu.mig.gpu_instance_id", int64(p.GpuInstanceId))
					device = g.migByGI[int64(p.GpuInstanceId)]
				}
				sc.putOwner(dp.Attributes(), device)
			}
		}
	}
	if b.on(mProcessUtilization) && !g.calls.skip("GetProcessUtilization") {
		samples, ret := g.dev.GetProcessUtilization(g.lastProcUtil)
		if ret == nvml.ERROR_NOT_FOUND || (ret == nvml.ERROR_INSUFFICIENT_SIZE && len(samples) == 0) {
			return // no samples since the previous scrape
		}
		if !sc.ok(g, &g.calls, "GetProcessUtilization", ret, errs, lost) {
			return
		}
		type acc struct{ sm, enc, dec, n float64 }
		per := map[uint32]*acc{}
		for _, smp := range samples {
			if smp.TimeStamp <= g.lastProcUtil {
				continue
			}
			a := per[smp.Pid]
			if a == nil {
				a = &acc{}
				per[smp.Pid] = a
			}
			a.sm += float64(smp.SmUtil)
			a.enc += float64(smp.EncUtil)
			a.dec += float64(smp.DecUtil)
			a.n++
		}
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
			info := s.procs.lookup(pid)
			for _, t := range []struct {
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
}

// putOwner adds the pod and container a device is allocated to, when the
// kubelet reports exactly one (a device shared by several containers through
// time-slicing or MPS cannot be attributed from the allocation alone).
func (sc *gpuScraper) putOwner(m pcommon.Map, device string) {
	owners := sc.owners[device]
	if len(owners) != 1 {
		return
	}
	m.PutStr("k8s.pod.name", owners[0].pod)
	m.PutStr("k8s.namespace.name", owners[0].namespace)
	m.PutStr("k8s.container.name", owners[0].container)
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
