package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Accepted values of the enumerated settings.
const (
	temporalityCumulative = "cumulative"
	temporalityDelta      = "delta"

	histogramExplicit    = "explicit"
	histogramExponential = "exponential"
)

// Config is the llm_metrics connector configuration.
type Config struct {
	// Target selects the convention revision metric names follow:
	// "v1.41" (default, frozen) or "latest" (semantic-conventions-genai main).
	Target string `mapstructure:"target"`

	// Histogram chooses explicit (advised buckets) or exponential histograms.
	Histogram HistogramConfig `mapstructure:"histogram"`

	// Dimensions are extra span attributes added to every series.
	Dimensions []Dimension `mapstructure:"dimensions"`

	// ResourceAttributes are the resource attributes carried onto the
	// produced metrics (and that split series). Others are dropped.
	ResourceAttributes []string `mapstructure:"resource_attributes"`

	// AggregationTemporality is "cumulative" (default) or "delta".
	AggregationTemporality string `mapstructure:"aggregation_temporality"`

	// MetricsFlushInterval is how often the aggregated metrics are sent on.
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`

	// AggregationCardinalityLimit caps the number of series held. Spans
	// that would create a series beyond it are aggregated into one overflow
	// series per resource carrying only otel.metric.overflow=true.
	AggregationCardinalityLimit int `mapstructure:"aggregation_cardinality_limit"`

	// SeriesExpiration drops cumulative series that received no span for
	// this long (0: never). Delta state is cleared at every flush.
	SeriesExpiration time.Duration `mapstructure:"series_expiration"`

	// GoldenSignals enables the llm.* golden-signal metrics.
	GoldenSignals bool `mapstructure:"golden_signals"`

	// ServerMetrics enables gen_ai.server.* metrics from SERVER-kind spans.
	ServerMetrics bool `mapstructure:"server_metrics"`

	// SLO are the latency objectives goodput is measured against.
	SLO SLOConfig `mapstructure:"slo"`

	// Evaluation configures the evaluation-score share.
	Evaluation EvaluationConfig `mapstructure:"evaluation"`

	// Exemplars attaches trace/span ids of the slowest requests to the
	// duration and time-to-first-token histograms.
	Exemplars ExemplarsConfig `mapstructure:"exemplars"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// HistogramConfig selects the histogram representation.
type HistogramConfig struct {
	// Type is "explicit" (default; bucket boundaries the conventions advise)
	// or "exponential" (base-2 exponential histograms).
	Type string `mapstructure:"type"`
	// MaxSize is the maximum number of buckets of an exponential histogram.
	MaxSize int32 `mapstructure:"max_size"`
}

// Dimension is an extra span attribute used as a metric attribute.
type Dimension struct {
	Name string `mapstructure:"name"`
	// Default is used when the span lacks the attribute; without a default
	// the attribute is left off the series.
	Default *string `mapstructure:"default"`
}

// SLOConfig holds per-request latency objectives. A zero value disables the
// objective. A request counts toward goodput when it succeeded, returned at
// least one output token and met every enabled objective.
type SLOConfig struct {
	// TTFT: time to first token/chunk. Non-streaming requests, which deliver
	// their first token with the whole response, are judged by their duration.
	TTFT time.Duration `mapstructure:"ttft"`
	// TPOT: time per output token after the first one (streaming requests
	// with more than one output token).
	TPOT time.Duration `mapstructure:"tpot"`
	// E2E: the request duration.
	E2E time.Duration `mapstructure:"e2e"`
}

func (s SLOConfig) enabled() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// EvaluationConfig sets the score threshold under which an evaluated
// response counts as "below threshold" (for example a hallucination or
// groundedness score).
type EvaluationConfig struct {
	// ScoreThreshold applies to evaluations without their own threshold.
	ScoreThreshold float64 `mapstructure:"score_threshold"`
	// Thresholds by gen_ai.evaluation.name.
	Thresholds map[string]float64 `mapstructure:"thresholds"`
	// MaxNames caps distinct evaluation names per series; further names are
	// recorded as "_OTHER".
	MaxNames int `mapstructure:"max_names"`
}

// ExemplarsConfig controls exemplars on the latency histograms.
type ExemplarsConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// MaxPerDataPoint is how many exemplars a data point keeps per flush
	// interval: the slowest requests seen in it.
	MaxPerDataPoint int `mapstructure:"max_per_data_point"`
}

// builtinDimensions are the span attributes every series carries.
var builtinDimensions = []string{
	genai.AttrOperationName,
	genai.AttrProviderName,
	genai.AttrRequestModel,
	genai.AttrResponseModel,
	genai.AttrServerAddress,
	genai.AttrServerPort,
	genai.AttrErrorType,
}

