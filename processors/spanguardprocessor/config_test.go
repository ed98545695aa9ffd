package spanguardprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {

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

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewID(metadata.Type), Want: createDefaultConfig().(*Config)},
		{ID: component.NewIDWithName(metadata.Type, "gateway"), Want: gateway},
		{ID: component.NewIDWithName(metadata.Type, "too_big_batch"), WantErr: []string{"max_batch_bytes: must be in [1024, 4194304)"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_apply"), WantErr: []string{`span_limits.apply: must be one of [over_budget, always], got "sometimes"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_rate_key"), WantErr: []string{`rate_limit.key: must be "resource:<attribute>" or "metadata:<key>", got "header:tenant"`}},
		{ID: component.NewIDWithName(metadata.Type, "negative_budget"), WantErr: []string{
			"trace_budget.max_spans: must be 0 (no limit) or positive, got -1",
			"trace_budget.window: must be a positive duration, got 0s"}},
		{ID: component.NewIDWithName(metadata.Type, "duplicate_keys"), WantErr: []string{`metadata_keys: duplicate entry "tenant"`}},
		{ID: component.NewIDWithName(metadata.Type, "marker_too_long"), WantErr: []string{"span_limits.truncation_marker: must be shorter than span_limits.max_attribute_bytes"}},
		{ID: component.NewIDWithName(metadata.Type, "min_run"), WantErr: []string{"compression.min_run: must be at least 2, got 1"}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
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
