package nvidiagpureceiver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

func TestXIDDelivery(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	a, b := h100(0), h100(1)
	f := newFakeNVML(a, b)
	cfg := testConfig()
	fac := newFactory(f.provider())
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	ms, ls := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	mr, err := fac.CreateMetrics(context.Background(), set, cfg, ms)
	require.NoError(t, err)
	lr, err := fac.CreateLogs(context.Background(), set, cfg, ls)
	require.NoError(t, err)
	host := componenttest.NewNopHost()
	require.NoError(t, mr.Start(context.Background(), host))
	require.NoError(t, lr.Start(context.Background(), host))

	f.events <- nvml.EventData{Device: b.device(), EventType: nvml.EventTypeXidCriticalError, EventData: 79, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}
	f.events <- nvml.EventData{Device: b.device(), EventType: nvml.EventTypeXidCriticalError, EventData: 79, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}
	f.events <- nvml.EventData{Device: a.device(), EventType: nvml.EventTypeXidCriticalError, EventData: 31, GpuInstanceId: 1, ComputeInstanceId: 0}
	f.events <- nvml.EventData{Device: a.device(), EventType: nvml.EventTypeDoubleBitEccError, EventData: 0, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}
	require.Eventually(t, func() bool { return ls.LogRecordCount() == 4 }, 5*time.Second, 10*time.Millisecond)

	records := map[string]plog.LogRecord{}
	var hwIDs []string
	for _, ld := range ls.AllLogs() {
		rl := ld.ResourceLogs().At(0)
		id, _ := rl.Resource().Attributes().Get("hw.id")
		hwIDs = append(hwIDs, id.Str())
		lr := rl.ScopeLogs().At(0).LogRecords().At(0)
		records[lr.Body().Str()] = lr
	}
	assert.ElementsMatch(t, []string{b.uuid, b.uuid, a.uuid, a.uuid}, hwIDs)
	fell, ok := records["XID 79: GPU has fallen off the bus"]
	require.True(t, ok, "records: %v", records)
	assert.Equal(t, plog.SeverityNumberFatal, fell.SeverityNumber())
	assert.Equal(t, "FATAL", fell.SeverityText())
	code, _ := fell.Attributes().Get("nvidia.gpu.xid.code")
	assert.Equal(t, int64(79), code.Int())
	origin, _ := fell.Attributes().Get("nvidia.gpu.xid.origin")
	assert.Equal(t, "hardware", origin.Str())
	_, hasGI := fell.Attributes().Get("nvidia.gpu.mig.gpu_instance_id")
	assert.False(t, hasGI)

	fault := records["XID 31: GPU memory page fault"]
	assert.Equal(t, plog.SeverityNumberWarn, fault.SeverityNumber())
	gi, _ := fault.Attributes().Get("nvidia.gpu.mig.gpu_instance_id")
	assert.Equal(t, int64(1), gi.Int())
	dbe := records["Double bit ECC error"]
	typ, _ := dbe.Attributes().Get("nvidia.gpu.event.type")
	assert.Equal(t, "double_bit_ecc_error", typ.Str())

	// The counters reach the metrics, per GPU and code; the GPU with a fatal
	// XID reports degraded health for the interval. A scrape may run between
	// a record's log and its count, so wait for a scrape that has them all.
	require.Eventually(t, func() bool {
		all := ms.AllMetrics()
		if len(all) == 0 {
			return false
		}
		md := all[len(all)-1]
		xid79, ok1 := lookupPoint(md, b.uuid, mXIDErrors, "nvidia.gpu.xid.code", "79")
		xid31, ok2 := lookupPoint(md, a.uuid, mXIDErrors, "nvidia.gpu.xid.code", "31")
		dbe, ok3 := lookupPoint(md, a.uuid, mEvents, "nvidia.gpu.event.type", "double_bit_ecc_error")
		return ok1 && ok2 && ok3 && xid79 == 2 && xid31 == 1 && dbe == 1
	}, 5*time.Second, 10*time.Millisecond)
	all := ms.AllMetrics()
	md := all[len(all)-1]
	assert.Equal(t, 2.0, pointValue(t, md, b.uuid, mXIDErrors, "nvidia.gpu.xid.code", "79"))
	assert.Equal(t, 1.0, pointValue(t, md, a.uuid, mXIDErrors, "nvidia.gpu.xid.code", "31"))
	assert.Equal(t, 1.0, pointValue(t, md, a.uuid, mEvents, "nvidia.gpu.event.type", "double_bit_ecc_error"))
	degraded := false
	for _, m := range all {
		if hasMetric(m, b.uuid, mStatus) && pointValue(t, m, b.uuid, mStatus, "hw.state", "degraded") == 1 {
			degraded = true
		}
	}
	assert.True(t, degraded, "a fatal XID marks the GPU degraded for one interval")

	require.NoError(t, lr.Shutdown(context.Background()))
	require.NoError(t, mr.Shutdown(context.Background()))
	m, err := tel.GetMetric("otelcol_nvidia_gpu_events")
	require.NoError(t, err)
	assert.Equal(t, int64(4), sumInt(m))
}

func TestEventRefusedByPipelineIsCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	g := h100(0)
	f := newFakeNVML(g)
	_, s := testSession(t, f, tel.NewTelemetrySettings(), nil)
	s.setLogsConsumer(consumertest.NewErr(errors.New("queue full")))
	f.events <- nvml.EventData{Device: g.device(), EventType: nvml.EventTypeXidCriticalError, EventData: 48, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}
	require.Eventually(t, func() bool {
		m, err := tel.GetMetric("otelcol_nvidia_gpu_events")
		return err == nil && sumInt(m) == 1
	}, 5*time.Second, 10*time.Millisecond)
	m, err := tel.GetMetric("otelcol_nvidia_gpu_events")
	require.NoError(t, err)
	found := false
	for _, p := range sumPoints(m) {
		if v, ok := p.Attributes.Value("outcome"); ok && v.AsString() == outcomeRefused {
			found = true
		}
	}
	assert.True(t, found, "refused outcome recorded")
}

func TestEventsUnsupportedOrFailingWaitDoNotSpin(t *testing.T) {
	g := h100(0)
	g.unsupported["GetSupportedEventTypes"] = true
	f := newFakeNVML(g)
	_, s := testSession(t, f, componenttest.NewNopTelemetrySettings(), nil)
	assert.Nil(t, s.evStop, "no goroutine when no GPU supports events")
	assert.Equal(t, int32(1), f.frees.Load(), "unused event set freed")
}
