package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

// eventDevice is what the event goroutine knows about a registered GPU; it is
// built before the goroutine starts and never changed, so the goroutine needs
// no lock on the session's device list.
type eventDevice struct {
	dev  nvml.Device
	uuid string
	res  pcommon.Map
}

// startEventsLocked registers the configured event types on every GPU that
// supports them and starts the goroutine that waits on the event set.
func (s *session) startEventsLocked() {
	if !s.cfg.Events.Enabled || s.evStop != nil {
		return
	}
	var mask uint64
	for _, name := range s.cfg.Events.Types {
		mask |= eventTypesByName[name].mask
	}
	set, ret := s.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		s.tel.callFailed("EventSetCreate", returnReason(ret))
		s.logger.Warn("nvidia_gpu: no NVML event set; XID events will not be reported", zap.String("reason", returnReason(ret)))
		return
	}
	devices := s.registerEvents(set, mask)
	if len(devices) == 0 {
		_ = set.Free()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop, done := make(chan struct{}), make(chan struct{})
	s.evStop, s.evDone, s.evSet, s.evCancel = stop, done, set, cancel
	go func() {
		defer close(done)
		s.runEvents(ctx, set, devices, stop)
	}()
}

// registerEvents registers the event types of mask that each GPU supports
// on set, and returns the GPUs registered.
func (s *session) registerEvents(set nvml.EventSet, mask uint64) []eventDevice {
	var devices []eventDevice
	for _, g := range s.gpus {
		supported, ret := g.dev.GetSupportedEventTypes()
		if ret != nvml.SUCCESS {
			s.noteEventRegistration(g, "GetSupportedEventTypes", ret)
			continue
		}
		m := supported & mask
		if m == 0 {
			s.logger.Info("nvidia_gpu: GPU supports none of the configured event types", zap.String("hw.id", g.uuid))
			continue
		}
		if ret := g.dev.RegisterEvents(m, set); ret != nvml.SUCCESS {
			s.noteEventRegistration(g, "RegisterEvents", ret)
			continue
		}
		res := pcommon.NewResource()
		s.resource(res, g)
		devices = append(devices, eventDevice{dev: g.dev, uuid: g.uuid, res: res.Attributes()})
	}
	return devices
}

func (s *session) noteEventRegistration(g *gpu, call string, ret nvml.Return) {
	if unsupported(ret) {
		s.tel.callUnsupported(call)
		s.logger.Info("nvidia_gpu: GPU does not support NVML events", zap.String("hw.id", g.uuid))
		return
	}
	s.tel.callFailed(call, returnReason(ret))
	s.logger.Warn("nvidia_gpu: cannot register NVML events", zap.String("hw.id", g.uuid), zap.String("reason", returnReason(ret)))
}

// stopEventsLocked stops the event goroutine (it returns within one
// wait_timeout) and frees the event set.
func (s *session) stopEventsLocked() {
	if s.evStop == nil {
		return
	}
	close(s.evStop)
	s.evCancel()
	<-s.evDone
	_ = s.evSet.Free()
	s.evStop, s.evDone, s.evSet, s.evCancel = nil, nil, nil, nil
}

func (s *session) runEvents(ctx context.Context, set nvml.EventSet, devices []eventDevice, stop <-chan struct{}) {
	timeoutMs := uint32(s.cfg.Events.WaitTimeout.Milliseconds())
	for {
		select {
		case <-stop:
			return
		default:
		}
		data, ret := set.Wait(timeoutMs)
		switch ret {
		case nvml.SUCCESS:
			s.handleEvent(ctx, data, devices)
		case nvml.ERROR_TIMEOUT:
		default:
			// A failing wait must not spin: back off for one wait_timeout.
			s.tel.eventWaitError(returnReason(ret))
			select {
			case <-stop:
				return
			case <-time.After(s.cfg.Events.WaitTimeout):
			}
		}
	}
}

const noInstance = math.MaxUint32 // GPU/compute instance id of an event outside MIG

// handleEvent counts one event and emits it as a log record.
func (s *session) handleEvent(ctx context.Context, data nvml.EventData, devices []eventDevice) {
	ed := findEventDevice(devices, data.Device)
	typ, known := eventTypeByMask(data.EventType)
	if !known {
		typ = eventType{name: fmt.Sprintf("unknown_%d", data.EventType), severity: plog.SeverityNumberWarn, meaning: "Unknown NVML event"}
	}
	uuid := "unknown"
	if ed != nil {
		uuid = ed.uuid
	}
	ld, lr := newEventLog(ed)
	xid, isXID := describeEvent(lr, typ, data)
	logs := s.countEvent(uuid, typ.name, data.EventData, isXID, xid)
	s.logger.Warn("nvidia_gpu: NVML event", zap.String("hw.id", uuid), zap.String("type", typ.name),
		zap.String("message", lr.Body().Str()))
	s.deliverEvent(ctx, logs, ld, typ.name)
}

