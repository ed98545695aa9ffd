package loadreportexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
)

func TestCreateDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	c := cfg.(*Config)
	// The default SLOs are the streaming-chat baseline.
	require.Len(t, c.SLOs, 3)
	assert.Equal(t, "PASS < 2.10 s; FAIL > 3.80 s", objective(c.SLOs[0]))
	assert.Equal(t, "PASS < 0.300 %; FAIL ≥ 1.00 %", objective(c.SLOs[1]))
	assert.Equal(t, "FAIL > 12.0 %", objective(c.SLOs[2]))
}

func TestLoadConfig(t *testing.T) {

	full := createDefaultConfig()
	full.Directory = "/var/tmp/loadtest"
	full.Interval = 30 * time.Second
	full.Formats = []string{FormatJSON, FormatHTML}
	full.Title = "Nightly vLLM soak"
	full.Dimensions = DimensionsConfig{Target: []string{"server.address"}, Model: []string{"gen_ai.response.model"}, Scenario: []string{"scenario"}}
	full.CancelledErrorTypes = []string{"cancelled"}
	full.TargetRate = TargetRateConfig{Attributes: []string{"loadgen.rate"}, Metrics: []string{"loadgen.rate"}}
	full.Goodput = GoodputConfig{TTFT: 500 * time.Millisecond, TPOT: 40 * time.Millisecond, E2E: 20 * time.Second}
	full.SLOs = []SLOConfig{
		{Name: "ttft_p99", Quantity: QuantityTTFT, Percentile: 99, PassBelow: f64(1), FailAbove: f64(2)},
		{Name: "goodput", Quantity: QuantityGoodputRatio, PassAtOrAbove: f64(0.95), FailBelow: f64(0.8)},
	}
	full.Exit = ExitConfig{OnVerdict: "fail", StopEarly: true, MinRequests: 100, StopAfter: 10 * time.Minute, StopWhenIdle: 30 * time.Second, NoData: "pass"}
	full.Limits = LimitsConfig{MaxGroups: 50, MaxErrorTypes: 8, RelativeAccuracy: 0.005, MaxSketchBins: 4096,
		TimelineResolution: 5 * time.Second, MaxTimelinePoints: 300, MaxSeries: 1000}

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewIDWithName(metadata.Type, ""), Want: createDefaultConfig()},
		{ID: component.NewIDWithName(metadata.Type, "full"), Want: full},
		{ID: component.NewIDWithName(metadata.Type, "bad_format"), WantErr: []string{"formats[0]:", `"pdf"`, `"json", "markdown", "html"`}},
		{ID: component.NewIDWithName(metadata.Type, "no_formats"), WantErr: []string{"formats:", "at least one"}},
		{ID: component.NewIDWithName(metadata.Type, "empty_directory"), WantErr: []string{"directory:", "non-empty"}},
		{ID: component.NewIDWithName(metadata.Type, "negative_interval"), WantErr: []string{"interval:", "-1s"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_quantity"), WantErr: []string{"slos[0]: quantity:", `"latency"`, `"ttft"`, `"span_loss"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_percentile"), WantErr: []string{"slos[0]: percentile:", "97", "50, 90, 95, 99, 100"}},
		{ID: component.NewIDWithName(metadata.Type, "no_threshold"), WantErr: []string{"slos[0]:", "no threshold set"}},
		{ID: component.NewIDWithName(metadata.Type, "pass_above_fail"), WantErr: []string{"slos[0]: pass_below:", "above the fail threshold"}},
		{ID: component.NewIDWithName(metadata.Type, "wrong_direction"), WantErr: []string{"slos[0]:", "goodput_ratio is better when higher"}},
		{ID: component.NewIDWithName(metadata.Type, "duplicate_slo"), WantErr: []string{"slos[1].name:", `"x" is used twice`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_exit"), WantErr: []string{"exit.on_verdict:", `"error"`, `"none", "warn", "fail"`}},
		{ID: component.NewIDWithName(metadata.Type, "stop_early_without_gate"), WantErr: []string{"exit.stop_early:", "exit.on_verdict"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_no_data"), WantErr: []string{"exit.no_data:", `"warn"`, `"fail", "pass"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_accuracy"), WantErr: []string{"limits.relative_accuracy:", "1.5"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_limits"), WantErr: []string{"limits.max_groups:", "limits.max_timeline_points:", "limits.max_sketch_bins:"}},
		{ID: component.NewIDWithName(metadata.Type, "negative_goodput"), WantErr: []string{"goodput.ttft:", "-1s"}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}
