package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Output formats.
const (
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
	// FormatCSV is the per-request table requests.csv (requests_csv.go),
	// appended while the run goes on rather than rendered from the report.
	FormatCSV = "csv"
)

var allFormats = []string{FormatJSON, FormatMarkdown, FormatHTML, FormatCSV}

// Verdicts, from best to worst. NO_DATA is given to an SLO whose quantity
// could not be measured (no requests, no span_guard counters).
const (
	VerdictPass   = "PASS"
	VerdictWarn   = "WARN"
	VerdictFail   = "FAIL"
	VerdictNoData = "NO_DATA"
)

// SLO quantities.
const (
	QuantityTTFT          = "ttft"
	QuantityITL           = "itl"
	QuantityTPOT          = "tpot"
	QuantityE2E           = "e2e"
	QuantityErrorRate     = "error_rate"
	QuantityCancelledRate = "cancelled_rate"
	QuantitySpanLoss      = "span_loss"
	QuantityGoodputRatio  = "goodput_ratio"
)

var latencyQuantities = []string{QuantityTTFT, QuantityITL, QuantityTPOT, QuantityE2E}

var allQuantities = []string{QuantityTTFT, QuantityITL, QuantityTPOT, QuantityE2E, QuantityErrorRate,
	QuantityCancelledRate, QuantitySpanLoss, QuantityGoodputRatio}

// Config is the configuration of the load_report exporter.
type Config struct {
	// Directory receives report.json, report.md and report.html.
	Directory string `mapstructure:"directory"`
	// Interval between report writes during the run; 0 writes only at shutdown.
	Interval time.Duration `mapstructure:"interval"`
	// Formats to write: json, markdown, html, csv (requests.csv, one row per request).
	Formats []string `mapstructure:"formats"`
	// Title shown at the top of the report.
	Title string `mapstructure:"title"`
	// PrintSummary prints the final verdict, the SLO table and where the
	// report is to standard output when the collector stops.
	PrintSummary bool `mapstructure:"print_summary"`

	// Dimensions: the attributes that name a row's target, model and scenario.
	Dimensions DimensionsConfig `mapstructure:"dimensions"`
	// CancelledErrorTypes are error.type values that mean the client
	// cancelled the request; they are shown on their own and left out of
	// error_rate.
	CancelledErrorTypes []string `mapstructure:"cancelled_error_types"`
	// TargetRate names where the offered (target) request rate is read from.
	TargetRate TargetRateConfig `mapstructure:"target_rate"`

	// Goodput: a successful request counts towards goodput when it meets
	// every objective that is set (0 disables one).
	Goodput GoodputConfig `mapstructure:"goodput"`
	// SLOs evaluated on the whole run; each gives PASS, WARN or FAIL.
	SLOs []SLOConfig `mapstructure:"slos"`
	// Exit makes the verdict gate the collector's exit status.
	Exit ExitConfig `mapstructure:"exit"`
	// Limits bound the exporter's memory for long runs.
	Limits LimitsConfig `mapstructure:"limits"`
	// Shards: checks of the shards of a distributed run (shards.go).
	Shards ShardsConfig `mapstructure:"shards"`
	// Baseline compares the run with an earlier report.json (baseline.go).
	Baseline BaselineConfig `mapstructure:"baseline"`
	// Join matches client spans with the server's spans of the same
	// request (join.go).
	Join JoinConfig `mapstructure:"join"`
	// Saturation sets when the report warns that the target ran out of
	// capacity (saturation.go).
	Saturation SaturationConfig `mapstructure:"saturation"`
}

// BaselineConfig names an earlier report to compare with.
type BaselineConfig struct {
	// Path is an earlier run's report.json; empty: no comparison.
	Path string `mapstructure:"path"`
	// Tolerance is the relative change that counts as a regression or an
	// improvement (at least twice the sketches' accuracy for percentiles).
	Tolerance float64 `mapstructure:"tolerance"`
	// OnRegression is fail, warn or none: the verdict a regression gives
	// the run (exit.on_verdict then decides the exit status).
	OnRegression string `mapstructure:"on_regression"`
}

var baselineOnRegression = []string{"fail", "warn", "none"}

func (b BaselineConfig) validate() []error {
	var errs []error
	if !(b.Tolerance > 0 && b.Tolerance <= 10) {
		errs = append(errs, fmt.Errorf("baseline.tolerance: must be above 0 and at most 10 (a relative change), got %v", b.Tolerance))
	}
	if !slices.Contains(baselineOnRegression, b.OnRegression) {
		errs = append(errs, fmt.Errorf("baseline.on_regression: unknown value %q; allowed values: %s", b.OnRegression, allowed(baselineOnRegression)))
	}
	return errs
}

