package loadreportexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func counterValue(t *testing.T, tel *componenttest.Telemetry, name string, attrs map[string]string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err, name)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is %T", name, m.Data)
	for _, dp := range sum.DataPoints {
		match := dp.Attributes.Len() == len(attrs)
		for k, v := range attrs {
			got, ok := dp.Attributes.Value(attribute.Key(k))
			match = match && ok && got.Emit() == v
		}
		if match {
			return dp.Value
		}
	}
	t.Errorf("no point of %s with %v in %+v", name, attrs, sum.DataPoints)
	return 0
}

// TestOwnTelemetry: every span and data point the exporter looks at is
// counted by outcome, as are folded error types, report files and verdicts.
func TestOwnTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(bg)) })
	cfg := testConfig(t)
	cfg.Limits.MaxErrorTypes = 2
	e, err := newReportExporter(cfg, tel.NewTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, e.start(bg, componenttest.NewNopHost()))
	require.NoError(t, e.consumeTraces(bg, knownRun()))
	md := knownMetrics()
	md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty().SetName("unrelated.metric")
	require.NoError(t, e.consumeMetrics(bg, md))
	require.NoError(t, e.shutdown(bg))

	spans := "otelcol_load_report_spans"
	assert.EqualValues(t, 50, counterValue(t, tel, spans, map[string]string{"outcome": "request"}))
	assert.EqualValues(t, 1, counterValue(t, tel, spans, map[string]string{"outcome": "not_model_call"}))
	assert.EqualValues(t, 1, counterValue(t, tel, spans, map[string]string{"outcome": "not_genai"}))
	assert.EqualValues(t, 1, counterValue(t, tel, spans, map[string]string{"outcome": "span_guard_summary"}))
	assert.EqualValues(t, 37, counterValue(t, tel, "otelcol_load_report_metric_points", map[string]string{"outcome": "used"}))
	assert.EqualValues(t, 1, counterValue(t, tel, "otelcol_load_report_folded", map[string]string{"kind": "error_type"}))
	assert.EqualValues(t, 50, counterValue(t, tel, "otelcol_load_report_csv_rows", map[string]string{"outcome": "written"}), "one requests.csv row per request span")
	for _, f := range []string{FormatJSON, FormatMarkdown, FormatHTML} {
		assert.EqualValues(t, 1, counterValue(t, tel, "otelcol_load_report_writes", map[string]string{"format": f, "outcome": "success"}))
	}
	assert.EqualValues(t, 1, counterValue(t, tel, "otelcol_load_report_verdicts", map[string]string{"verdict": "FAIL", "final": "true"}))
}
