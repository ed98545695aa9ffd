//go:build e2e

package e2e

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// OTLPSink is an OTLP/gRPC server for traces, metrics and logs that keeps a
// copy of every request it receives, in arrival order. Nothing it keeps is
// changed after it is stored, so the Each* accessors read it outside the
// lock; their callbacks may call the sink again.
type OTLPSink struct {
	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
	logs    []plog.Logs
	largest int // largest trace request, in bytes
}

// maxRecvMsgSize lets the sink take requests larger than gRPC's 4 MiB default.
const maxRecvMsgSize = 16 << 20

// StartOTLPSink serves traces, metrics and logs on one loopback address,
// returned with the sink; the server stops when the test ends.
func StartOTLPSink(t *testing.T) (*OTLPSink, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxRecvMsgSize))
	sink := &OTLPSink{}
	ptraceotlp.RegisterGRPCServer(srv, &sinkTraces{s: sink})
	pmetricotlp.RegisterGRPCServer(srv, &sinkMetrics{s: sink})
	plogotlp.RegisterGRPCServer(srv, &sinkLogs{s: sink})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return sink, l.Addr().String()
}

type sinkTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *OTLPSink
}

func (h *sinkTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := ptrace.NewTraces()
	req.Traces().CopyTo(td)
	size := (&ptrace.ProtoMarshaler{}).TracesSize(td)
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.traces = append(h.s.traces, td)
	h.s.largest = max(h.s.largest, size)
	return ptraceotlp.NewExportResponse(), nil
}

type sinkMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *OTLPSink
}

func (h *sinkMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	md := pmetric.NewMetrics()
	req.Metrics().CopyTo(md)
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.metrics = append(h.s.metrics, md)
	return pmetricotlp.NewExportResponse(), nil
}

type sinkLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *OTLPSink
}

func (h *sinkLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	ld := plog.NewLogs()
	req.Logs().CopyTo(ld)
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.logs = append(h.s.logs, ld)
	return plogotlp.NewExportResponse(), nil
}

// received returns what the sink holds now.
func (s *OTLPSink) received() ([]ptrace.Traces, []pmetric.Metrics, []plog.Logs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.traces[:len(s.traces):len(s.traces)], s.metrics[:len(s.metrics):len(s.metrics)], s.logs[:len(s.logs):len(s.logs)]
}

// EachSpan calls fn for every span received so far, in arrival order, with
// the resource it came with.
func (s *OTLPSink) EachSpan(fn func(res pcommon.Resource, sp ptrace.Span)) {
	traces, _, _ := s.received()
	for _, td := range traces {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					fn(rss.At(i).Resource(), spans.At(k))
				}
			}
		}
	}
}

// EachMetric calls fn for every metric received so far, in arrival order,
// with the resource it came with.
func (s *OTLPSink) EachMetric(fn func(res pcommon.Resource, m pmetric.Metric)) {
	_, metrics, _ := s.received()
	for _, md := range metrics {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					fn(rms.At(i).Resource(), ms.At(k))
				}
			}
		}
	}
}

// EachLogRecord calls fn for every log record received so far, in arrival
// order, with the resource it came with.
func (s *OTLPSink) EachLogRecord(fn func(res pcommon.Resource, lr plog.LogRecord)) {
	_, _, logs := s.received()
	for _, ld := range logs {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					fn(rls.At(i).Resource(), lrs.At(k))
				}
			}
		}
	}
}

// SpanCount is the number of spans received, duplicates included.
func (s *OTLPSink) SpanCount() int {
	traces, _, _ := s.received()
	n := 0
	for _, td := range traces {
		n += td.SpanCount()
	}
	return n
}

// DataPointCount is the number of metric data points received.
func (s *OTLPSink) DataPointCount() int {
	_, metrics, _ := s.received()
	n := 0
	for _, md := range metrics {
		n += md.DataPointCount()
	}
	return n
}

// LogRecordCount is the number of log records received.
func (s *OTLPSink) LogRecordCount() int {
	_, _, logs := s.received()
	n := 0
	for _, ld := range logs {
		n += ld.LogRecordCount()
	}
	return n
}

// LargestTraceRequest is the size, in bytes, of the largest trace request
// received.
func (s *OTLPSink) LargestTraceRequest() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.largest
}