// findEventDevice finds the GPU an event came from: by handle, else by UUID;
// nil when it is none of the registered GPUs.
func findEventDevice(devices []eventDevice, dev nvml.Device) *eventDevice {
	for i := range devices {
		if devices[i].dev == dev {
			return &devices[i]
		}
	}
	if dev == nil {
		return nil
	}
	if uuid, ret := dev.GetUUID(); ret == nvml.SUCCESS {
		for i := range devices {
			if devices[i].uuid == uuid {
				return &devices[i]
			}
		}
	}
	return nil
}

// newEventLog returns logs holding one record, timestamped now, under the
// GPU's resource (or a bare NVIDIA one when the GPU is not known).
func newEventLog(ed *eventDevice) (plog.Logs, plog.LogRecord) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	if ed != nil {
		ed.res.CopyTo(rl.Resource().Attributes())
	} else {
		rl.Resource().Attributes().PutStr("hw.vendor", "NVIDIA")
	}
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	lr := sl.LogRecords().AppendEmpty()
	now := pcommon.NewTimestampFromTime(time.Now())
	lr.SetTimestamp(now)
	lr.SetObservedTimestamp(now)
	return ld, lr
}

// describeEvent fills the record's attributes, body and severity; an XID
// takes its severity and meaning from the XID catalog.
func describeEvent(lr plog.LogRecord, typ eventType, data nvml.EventData) (xid xidInfo, isXID bool) {
	attrs := lr.Attributes()
	attrs.PutStr("nvidia.gpu.event.type", typ.name)
	severity := typ.severity
	isXID = data.EventType == nvml.EventTypeXidCriticalError
	if isXID {
		xid = lookupXID(data.EventData)
		severity = severities[xid.Severity]
		if severity == 0 {
			severity = plog.SeverityNumberWarn
		}
		attrs.PutStr("event.name", "nvidia.gpu.xid")
		attrs.PutInt("nvidia.gpu.xid.code", int64(data.EventData))
		attrs.PutStr("nvidia.gpu.xid.meaning", xid.Meaning)
		attrs.PutStr("nvidia.gpu.xid.origin", xid.Origin)
		attrs.PutStr("nvidia.gpu.xid.action", xid.Action)
		lr.Body().SetStr(fmt.Sprintf("XID %d: %s", data.EventData, xid.Meaning))
	} else {
		attrs.PutStr("event.name", "nvidia.gpu.event")
		attrs.PutInt("nvidia.gpu.event.data", int64(data.EventData))
		lr.Body().SetStr(typ.meaning)
	}
	if data.GpuInstanceId != noInstance {
		attrs.PutInt("nvidia.gpu.mig.gpu_instance_id", int64(data.GpuInstanceId))
	}
	if data.ComputeInstanceId != noInstance {
		attrs.PutInt("nvidia.gpu.mig.compute_instance_id", int64(data.ComputeInstanceId))
	}
	lr.SetSeverityNumber(severity)
	lr.SetSeverityText(severityText(severity))
	return xid, isXID
}

// countEvent adds the event to the counters the scraper reports and returns
// the logs consumer, nil when no logs pipeline is attached.
func (s *session) countEvent(uuid, typ string, code uint64, isXID bool, xid xidInfo) consumer.Logs {
	s.evMu.Lock()
	defer s.evMu.Unlock()
	if s.eventCounts[uuid] == nil {
		s.eventCounts[uuid] = map[string]int64{}
	}
	s.eventCounts[uuid][typ]++
	if isXID {
		if s.xidCounts[uuid] == nil {
			s.xidCounts[uuid] = map[uint64]int64{}
		}
		s.xidCounts[uuid][code]++
		if severityRank(xid.Severity) > severityRank(s.recentSev[uuid]) {
			s.recentSev[uuid] = xid.Severity
		}
	}
	return s.logs
}

// deliverEvent hands the record to the logs pipeline and counts the outcome.
func (s *session) deliverEvent(ctx context.Context, logs consumer.Logs, ld plog.Logs, typ string) {
	if logs == nil {
		s.tel.event(typ, outcomeNoPipeline)
		return
	}
	if err := logs.ConsumeLogs(ctx, ld); err != nil {
		s.tel.event(typ, outcomeRefused)
		s.logger.Warn("nvidia_gpu: event log record refused by the logs pipeline", zap.Error(err))
		return
	}
	s.tel.event(typ, outcomeEmitted)
}

func severityText(n plog.SeverityNumber) string {
	switch {
	case n >= plog.SeverityNumberFatal:
		return "FATAL"
	case n >= plog.SeverityNumberError:
		return "ERROR"
	case n >= plog.SeverityNumberWarn:
		return "WARN"
	default:
		return "INFO"
	}
}

func severityRank(s string) int {
	switch s {
	case "fatal":
		return 4
	case "error":
		return 3
	case "warn":
		return 2
	case "info":
		return 1
	}
	return 0
}