// Validate checks the configuration; errors name the field and the allowed
// values, every error in the order of the fields.
func (c *Config) Validate() error {
	var errs []error
	if _, err := genai.ParseTarget(c.Target); err != nil {
		errs = append(errs, fmt.Errorf("target: %w", err))
	}
	errs = append(errs, c.validateAggregation()...)
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"slo.ttft", c.SLO.TTFT}, {"slo.tpot", c.SLO.TPOT}, {"slo.e2e", c.SLO.E2E}} {
		if d.d < 0 {
			errs = append(errs, fmt.Errorf("%s: must be 0 (disabled) or a positive duration, got %v", d.name, d.d))
		}
	}
	errs = append(errs, c.validateDimensions()...)
	for i, a := range c.ResourceAttributes {
		if a == "" {
			errs = append(errs, fmt.Errorf("resource_attributes[%d]: must be a non-empty attribute name", i))
		}
	}
	if c.Exemplars.Enabled && (c.Exemplars.MaxPerDataPoint < 1 || c.Exemplars.MaxPerDataPoint > 100) {
		errs = append(errs, fmt.Errorf("exemplars.max_per_data_point: %d is out of range; allowed values: 1 to 100", c.Exemplars.MaxPerDataPoint))
	}
	errs = append(errs, c.Evaluation.validate()...)
	return errors.Join(errs...)
}

// validateAggregation checks how series are kept: the histogram, the
// temporality, the flush interval, the cardinality bound and expiry.
func (c *Config) validateAggregation() []error {
	var errs []error
	switch c.Histogram.Type {
	case histogramExplicit:
	case histogramExponential:
		if c.Histogram.MaxSize < 2 || c.Histogram.MaxSize > 16384 {
			errs = append(errs, fmt.Errorf("histogram.max_size: %d is out of range; allowed values: 2 to 16384", c.Histogram.MaxSize))
		}
	default:
		errs = append(errs, fmt.Errorf("histogram.type: unknown value %q; allowed values: %q, %q", c.Histogram.Type, histogramExplicit, histogramExponential))
	}
	switch c.AggregationTemporality {
	case temporalityCumulative, temporalityDelta:
	default:
		errs = append(errs, fmt.Errorf("aggregation_temporality: unknown value %q; allowed values: %q, %q", c.AggregationTemporality, temporalityCumulative, temporalityDelta))
	}
	if c.MetricsFlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("metrics_flush_interval: must be a positive duration, got %v", c.MetricsFlushInterval))
	}
	if c.AggregationCardinalityLimit <= 0 {
		errs = append(errs, fmt.Errorf("aggregation_cardinality_limit: must be a positive number of series, got %d (state must stay bounded)", c.AggregationCardinalityLimit))
	}
	if c.SeriesExpiration < 0 {
		errs = append(errs, fmt.Errorf("series_expiration: must be 0 (never) or a positive duration, got %v", c.SeriesExpiration))
	}
	return errs
}

// validate checks evaluation: the name bound and finite thresholds, in
// sorted name order.
func (e *EvaluationConfig) validate() []error {
	var errs []error
	if e.MaxNames <= 0 {
		errs = append(errs, fmt.Errorf("evaluation.max_names: must be a positive number, got %d", e.MaxNames))
	}
	if math.IsNaN(e.ScoreThreshold) || math.IsInf(e.ScoreThreshold, 0) {
		errs = append(errs, errors.New("evaluation.score_threshold: must be a finite number"))
	}
	for _, name := range slices.Sorted(maps.Keys(e.Thresholds)) {
		if v := e.Thresholds[name]; math.IsNaN(v) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("evaluation.thresholds[%s]: must be a finite number", name))
		}
	}
	return errs
}

func (c *Config) validateDimensions() []error {
	var errs []error
	seen := make(map[string]bool, len(c.Dimensions)+len(builtinDimensions))
	for _, b := range builtinDimensions {
		seen[b] = true
	}
	reserved := map[string]bool{
		genai.AttrMetricOverflow: true, genai.AttrTokenType: true, genai.AttrTokenModality: true,
		attrOutcome: true, attrSLO: true, genai.AttrEvaluationName: true, attrBelowThreshold: true,
	}
	for i, d := range c.Dimensions {
		switch {
		case d.Name == "":
			errs = append(errs, fmt.Errorf("dimensions[%d].name: must be a non-empty span attribute name", i))
		case reserved[d.Name]:
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is set by the connector itself and cannot be a dimension", i, d.Name))
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is already a dimension (built-in dimensions: %v)", i, d.Name, builtinDimensions))
		}
		seen[d.Name] = true
	}
	return errs
}

func (c *Config) temporality() pmetric.AggregationTemporality {
	if c.AggregationTemporality == temporalityDelta {
		return pmetric.AggregationTemporalityDelta
	}
	return pmetric.AggregationTemporalityCumulative
}