// DimensionsConfig lists, for each report dimension, the attribute keys
// tried in order (span or data-point attributes first, then resource).
type DimensionsConfig struct {
	Target   []string `mapstructure:"target"`
	Model    []string `mapstructure:"model"`
	Scenario []string `mapstructure:"scenario"`
}

// TargetRateConfig names the offered request rate (requests per second) set
// by the load generator: a span attribute or a gauge metric.
type TargetRateConfig struct {
	Attributes []string `mapstructure:"attributes"`
	Metrics    []string `mapstructure:"metrics"`
}

// GoodputConfig holds the per-request objectives of goodput.
type GoodputConfig struct {
	TTFT time.Duration `mapstructure:"ttft"`
	TPOT time.Duration `mapstructure:"tpot"`
	E2E  time.Duration `mapstructure:"e2e"`
}

// SLOConfig is one objective. The measured value is compared with the
// thresholds: FAIL when it is above fail_above (or at or above
// fail_at_or_above); PASS when it is below pass_below (or every value not
// FAIL when pass_below is not set); WARN in between. For goodput_ratio, where
// higher is better, the comparisons are mirrored: FAIL below fail_below,
// PASS at or above pass_at_or_above.
type SLOConfig struct {
	Name string `mapstructure:"name"`
	// Quantity is one of ttft, itl, tpot, e2e (seconds, at Percentile),
	// error_rate, cancelled_rate, span_loss, goodput_ratio (ratios 0..1).
	Quantity string `mapstructure:"quantity"`
	// Percentile for latency quantities: 50, 90, 95, 99 or 100 (max).
	Percentile float64 `mapstructure:"percentile"`

	PassBelow     *float64 `mapstructure:"pass_below"`
	FailAbove     *float64 `mapstructure:"fail_above"`
	FailAtOrAbove *float64 `mapstructure:"fail_at_or_above"`

	PassAtOrAbove *float64 `mapstructure:"pass_at_or_above"`
	FailBelow     *float64 `mapstructure:"fail_below"`
}

// ExitConfig ties the collector's lifetime and exit status to the verdict.
type ExitConfig struct {
	// OnVerdict: none, warn or fail. When the final verdict is at least this
	// bad, the exporter's shutdown returns an error and the collector exits
	// with status 1.
	OnVerdict string `mapstructure:"on_verdict"`
	// StopEarly stops the collector as soon as an interval report reaches
	// on_verdict (after min_requests requests).
	StopEarly bool `mapstructure:"stop_early"`
	// MinRequests before stop_early may act.
	MinRequests int64 `mapstructure:"min_requests"`
	// StopAfter stops the collector this long after the first request seen
	// (0: never).
	StopAfter time.Duration `mapstructure:"stop_after"`
	// StopWhenIdle stops the collector when no request arrived for this long
	// after the first one (0: never).
	StopWhenIdle time.Duration `mapstructure:"stop_when_idle"`
	// NoData is the overall verdict when no SLO could be measured: fail or pass.
	NoData string `mapstructure:"no_data"`
}

// LimitsConfig bounds memory.
type LimitsConfig struct {
	// MaxGroups is the number of target/model/scenario rows; further
	// combinations are folded into one row with the values "_OTHER".
	MaxGroups int `mapstructure:"max_groups"`
	// MaxErrorTypes per row; further error.type values count as "_OTHER".
	MaxErrorTypes int `mapstructure:"max_error_types"`
	// RelativeAccuracy of the DDSketch quantiles (0 < a < 1).
	RelativeAccuracy float64 `mapstructure:"relative_accuracy"`
	// MaxSketchBins per sketch; beyond it the lowest bins collapse (the
	// accuracy guarantee then holds for the upper quantiles only).
	MaxSketchBins int `mapstructure:"max_sketch_bins"`
	// TimelineResolution is the width of one timeline point at the start of
	// the run; it doubles whenever the timeline holds more than
	// MaxTimelinePoints points.
	TimelineResolution time.Duration `mapstructure:"timeline_resolution"`
	MaxTimelinePoints  int           `mapstructure:"max_timeline_points"`
	// MaxSeries is the number of metric streams remembered (cumulative state).
	MaxSeries int `mapstructure:"max_series"`
}

func f64(v float64) *float64 { return &v }

