package inferencelogreceiver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, metadata.LogsStability, f.LogsStability())
	assert.Equal(t, metadata.MetricsStability, f.MetricsStability())
}

func TestCreateDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	assert.Equal(t, "vllm", cfg.Preset)
	assert.Equal(t, "end", cfg.InputConfig.StartAt)
	assert.Equal(t, "Local", cfg.Timezone)
	assert.Equal(t, "inference_log", cfg.Metrics.Namespace)
	// A default config lacks only the files to read.
	assert.ErrorContains(t, cfg.Validate(), "include: at least one file glob is required")
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	tests := []struct {
		id      component.ID
		check   func(t *testing.T, cfg *Config)
		wantErr []string // every fragment must appear in the error
	}{
		{
			id:      component.NewID(metadata.Type),
			wantErr: []string{"include: at least one file glob is required"},
		},
		{
			id: component.NewIDWithName(metadata.Type, "vllm"),
			check: func(t *testing.T, cfg *Config) {
				assert.Equal(t, "vllm", cfg.Preset)
				assert.Equal(t, []string{"/var/log/vllm/*.log"}, cfg.InputConfig.Include)
				assert.Equal(t, []string{"/var/log/vllm/*.gz"}, cfg.InputConfig.Exclude)
				assert.Equal(t, "beginning", cfg.InputConfig.StartAt)
				assert.Equal(t, "UTC", cfg.Timezone)
				require.NotNil(t, cfg.StorageID)
				assert.Equal(t, "file_storage", cfg.StorageID.String())
				require.NotNil(t, cfg.InputConfig.SplitConfig.LineStartPattern)
				assert.Equal(t, "gpu_node", cfg.Metrics.Namespace)
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "tgi_with_operators"),
			check: func(t *testing.T, cfg *Config) {
				assert.Equal(t, "tgi", cfg.Preset)
				require.Len(t, cfg.Operators, 1)
				assert.Equal(t, "add", cfg.Operators[0].Type())
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "none"),
			check: func(t *testing.T, cfg *Config) {
				assert.Equal(t, presetNone, cfg.Preset)
				assert.Empty(t, cfg.Metrics.Namespace)
			},
		},
		{id: component.NewIDWithName(metadata.Type, "bad_preset"), wantErr: []string{`preset: "triton" is not one of vllm, tgi, sglang, ollama, llamacpp, none`}},
		{id: component.NewIDWithName(metadata.Type, "no_include"), wantErr: []string{"include:"}},
		{id: component.NewIDWithName(metadata.Type, "bad_start_at"), wantErr: []string{`start_at: "middle" is not one of beginning, end`}},
		{id: component.NewIDWithName(metadata.Type, "bad_timezone"), wantErr: []string{`timezone: "Mars/Olympus_Mons"`}},
		{id: component.NewIDWithName(metadata.Type, "bad_namespace"), wantErr: []string{`metrics.namespace: "Inference-Log"`}},
		{id: component.NewIDWithName(metadata.Type, "bad_operator"), wantErr: []string{"operators[0] (regex_parser"}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, frag := range tt.wantErr {
					assert.ErrorContains(t, err, frag)
				}
				return
			}
			require.NoError(t, err)
			tt.check(t, cfg.(*Config))
		})
	}
}

// TestPresetsLoad checks every embedded preset decodes, builds and names its
// captures consistently.
func TestPresetsLoad(t *testing.T) {
	set := componenttest.NewNopTelemetrySettings()
	for _, name := range presetNames {
		t.Run(name, func(t *testing.T) {
			p, err := loadPreset(name, presetParams{Location: "UTC"})
			require.NoError(t, err)
			require.NotEmpty(t, p.operators)
			for _, op := range p.operators {
				_, err := op.Build(set)
				require.NoError(t, err, "operator %s", op.ID())
			}
			for capture, f := range p.fields {
				if f.Metric != nil {
					assert.NotEmpty(t, f.Metric.Unit, "metric of %s has a unit", capture)
					assert.NotEmpty(t, f.Metric.Description, "metric of %s has a description", capture)
					assert.Contains(t, []string{"int", "double", "duration"}, f.Type, "metric of %s is numeric (a duration converts to seconds)", capture)
				}
			}
		})
	}
	_, err := loadPreset("triton", presetParams{Location: "UTC"})
	assert.Error(t, err)
}
