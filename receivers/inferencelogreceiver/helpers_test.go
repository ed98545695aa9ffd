package inferencelogreceiver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// testConfig is a default config reading include from the beginning, with
// timestamps in UTC so golden files do not depend on the machine's zone.
func testConfig(presetName string, include ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Preset = presetName
	cfg.Timezone = "UTC"
	cfg.InputConfig.Include = include
	cfg.InputConfig.StartAt = "beginning"
	cfg.InputConfig.PollInterval = 20 * time.Millisecond
	return cfg
}

type started struct {
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
	tel     *componenttest.Telemetry
	lr      receiver.Logs
	mr      receiver.Metrics
}

// startReceiver creates the receiver for both signals (sharing one instance)
// and starts it on host.
func startReceiver(t *testing.T, cfg *Config, host component.Host) *started {
	t.Helper()
	s := &started{logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink), tel: componenttest.NewTelemetry()}
	t.Cleanup(func() { require.NoError(t, s.tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = s.tel.NewTelemetrySettings()
	f := NewFactory()
	var err error
	s.lr, err = f.CreateLogs(context.Background(), set, cfg, s.logs)
	require.NoError(t, err)
	s.mr, err = f.CreateMetrics(context.Background(), set, cfg, s.metrics)
	require.NoError(t, err)
	require.NoError(t, s.lr.Start(context.Background(), host))
	require.NoError(t, s.mr.Start(context.Background(), host))
	return s
}

// allRecords lists the log records the sink received, in order.
func allRecords(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

func (s *started) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, s.lr.Shutdown(context.Background()))
	require.NoError(t, s.mr.Shutdown(context.Background()))
}

func (s *started) waitRecords(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.logs.LogRecordCount() >= n }, 30*time.Second, 10*time.Millisecond,
		"want %d log records", n)
}

// expectedRecords is the number of records the preset makes of the file's
// non-empty lines: one per line, except the continuation lines (after
// unwrapping), which fold into the record before them.
func expectedRecords(t *testing.T, preset, path string) int {
	t.Helper()
	p, err := loadPreset(preset, presetParams{Location: "UTC"})
	require.NoError(t, err)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if line == "" {
			continue
		}
		cont := isContinuation(p, line)
		if !cont || n == 0 { // leading continuation lines make one record
			n++
		}
	}
	return n
}

// mergeHistogramPoints folds the points of each attribute set into one:
// how the reads fall into batches varies between runs, their sum does not.
func mergeHistogramPoints(dps pmetric.HistogramDataPointSlice) {
	merged := pmetric.NewHistogramDataPointSlice()
	byAttrs := map[string]pmetric.HistogramDataPoint{}
	for i := 0; i < dps.Len(); i++ {
		p := dps.At(i)
		k := fmt.Sprint(p.Attributes().AsRaw())
		q, ok := byAttrs[k]
		if !ok {
			q = merged.AppendEmpty()
			p.CopyTo(q)
			byAttrs[k] = q
			continue
		}
		q.SetMin(min(q.Min(), p.Min()))
		q.SetMax(max(q.Max(), p.Max()))
		q.SetStartTimestamp(min(q.StartTimestamp(), p.StartTimestamp()))
		q.SetTimestamp(max(q.Timestamp(), p.Timestamp()))
		q.SetCount(q.Count() + p.Count())
		q.SetSum(q.Sum() + p.Sum())
		for j := 0; j < q.BucketCounts().Len(); j++ {
			q.BucketCounts().SetAt(j, q.BucketCounts().At(j)+p.BucketCounts().At(j))
		}
	}
	merged.Sort(func(a, b pmetric.HistogramDataPoint) bool {
		return fmt.Sprint(a.Attributes().AsRaw()) < fmt.Sprint(b.Attributes().AsRaw())
	})
	merged.CopyTo(dps)
}