// defaultSLOs is the common baseline for streaming chat: PASS when p95
// latency to the first token is under 2.1 s and the error rate under 0.3 %;
// FAIL when p95 is over 3.8 s, span loss over 12 % or errors reach 1 %.
func defaultSLOs() []SLOConfig {
	return []SLOConfig{
		{Name: "ttft_p95", Quantity: QuantityTTFT, Percentile: 95, PassBelow: f64(2.1), FailAbove: f64(3.8)},
		{Name: "error_rate", Quantity: QuantityErrorRate, PassBelow: f64(0.003), FailAtOrAbove: f64(0.01)},
		{Name: "span_loss", Quantity: QuantitySpanLoss, FailAbove: f64(0.12)},
	}
}

func allowed(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// Validate checks the configuration; every error names the field and the
// allowed values.
func (c *Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Directory) == "" {
		errs = append(errs, errors.New("directory: must be a non-empty path"))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval: %v is negative; use 0 to write only at shutdown, or a positive duration", c.Interval))
	}
	errs = append(errs, validateFormats(c.Formats)...)
	for name, keys := range map[string][]string{"target": c.Dimensions.Target, "model": c.Dimensions.Model, "scenario": c.Dimensions.Scenario} {
		for i, k := range keys {
			if strings.TrimSpace(k) == "" {
				errs = append(errs, fmt.Errorf("dimensions.%s[%d]: attribute key must be non-empty", name, i))
			}
		}
	}
	for name, d := range map[string]time.Duration{"goodput.ttft": c.Goodput.TTFT, "goodput.tpot": c.Goodput.TPOT, "goodput.e2e": c.Goodput.E2E} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s: %v is negative; use 0 to disable the objective", name, d))
		}
	}
	errs = append(errs, validateSLOs(c.SLOs)...)
	errs = append(errs, c.Exit.validate()...)
	errs = append(errs, c.Limits.validate()...)
	errs = append(errs, c.Shards.validate()...)
	errs = append(errs, c.Baseline.validate()...)
	errs = append(errs, c.Join.validate()...)
	errs = append(errs, c.Saturation.validate()...)
	return errors.Join(errs...)
}

// validateFormats checks the formats list: at least one, each known.
func validateFormats(formats []string) []error {
	var errs []error
	if len(formats) == 0 {
		errs = append(errs, fmt.Errorf("formats: at least one is needed; allowed values: %s", allowed(allFormats)))
	}
	for i, f := range formats {
		if !slices.Contains(allFormats, f) {
			errs = append(errs, fmt.Errorf("formats[%d]: unknown value %q; allowed values: %s", i, f, allowed(allFormats)))
		}
	}
	return errs
}

// validateSLOs checks each objective and that their names are unique.
func validateSLOs(slos []SLOConfig) []error {
	var errs []error
	names := map[string]bool{}
	for i := range slos {
		if err := slos[i].validate(); err != nil {
			errs = append(errs, fmt.Errorf("slos[%d]: %w", i, err))
		}
		if names[slos[i].Name] {
			errs = append(errs, fmt.Errorf("slos[%d].name: %q is used twice; names must be unique", i, slos[i].Name))
		}
		names[slos[i].Name] = true
	}
	return errs
}

func (s *SLOConfig) validate() error {
	var errs []error
	if strings.TrimSpace(s.Name) == "" {
		errs = append(errs, errors.New("name: must be non-empty"))
	}
	if !slices.Contains(allQuantities, s.Quantity) {
		errs = append(errs, fmt.Errorf("quantity: unknown value %q; allowed values: %s", s.Quantity, allowed(allQuantities)))
	}
	isLatency := slices.Contains(latencyQuantities, s.Quantity)
	switch {
	case isLatency && !slices.Contains([]float64{50, 90, 95, 99, 100}, s.Percentile):
		errs = append(errs, fmt.Errorf("percentile: %v is not reported; allowed values: 50, 90, 95, 99, 100 (max)", s.Percentile))
	case !isLatency && s.Percentile != 0:
		errs = append(errs, fmt.Errorf("percentile: only latency quantities (%s) take a percentile", allowed(latencyQuantities)))
	}
	errs = append(errs, s.validateThresholds()...)
	return errors.Join(errs...)
}

