package llmmetricsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
)

func TestCreateDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
}

func strPtr(s string) *string { return &s }

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	full := createDefaultConfig().(*Config)
	full.Target = "latest"
	full.Histogram = HistogramConfig{Type: "exponential", MaxSize: 80}
	full.Dimensions = []Dimension{{Name: "tenant"}, {Name: "gen_ai.request.stream", Default: strPtr("false")}}
	full.ResourceAttributes = []string{"service.name", "k8s.namespace.name"}
	full.AggregationTemporality = "delta"
	full.MetricsFlushInterval = 30 * time.Second
	full.AggregationCardinalityLimit = 200
	full.SeriesExpiration = 10 * time.Minute
	full.ServerMetrics = false
	full.SLO = SLOConfig{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 10 * time.Second}
	full.Evaluation = EvaluationConfig{ScoreThreshold: 0.7, Thresholds: map[string]float64{"hallucination": 0.3}, MaxNames: 4}
	full.Exemplars = ExemplarsConfig{Enabled: true, MaxPerDataPoint: 3}

	tests := []struct {
		id       component.ID
		expected component.Config
		errs     []string // each must appear in the validation error
	}{
		{id: component.NewID(metadata.Type), expected: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "full"), expected: full},
		{id: component.NewIDWithName(metadata.Type, "bad_target"), errs: []string{"target:", `"v1.99"`, `"v1.41"`, `"latest"`}},
		{id: component.NewIDWithName(metadata.Type, "bad_temporality"), errs: []string{"aggregation_temporality:", `"monthly"`, `"cumulative"`, `"delta"`}},
		{id: component.NewIDWithName(metadata.Type, "bad_histogram"), errs: []string{"histogram.type:", `"linear"`, `"explicit"`, `"exponential"`}},
		{id: component.NewIDWithName(metadata.Type, "bad_max_size"), errs: []string{"histogram.max_size:", "2 to 16384"}},
		{id: component.NewIDWithName(metadata.Type, "zero_limit"), errs: []string{"aggregation_cardinality_limit:", "positive"}},
		{id: component.NewIDWithName(metadata.Type, "zero_flush"), errs: []string{"metrics_flush_interval:", "positive"}},
		{id: component.NewIDWithName(metadata.Type, "duplicate_dimension"), errs: []string{"dimensions[0].name:", `"gen_ai.request.model" is already a dimension`}},
		{id: component.NewIDWithName(metadata.Type, "reserved_dimension"), errs: []string{"dimensions[0].name:", `"otel.metric.overflow"`}},
		{id: component.NewIDWithName(metadata.Type, "empty_dimension"), errs: []string{"dimensions[0].name:", "non-empty"}},
		{id: component.NewIDWithName(metadata.Type, "negative_slo"), errs: []string{"slo.tpot:", "-5ms"}},
		{id: component.NewIDWithName(metadata.Type, "negative_expiration"), errs: []string{"series_expiration:"}},
		{id: component.NewIDWithName(metadata.Type, "bad_exemplars"), errs: []string{"exemplars.max_per_data_point:", "1 to 100"}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.errs) > 0 {
				require.Error(t, err)
				for _, want := range tt.errs {
					assert.Contains(t, err.Error(), want)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expected, cfg)
		})
	}
}