// isContinuation reports whether the preset folds line into the record
// before it, as the receiver sees the line: trailing white space trimmed by
// the file input (leading kept), wrappers peeled.
func isContinuation(p *preset, line string) bool {
	line = strings.TrimRight(line, " \t\r")
	return p.continues(unwrap(line, map[string]any{}))
}

// countLines counts the non-empty lines of a file.
func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	require.NoError(t, sc.Err())
	return n
}

// mergeLogs flattens the batches into one resource and scope, in arrival order.
func mergeLogs(batches []plog.Logs) plog.Logs {
	out := plog.NewLogs()
	rl := out.ResourceLogs().AppendEmpty()
	sl := rl.ScopeLogs().AppendEmpty()
	for _, b := range batches {
		for i := 0; i < b.ResourceLogs().Len(); i++ {
			r := b.ResourceLogs().At(i)
			r.Resource().CopyTo(rl.Resource())
			for j := 0; j < r.ScopeLogs().Len(); j++ {
				s := r.ScopeLogs().At(j)
				s.Scope().CopyTo(sl.Scope())
				s.LogRecords().MoveAndAppendTo(sl.LogRecords())
			}
		}
	}
	return out
}

// mergeMetrics flattens the batches into one resource and scope with one
// metric per name, points in arrival order.
func mergeMetrics(batches []pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	rm := out.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	byName := map[string]pmetric.Metric{}
	for _, b := range batches {
		for i := 0; i < b.ResourceMetrics().Len(); i++ {
			r := b.ResourceMetrics().At(i)
			r.Resource().CopyTo(rm.Resource())
			for j := 0; j < r.ScopeMetrics().Len(); j++ {
				s := r.ScopeMetrics().At(j)
				s.Scope().CopyTo(sm.Scope())
				for k := 0; k < s.Metrics().Len(); k++ {
					m := s.Metrics().At(k)
					dst, ok := byName[m.Name()]
					if !ok {
						dst = sm.Metrics().AppendEmpty()
						m.CopyTo(dst)
						byName[m.Name()] = dst
						continue
					}
					switch m.Type() {
					case pmetric.MetricTypeSum:
						m.Sum().DataPoints().MoveAndAppendTo(dst.Sum().DataPoints())
					case pmetric.MetricTypeHistogram:
						m.Histogram().DataPoints().MoveAndAppendTo(dst.Histogram().DataPoints())
					default:
						m.Gauge().DataPoints().MoveAndAppendTo(dst.Gauge().DataPoints())
					}
				}
			}
		}
	}
	// Routers regroup entries, so points leave in an order that varies
	// between runs; order them by time, then attributes, then value.
	for _, m := range byName {
		if m.Type() == pmetric.MetricTypeHistogram {
			mergeHistogramPoints(m.Histogram().DataPoints())
			continue
		}
		var dps pmetric.NumberDataPointSlice
		if m.Type() == pmetric.MetricTypeSum {
			dps = m.Sum().DataPoints()
		} else {
			dps = m.Gauge().DataPoints()
		}
		dps.Sort(func(a, b pmetric.NumberDataPoint) bool {
			if a.Timestamp() != b.Timestamp() {
				return a.Timestamp() < b.Timestamp()
			}
			ka, kb := fmt.Sprint(a.Attributes().AsRaw()), fmt.Sprint(b.Attributes().AsRaw())
			if ka != kb {
				return ka < kb
			}
			return a.DoubleValue()+float64(a.IntValue()) < b.DoubleValue()+float64(b.IntValue())
		})
	}
	return out
}

// pinYear moves a timestamp the receiver completed with the current year
// (the server wrote none) to 2026, the year the sample logs were written.
func pinYear(ts pcommon.Timestamp) pcommon.Timestamp {
	if ts == 0 {
		return ts
	}
	t := ts.AsTime().UTC()
	return pcommon.NewTimestampFromTime(time.Date(2026, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC))
}

func testdataPath(parts ...string) string {
	return filepath.Join(append([]string{"testdata"}, parts...)...)
}