// validateThresholds checks an objective's thresholds: non-negative, on
// the side its quantity is better on, and in order.
func (s *SLOConfig) validateThresholds() []error {
	var errs []error
	for field, p := range map[string]*float64{"pass_below": s.PassBelow, "fail_above": s.FailAbove, "fail_at_or_above": s.FailAtOrAbove,
		"pass_at_or_above": s.PassAtOrAbove, "fail_below": s.FailBelow} {
		if p != nil && (math.IsNaN(*p) || *p < 0) {
			errs = append(errs, fmt.Errorf("%s: %v must be a non-negative number", field, *p))
		}
	}
	higherIsBetter := s.Quantity == QuantityGoodputRatio
	lowerSet := s.PassBelow != nil || s.FailAbove != nil || s.FailAtOrAbove != nil
	higherSet := s.PassAtOrAbove != nil || s.FailBelow != nil
	switch {
	case higherIsBetter && lowerSet:
		errs = append(errs, errors.New("goodput_ratio is better when higher: use pass_at_or_above and fail_below, not pass_below/fail_above/fail_at_or_above"))
	case !higherIsBetter && higherSet:
		errs = append(errs, fmt.Errorf("%s is better when lower: use pass_below, fail_above or fail_at_or_above, not pass_at_or_above/fail_below", s.Quantity))
	case !lowerSet && !higherSet:
		errs = append(errs, errors.New("no threshold set: give pass_below and/or fail_above or fail_at_or_above (pass_at_or_above/fail_below for goodput_ratio)"))
	}
	if s.FailAbove != nil && s.FailAtOrAbove != nil {
		errs = append(errs, errors.New("fail_above and fail_at_or_above: set only one"))
	}
	if fail := firstNonNil(s.FailAbove, s.FailAtOrAbove); fail != nil && s.PassBelow != nil && *s.PassBelow > *fail {
		errs = append(errs, fmt.Errorf("pass_below: %v is above the fail threshold %v", *s.PassBelow, *fail))
	}
	if s.FailBelow != nil && s.PassAtOrAbove != nil && *s.FailBelow > *s.PassAtOrAbove {
		errs = append(errs, fmt.Errorf("fail_below: %v is above pass_at_or_above %v", *s.FailBelow, *s.PassAtOrAbove))
	}
	return errs
}

func firstNonNil(ps ...*float64) *float64 {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

var exitVerdicts = []string{"none", "warn", "fail"}

func (e *ExitConfig) validate() []error {
	var errs []error
	if !slices.Contains(exitVerdicts, e.OnVerdict) {
		errs = append(errs, fmt.Errorf("exit.on_verdict: unknown value %q; allowed values: %s", e.OnVerdict, allowed(exitVerdicts)))
	}
	if e.StopEarly && e.OnVerdict == "none" {
		errs = append(errs, errors.New(`exit.stop_early: needs exit.on_verdict "warn" or "fail"`))
	}
	if e.MinRequests < 0 {
		errs = append(errs, fmt.Errorf("exit.min_requests: %d is negative", e.MinRequests))
	}
	if e.StopAfter < 0 {
		errs = append(errs, fmt.Errorf("exit.stop_after: %v is negative; use 0 to never stop", e.StopAfter))
	}
	if e.StopWhenIdle < 0 {
		errs = append(errs, fmt.Errorf("exit.stop_when_idle: %v is negative; use 0 to never stop", e.StopWhenIdle))
	}
	if !slices.Contains([]string{"fail", "pass"}, e.NoData) {
		errs = append(errs, fmt.Errorf("exit.no_data: unknown value %q; allowed values: %s", e.NoData, allowed([]string{"fail", "pass"})))
	}
	return errs
}

func (l *LimitsConfig) validate() []error {
	var errs []error
	if l.MaxGroups < 1 {
		errs = append(errs, fmt.Errorf("limits.max_groups: %d must be positive", l.MaxGroups))
	}
	if l.MaxErrorTypes < 1 {
		errs = append(errs, fmt.Errorf("limits.max_error_types: %d must be positive", l.MaxErrorTypes))
	}
	if !(l.RelativeAccuracy > 0 && l.RelativeAccuracy < 1) {
		errs = append(errs, fmt.Errorf("limits.relative_accuracy: %v must be between 0 and 1 (exclusive), e.g. 0.01", l.RelativeAccuracy))
	}
	if l.MaxSketchBins < 16 || l.MaxSketchBins > 65536 {
		errs = append(errs, fmt.Errorf("limits.max_sketch_bins: %d must be 16 to 65536", l.MaxSketchBins))
	}
	if l.TimelineResolution < time.Millisecond {
		errs = append(errs, fmt.Errorf("limits.timeline_resolution: %v must be at least 1ms", l.TimelineResolution))
	}
	if l.MaxTimelinePoints < 2 || l.MaxTimelinePoints > 100000 {
		errs = append(errs, fmt.Errorf("limits.max_timeline_points: %d must be 2 to 100000", l.MaxTimelinePoints))
	}
	if l.MaxSeries < 1 {
		errs = append(errs, fmt.Errorf("limits.max_series: %d must be positive", l.MaxSeries))
	}
	return errs
}
