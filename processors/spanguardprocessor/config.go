package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Limits that keep a configuration away from values that cannot work.
const (
	// minBatchBytes leaves room for the resource, scope and span framing of
	// at least one small span.
	minBatchBytes = 1024
	// maxBatchBytesCeiling is gRPC's default receive limit (4 MiB); a batch at
	// or above it is refused by default-configured backends.
	maxBatchBytesCeiling = 4 << 20
)

// Config is the span_guard processor's configuration.
type Config struct {
	// MaxBatchSpans is the most spans one outgoing batch holds; a batch is
	// sent as soon as the next span would not fit.
	MaxBatchSpans int `mapstructure:"max_batch_spans"`
	// MaxBatchBytes is the most protobuf-encoded bytes one outgoing batch
	// (an OTLP ExportTraceServiceRequest body) holds. It must stay under the
	// receiving side's message limit (gRPC default 4 MiB).
	MaxBatchBytes int `mapstructure:"max_batch_bytes"`
	// FlushTimeout sends a non-empty batch this long after its first span.
	FlushTimeout time.Duration `mapstructure:"flush_timeout"`
	// MetadataKeys batches separately per distinct combination of these
	// client metadata values (for example a tenant header).
	MetadataKeys []string `mapstructure:"metadata_keys"`
	// MetadataCardinalityLimit caps the number of distinct combinations.
	MetadataCardinalityLimit int `mapstructure:"metadata_cardinality_limit"`

	// TraceBudget bounds what one trace may send within a window.
	TraceBudget TraceBudgetConfig `mapstructure:"trace_budget"`
	// Compression folds repetitive sibling leaf spans of an over-budget trace.
	Compression CompressionConfig `mapstructure:"compression"`
	// SpanLimits truncates attribute values and caps attributes, events and links.
	SpanLimits SpanLimitsConfig `mapstructure:"span_limits"`
	// Summary adds one span per affected trace that records what was removed.
	Summary SummaryConfig `mapstructure:"summary"`
	// MemoryLimitMiB refuses new data (retryable) while the bytes held in open
	// batches plus the accounted trace state exceed it.
	MemoryLimitMiB int `mapstructure:"memory_limit_mib"`
	// RateLimit applies token buckets per service or tenant.
	RateLimit RateLimitConfig `mapstructure:"rate_limit"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// TraceBudgetConfig is the per-trace budget.
type TraceBudgetConfig struct {
	// MaxSpans is the most spans forwarded per trace per window (0: no limit).
	MaxSpans int `mapstructure:"max_spans"`
	// MaxBytes is the most encoded span bytes forwarded per trace per window (0: no limit).
	MaxBytes int64 `mapstructure:"max_bytes"`
	// Window is how long a trace's budget lasts after its first span; when it
	// ends the trace's state is released and its summary span is sent.
	Window time.Duration `mapstructure:"window"`
	// MaxTraces bounds the trace states held (least recently used evicted first).
	MaxTraces int `mapstructure:"max_traces"`
}

// CompressionConfig controls sibling compression (ladder step 1).
type CompressionConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// MaxSpanDuration: only spans at most this long are folded.
	MaxSpanDuration time.Duration `mapstructure:"max_span_duration"`
	// MinRun is the fewest consecutive matching siblings folded into a composite.
	MinRun int `mapstructure:"min_run"`
}

// Span limit modes.
const (
	limitsOverBudget = "over_budget"
	limitsAlways     = "always"
)

// SpanLimitsConfig controls truncation and caps (ladder step 2).
type SpanLimitsConfig struct {
	// Apply is "over_budget" (only spans of traces past their budget) or
	// "always" (every span).
	Apply string `mapstructure:"apply"`
	// MaxAttributeBytes truncates longer string/bytes attribute values (0: off).
	MaxAttributeBytes int `mapstructure:"max_attribute_bytes"`
	// TruncationMarker ends a truncated string value.
	TruncationMarker string `mapstructure:"truncation_marker"`
	// MaxAttributes caps attributes per span, event and link (0: off).
	MaxAttributes int `mapstructure:"max_attributes"`
	// MaxEvents caps events per span (0: off).
	MaxEvents int `mapstructure:"max_events"`
	// MaxLinks caps links per span (0: off).
	MaxLinks int `mapstructure:"max_links"`
}

// SummaryConfig controls the summary span (ladder step 4).
type SummaryConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// MaxNames is how many distinct names of removed spans the summary lists.
	MaxNames int `mapstructure:"max_names"`
}

// RateLimitConfig is an optional token bucket per key.
type RateLimitConfig struct {
	// Key selects the bucket: "resource:<attribute>" (default
	// "resource:service.name") or "metadata:<client metadata key>".
	Key string `mapstructure:"key"`
	// SpansPerSecond refills the span bucket (0: no span limit).
	SpansPerSecond float64 `mapstructure:"spans_per_second"`
	// BurstSpans is the span bucket's capacity (default: one second's worth).
	BurstSpans float64 `mapstructure:"burst_spans"`
	// BytesPerSecond refills the byte bucket (0: no byte limit).
	BytesPerSecond float64 `mapstructure:"bytes_per_second"`
	// BurstBytes is the byte bucket's capacity (default: one second's worth).
	BurstBytes float64 `mapstructure:"burst_bytes"`
	// MaxKeys bounds the buckets; further keys share one overflow bucket.
	MaxKeys int `mapstructure:"max_keys"`
}

func (r RateLimitConfig) enabled() bool { return r.SpansPerSecond > 0 || r.BytesPerSecond > 0 }

var _ component.Config = (*Config)(nil)

// Validate checks the configuration; each error names the field and what it accepts.
func (cfg *Config) Validate() error {
	var errs configErrors
	cfg.validateBatching(&errs)
	cfg.TraceBudget.validate(&errs)
	cfg.Compression.validate(&errs)
	cfg.SpanLimits.validate(&errs)
	if cfg.Summary.Enabled && cfg.Summary.MaxNames < 0 {
		errs.add("summary.max_names: must be 0 or positive, got %d", cfg.Summary.MaxNames)
	}
	if cfg.MemoryLimitMiB < 1 {
		errs.add("memory_limit_mib: must be at least 1, got %d", cfg.MemoryLimitMiB)
	}
	cfg.RateLimit.validate(&errs)
	return errors.Join(errs...)
}

// configErrors collects what Validate finds, in the order it checks.
type configErrors []error

func (e *configErrors) add(format string, args ...any) { *e = append(*e, fmt.Errorf(format, args...)) }

// validateBatching checks the batch limits and the metadata keys batches
// are split by.
func (cfg *Config) validateBatching(errs *configErrors) {
	if cfg.MaxBatchSpans < 1 {
		errs.add("max_batch_spans: must be at least 1, got %d", cfg.MaxBatchSpans)
	}
	if cfg.MaxBatchBytes < minBatchBytes || cfg.MaxBatchBytes >= maxBatchBytesCeiling {
		errs.add("max_batch_bytes: must be in [%d, %d) (under gRPC's 4 MiB default message limit), got %d",
			minBatchBytes, maxBatchBytesCeiling, cfg.MaxBatchBytes)
	}
	if cfg.FlushTimeout <= 0 {
		errs.add("flush_timeout: must be a positive duration, got %v", cfg.FlushTimeout)
	}
	seen := map[string]bool{}
	for _, k := range cfg.MetadataKeys {
		l := strings.ToLower(k)
		if l == "" {
			errs.add("metadata_keys: entries must not be empty")
		}
		if seen[l] {
			errs.add("metadata_keys: duplicate entry %q (keys are case-insensitive)", l)
		}
		seen[l] = true
	}
	if len(cfg.MetadataKeys) > 0 && cfg.MetadataCardinalityLimit < 1 {
		errs.add("metadata_cardinality_limit: must be at least 1 when metadata_keys is set, got %d", cfg.MetadataCardinalityLimit)
	}
}

// validate checks the trace_budget section.
func (b TraceBudgetConfig) validate(errs *configErrors) {
	if b.MaxSpans < 0 {
		errs.add("trace_budget.max_spans: must be 0 (no limit) or positive, got %d", b.MaxSpans)
	}
	if b.MaxBytes < 0 {
		errs.add("trace_budget.max_bytes: must be 0 (no limit) or positive, got %d", b.MaxBytes)
	}
	if b.Window <= 0 {
		errs.add("trace_budget.window: must be a positive duration, got %v", b.Window)
	}
	if b.MaxTraces < 1 {
		errs.add("trace_budget.max_traces: must be at least 1, got %d", b.MaxTraces)
	}
}

// validate checks the compression section, when enabled.
func (c CompressionConfig) validate(errs *configErrors) {
	if !c.Enabled {
		return
	}
	if c.MinRun < 2 {
		errs.add("compression.min_run: must be at least 2, got %d", c.MinRun)
	}
	if c.MaxSpanDuration < 0 {
		errs.add("compression.max_span_duration: must not be negative, got %v", c.MaxSpanDuration)
	}
}

// validate checks the span_limits section.
func (l SpanLimitsConfig) validate(errs *configErrors) {
	if l.Apply != limitsOverBudget && l.Apply != limitsAlways {
		errs.add("span_limits.apply: must be one of [%s, %s], got %q", limitsOverBudget, limitsAlways, l.Apply)
	}
	if l.MaxAttributeBytes < 0 {
		errs.add("span_limits.max_attribute_bytes: must be 0 (off) or positive, got %d", l.MaxAttributeBytes)
	}
	if l.MaxAttributeBytes > 0 && len(l.TruncationMarker) >= l.MaxAttributeBytes {
		errs.add("span_limits.truncation_marker: must be shorter than span_limits.max_attribute_bytes (%d bytes), got %d bytes",
			l.MaxAttributeBytes, len(l.TruncationMarker))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max_attributes", l.MaxAttributes}, {"max_events", l.MaxEvents}, {"max_links", l.MaxLinks}} {
		if f.v < 0 {
			errs.add("span_limits.%s: must be 0 (off) or positive, got %d", f.name, f.v)
		}
	}
}

// validate checks the rate_limit section; the key and max_keys only matter
// when a limit is set.
func (r RateLimitConfig) validate(errs *configErrors) {
	if r.SpansPerSecond < 0 || r.BytesPerSecond < 0 || r.BurstSpans < 0 || r.BurstBytes < 0 {
		errs.add("rate_limit: spans_per_second, bytes_per_second, burst_spans and burst_bytes must not be negative")
	}
	if !r.enabled() {
		return
	}
	if _, _, err := parseRateKey(r.Key); err != nil {
		*errs = append(*errs, err)
	}
	if r.MaxKeys < 1 {
		errs.add("rate_limit.max_keys: must be at least 1, got %d", r.MaxKeys)
	}
}

// Rate limit key sources.
const (
	rateKeyResource = "resource"
	rateKeyMetadata = "metadata"
)

func parseRateKey(key string) (source, name string, err error) {
	source, name, ok := strings.Cut(key, ":")
	if !ok || name == "" || (source != rateKeyResource && source != rateKeyMetadata) {
		return "", "", fmt.Errorf("rate_limit.key: must be %q or %q, got %q",
			rateKeyResource+":<attribute>", rateKeyMetadata+":<key>", key)
	}
	return source, name, nil
}
