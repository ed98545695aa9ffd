package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"errors"
	"fmt"
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

// gpuRead is the state of one GPU's scrape: the calls it made so far decide
// which it still makes.
type gpuRead struct {
	sc   *gpuScraper
	g    *gpu
	b    *metricBuilder
	errs *scrapeErrors
	lost bool // the GPU fell off the bus: no further call is made

	rates     nvml.Utilization // GetUtilizationRates, once read (haveRates)
	haveRates bool

	remapPending, remapFailed bool // from GetRemappedRows, for the health state
}

// ok handles the return code of a call of the GPU (see gpuScraper.ok).
func (r *gpuRead) ok(call string, ret nvml.Return) bool {
	return r.sc.ok(r.g, &r.g.calls, call, ret, r.errs, &r.lost)
}

// can reports whether a call is still worth making.
func (r *gpuRead) can(call string) bool { return !r.g.calls.skip(call) && !r.lost }

// scrapeGPU emits one GPU's resource, area by area.
func (sc *gpuScraper) scrapeGPU(md pmetric.Metrics, g *gpu, now pcommon.Timestamp, errs *scrapeErrors) {
	rm, b := sc.builder(md, now)
	sc.s.resource(rm.Resource(), g)
	sc.putOwner(rm.Resource().Attributes(), g.uuid)
	r := &gpuRead{sc: sc, g: g, b: b, errs: errs}

	r.utilization()                     // GPU, encoder, decoder, memory controller
	r.framebufferMemory()               // usage, limit
	r.power()                           // draw, limit, energy
	r.readAll(thermalReadings)          // temperature, fan, P-state, clocks
	r.clockEventReasons()               // throttling
	r.readAll(pcieReadings)             // replays, throughput
	sc.fieldValues(g, b, errs, &r.lost) // PCIe and NVLink counters
	r.readAll(eccReadings)              // ECC errors
	r.remappedRows()                    // remapped memory rows
	recent := r.eventCounts()           // XIDs and events the event goroutine counted
	if sc.s.cfg.MIG && !r.lost {
		sc.scrapeMIG(md, g, now, errs, &r.lost)
	}
	if !r.lost {
		sc.processes(g, b, errs, &r.lost)
	}
	r.status(recent)
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
