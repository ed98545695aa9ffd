package inferencelogreceiver

import (
	"os"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"github.com/otelcol-llm/otelcol-llm/internal/metadatatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
)

// TestPresetGolden runs every preset over its sample log (written from the
// server's logging code) and compares the logs and the derived metrics with
// the golden files.
func TestPresetGolden(t *testing.T) {
	for _, name := range presetNames {
		t.Run(name, func(t *testing.T) {
			input := testdataPath("logs", name+".log")
			lines := expectedRecords(t, name, input)
			s := startReceiver(t, testConfig(name, input), componenttest.NewNopHost())
			s.waitRecords(t, lines)
			s.stop(t)
			require.Equal(t, lines, s.logs.LogRecordCount(), "one record per line (continuation lines folded), none dropped")

			logs := mergeLogs(s.logs.AllLogs())
			lrs := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			for i := 0; i < lrs.Len(); i++ {
				lrs.At(i).SetTimestamp(pinYear(lrs.At(i).Timestamp()))
			}
			metrics := mergeMetrics(s.metrics.AllMetrics())
			pinMetricYears(metrics)

			logsFile := testdataPath("golden", name+"_logs.yaml")
			metricsFile := testdataPath("golden", name+"_metrics.yaml")
			if goldentest.Updating() { // go test -run TestPresetGolden -update
				require.NoError(t, golden.WriteLogs(t, logsFile, logs))
				// Written as is: golden.WriteMetrics would re-sort the points and
				// normalise their timestamps, which are part of what is tested.
				b, err := golden.MarshalMetricsYAML(metrics)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(metricsFile, b, 0o600))
			}
			wantLogs, err := golden.ReadLogs(logsFile)
			require.NoError(t, err)
			require.NoError(t, plogtest.CompareLogs(wantLogs, logs, plogtest.IgnoreObservedTimestamp(), plogtest.IgnoreScopeLogsVersion(),
				// stanza routers forward each route's entries as a group, so records
				// of one read may leave in a different order than the lines.
				plogtest.IgnoreLogRecordsOrder()))

			wantMetrics, err := golden.ReadMetrics(metricsFile)
			require.NoError(t, err)
			opts := []pmetrictest.CompareMetricsOption{
				pmetrictest.IgnoreStartTimestamp(), pmetrictest.IgnoreScopeVersion(),
				pmetrictest.IgnoreMetricsOrder(),
			}
			if name == "llamacpp" {
				// llama.cpp timing lines carry no timestamp: points take the time the line was read.
				opts = append(opts, pmetrictest.IgnoreTimestamp())
			}
			require.NoError(t, pmetrictest.CompareMetrics(wantMetrics, metrics, opts...))

			// The receiver's own counters account for every line and point.
			preset := attribute.String("preset", name)
			parseErrors := 0
			for i := 0; i < lrs.Len(); i++ {
				if _, bad := lrs.At(i).Attributes().Get(attrParseError); bad {
					parseErrors++
				}
			}
			require.Positive(t, parseErrors, "each sample log has malformed lines")
			assert.Equal(t, int64(parseErrors), metadatatest.CounterSum(t, s.tel, "otelcol_inference_log_records", preset, attribute.String("outcome", outcomeParseError)))
			assert.Equal(t, int64(lines-parseErrors), metadatatest.CounterSum(t, s.tel, "otelcol_inference_log_records", preset, attribute.String("outcome", outcomeParsed)))
			assert.Equal(t, int64(metrics.DataPointCount()), metadatatest.CounterSum(t, s.tel, "otelcol_inference_log_metric_points", preset, attribute.String("outcome", outcomeSent)))
		})
	}
}

func pinMetricYears(md pmetric.Metrics) {
	sm := md.ResourceMetrics().At(0).ScopeMetrics().At(0)
	for i := 0; i < sm.Metrics().Len(); i++ {
		m := sm.Metrics().At(i)
		dps := pmetric.NewNumberDataPointSlice()
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			dps = m.Gauge().DataPoints()
		case pmetric.MetricTypeSum:
			dps = m.Sum().DataPoints()
		case pmetric.MetricTypeHistogram:
			hps := m.Histogram().DataPoints()
			for j := 0; j < hps.Len(); j++ {
				hps.At(j).SetStartTimestamp(pinYear(hps.At(j).StartTimestamp()))
				hps.At(j).SetTimestamp(pinYear(hps.At(j).Timestamp()))
			}
		}
		for j := 0; j < dps.Len(); j++ {
			dps.At(j).SetTimestamp(pinYear(dps.At(j).Timestamp()))
		}
	}
}
