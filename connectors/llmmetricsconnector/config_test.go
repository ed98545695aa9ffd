package llmmetricsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
)

func TestCreateDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
}

func strPtr(s string) *string { return &s }

func TestLoadConfig(t *testing.T) {

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

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewID(metadata.Type), Want: createDefaultConfig()},
		{ID: component.NewIDWithName(metadata.Type, "full"), Want: full},
		{ID: component.NewIDWithName(metadata.Type, "bad_target"), WantErr: []string{"target:", `"v1.99"`, `"v1.41"`, `"latest"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_temporality"), WantErr: []string{"aggregation_temporality:", `"monthly"`, `"cumulative"`, `"delta"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_histogram"), WantErr: []string{"histogram.type:", `"linear"`, `"explicit"`, `"exponential"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_max_size"), WantErr: []string{"histogram.max_size:", "2 to 16384"}},
		{ID: component.NewIDWithName(metadata.Type, "zero_limit"), WantErr: []string{"aggregation_cardinality_limit:", "positive"}},
		{ID: component.NewIDWithName(metadata.Type, "zero_flush"), WantErr: []string{"metrics_flush_interval:", "positive"}},
		{ID: component.NewIDWithName(metadata.Type, "duplicate_dimension"), WantErr: []string{"dimensions[0].name:", `"gen_ai.request.model" is already a dimension`}},
		{ID: component.NewIDWithName(metadata.Type, "reserved_dimension"), WantErr: []string{"dimensions[0].name:", `"otel.metric.overflow"`}},
		{ID: component.NewIDWithName(metadata.Type, "empty_dimension"), WantErr: []string{"dimensions[0].name:", "non-empty"}},
		{ID: component.NewIDWithName(metadata.Type, "negative_slo"), WantErr: []string{"slo.tpot:", "-5ms"}},
		{ID: component.NewIDWithName(metadata.Type, "negative_expiration"), WantErr: []string{"series_expiration:"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_exemplars"), WantErr: []string{"exemplars.max_per_data_point:", "1 to 100"}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}
