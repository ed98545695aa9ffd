package spanguardprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	gateway := createDefaultConfig().(*Config)
	gateway.MaxBatchSpans = 4096
	gateway.MaxBatchBytes = 2 << 20
	gateway.FlushTimeout = 500 * time.Millisecond
	gateway.MetadataKeys = []string{"x-tenant"}
	gateway.MetadataCardinalityLimit = 50
	gateway.TraceBudget = TraceBudgetConfig{MaxSpans: 2000, MaxBytes: 8 << 20, Window: time.Minute, MaxTraces: 5000}
	gateway.Compression = CompressionConfig{Enabled: true, MaxSpanDuration: 50 * time.Millisecond, MinRun: 3}
	gateway.SpanLimits = SpanLimitsConfig{Apply: limitsAlways, MaxAttributeBytes: 8192, TruncationMarker: "...[truncated]",
		MaxAttributes: 64, MaxEvents: 32, MaxLinks: 16}
	gateway.Summary = SummaryConfig{Enabled: true, MaxNames: 5}
	gateway.MemoryLimitMiB = 256
	gateway.RateLimit = RateLimitConfig{Key: "metadata:x-tenant", SpansPerSecond: 5000, BurstSpans: 10000,
		BytesPerSecond: 10 << 20, MaxKeys: 100}

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig().(*Config)},
		{id: component.NewIDWithName(metadata.Type, "gateway"), want: gateway},
		{id: component.NewIDWithName(metadata.Type, "too_big_batch"), wantErr: []string{"max_batch_bytes: must be in [1024, 4194304)"}},
		{id: component.NewIDWithName(metadata.Type, "bad_apply"), wantErr: []string{`span_limits.apply: must be one of [over_budget, always], got "sometimes"`}},
		{id: component.NewIDWithName(metadata.Type, "bad_rate_key"), wantErr: []string{`rate_limit.key: must be "resource:<attribute>" or "metadata:<key>", got "header:tenant"`}},
		{id: component.NewIDWithName(metadata.Type, "negative_budget"), wantErr: []string{
			"trace_budget.max_spans: must be 0 (no limit) or positive, got -1",
			"trace_budget.window: must be a positive duration, got 0s"}},
		{id: component.NewIDWithName(metadata.Type, "duplicate_keys"), wantErr: []string{`metadata_keys: duplicate entry "tenant"`}},
		{id: component.NewIDWithName(metadata.Type, "marker_too_long"), wantErr: []string{"span_limits.truncation_marker: must be shorter than span_limits.max_attribute_bytes"}},
		{id: component.NewIDWithName(metadata.Type, "min_run"), wantErr: []string{"compression.min_run: must be at least 2, got 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestValidateNamesFields(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"max_batch_spans", func(c *Config) { c.MaxBatchSpans = 0 }, "max_batch_spans: must be at least 1"},
		{"max_batch_bytes small", func(c *Config) { c.MaxBatchBytes = 10 }, "max_batch_bytes: must be in [1024, 4194304)"},
		{"flush_timeout", func(c *Config) { c.FlushTimeout = 0 }, "flush_timeout: must be a positive duration"},
		{"max_traces", func(c *Config) { c.TraceBudget.MaxTraces = 0 }, "trace_budget.max_traces: must be at least 1"},
		{"max_bytes", func(c *Config) { c.TraceBudget.MaxBytes = -5 }, "trace_budget.max_bytes: must be 0 (no limit) or positive"},
		{"max_span_duration", func(c *Config) { c.Compression.MaxSpanDuration = -time.Second }, "compression.max_span_duration: must not be negative"},
		{"max_events", func(c *Config) { c.SpanLimits.MaxEvents = -1 }, "span_limits.max_events: must be 0 (off) or positive"},
		{"max_attribute_bytes", func(c *Config) { c.SpanLimits.MaxAttributeBytes = -1 }, "span_limits.max_attribute_bytes"},
		{"memory_limit_mib", func(c *Config) { c.MemoryLimitMiB = 0 }, "memory_limit_mib: must be at least 1"},
		{"max_names", func(c *Config) { c.Summary.MaxNames = -1 }, "summary.max_names"},
		{"rate negative", func(c *Config) { c.RateLimit.SpansPerSecond = -1 }, "rate_limit: spans_per_second, bytes_per_second"},
		{"rate max_keys", func(c *Config) { c.RateLimit.SpansPerSecond = 1; c.RateLimit.MaxKeys = 0 }, "rate_limit.max_keys: must be at least 1"},
		{"cardinality", func(c *Config) { c.MetadataKeys = []string{"t"}; c.MetadataCardinalityLimit = 0 }, "metadata_cardinality_limit: must be at least 1"},
		{"empty key", func(c *Config) { c.MetadataKeys = []string{""} }, "metadata_keys: entries must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.mutate(cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	require.NoError(t, createDefaultConfig().(*Config).Validate())
}
