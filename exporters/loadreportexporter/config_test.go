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
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
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
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

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

	tests := []struct {
		name     string
		expected *Config
		errs     []string // each must appear in the validation error
	}{
		{name: "", expected: createDefaultConfig()},
		{name: "full", expected: full},
		{name: "bad_format", errs: []string{"formats[0]:", `"pdf"`, `"json", "markdown", "html"`}},
		{name: "no_formats", errs: []string{"formats:", "at least one"}},
		{name: "empty_directory", errs: []string{"directory:", "non-empty"}},
		{name: "negative_interval", errs: []string{"interval:", "-1s"}},
		{name: "bad_quantity", errs: []string{"slos[0]: quantity:", `"latency"`, `"ttft"`, `"span_loss"`}},
		{name: "bad_percentile", errs: []string{"slos[0]: percentile:", "97", "50, 90, 95, 99, 100"}},
		{name: "no_threshold", errs: []string{"slos[0]:", "no threshold set"}},
		{name: "pass_above_fail", errs: []string{"slos[0]: pass_below:", "above the fail threshold"}},
		{name: "wrong_direction", errs: []string{"slos[0]:", "goodput_ratio is better when higher"}},
		{name: "duplicate_slo", errs: []string{"slos[1].name:", `"x" is used twice`}},
		{name: "bad_exit", errs: []string{"exit.on_verdict:", `"error"`, `"none", "warn", "fail"`}},
		{name: "stop_early_without_gate", errs: []string{"exit.stop_early:", "exit.on_verdict"}},
		{name: "bad_no_data", errs: []string{"exit.no_data:", `"warn"`, `"fail", "pass"`}},
		{name: "bad_accuracy", errs: []string{"limits.relative_accuracy:", "1.5"}},
		{name: "bad_limits", errs: []string{"limits.max_groups:", "limits.max_timeline_points:", "limits.max_sketch_bins:"}},
		{name: "negative_goodput", errs: []string{"goodput.ttft:", "-1s"}},
	}
	for _, tt := range tests {
		id := component.NewIDWithName(metadata.Type, tt.name)
		t.Run(id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.errs) == 0 {
				require.NoError(t, err)
				assert.Equal(t, tt.expected, cfg)
				return
			}
			require.Error(t, err)
			for _, want := range tt.errs {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}
