package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/input/file"
	"go.opentelemetry.io/collector/component"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
)

// Config is the inference_log receiver's configuration. The file-tailing
// settings (include, exclude, start_at, multiline, encoding, poll_interval,
// fingerprint_size, max_log_size, include_file_* ...) are stanza's file
// input settings, squashed in as the filelog receiver does.
type Config struct {
	InputConfig file.Config `mapstructure:",squash"`

	// Preset selects the parser for the server that writes the files: one of
	// vllm, tgi, sglang, ollama, llamacpp, or none (user operators only).
	Preset string `mapstructure:"preset"`
	// Timezone is the IANA zone of timestamps the server writes without one
	// (vLLM, SGLang, Ollama's GIN lines). Default "Local".
	Timezone string `mapstructure:"timezone"`
	// Unwrap peels what log collection wraps around a server's lines before
	// the preset parses them: kubectl/docker timestamps, docker compose
	// service prefixes, journald/syslog headers and repeat lines,
	// torch.distributed rank prefixes and ANSI colour codes (as escapes or
	// as literal text). What they said is kept as attributes, the line as
	// read in log.record.original. Default true; presets only.
	Unwrap bool `mapstructure:"unwrap"`
	// Operators are stanza operators appended after the preset's, as in the
	// filelog receiver.
	Operators []operator.Config `mapstructure:"operators"`
	// StorageID names a storage extension (e.g. file_storage) that keeps the
	// read offsets, so a restart neither loses nor repeats lines.
	StorageID *component.ID `mapstructure:"storage"`
	// Metrics configures the metrics derived from stats lines; they are
	// produced when the receiver is part of a metrics pipeline.
	Metrics MetricsConfig `mapstructure:"metrics"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// MetricsConfig configures the metrics derived from stats lines.
type MetricsConfig struct {
	// Namespace prefixes every metric name ("<namespace>.vllm.num_requests_running").
	// Empty leaves the server's own names.
	Namespace string `mapstructure:"namespace"`
}

var namespacePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)

func allowedPresets() []string { return append(slices.Clone(presetNames), presetNone) }

// Validate checks the configuration and names the offending field.
func (c *Config) Validate() error {
	var errs []error
	if !slices.Contains(allowedPresets(), c.Preset) {
		errs = append(errs, fmt.Errorf("preset: %q is not one of %s", c.Preset, strings.Join(allowedPresets(), ", ")))
	}
	if len(c.InputConfig.Include) == 0 {
		errs = append(errs, errors.New("include: at least one file glob is required"))
	}
	if c.InputConfig.StartAt != "beginning" && c.InputConfig.StartAt != "end" {
		errs = append(errs, fmt.Errorf("start_at: %q is not one of beginning, end", c.InputConfig.StartAt))
	}
	if _, err := time.LoadLocation(c.Timezone); err != nil {
		errs = append(errs, fmt.Errorf("timezone: %q is not an IANA time zone name (e.g. UTC, Local, Europe/Berlin): %w", c.Timezone, err))
	}
	if c.Metrics.Namespace != "" && !namespacePattern.MatchString(c.Metrics.Namespace) {
		errs = append(errs, fmt.Errorf("metrics.namespace: %q must be lower-case dot-separated words ([a-z][a-z0-9_]*), or empty", c.Metrics.Namespace))
	}
	// Operators are built once here, with silent telemetry, so their own
	// checks (regex syntax, expressions, field names) fail at validation.
	set := component.TelemetrySettings{
		Logger:         zap.NewNop(),
		MeterProvider:  metricnoop.NewMeterProvider(),
		TracerProvider: tracenoop.NewTracerProvider(),
	}
	errs = append(errs, validateOperators(c.Operators, set)...)
	if len(errs) == 0 {
		// The input operator checks globs, multiline and encoding.
		if _, err := c.InputConfig.Build(set); err != nil {
			errs = append(errs, fmt.Errorf("file input: %w", err))
		}
	}
	return errors.Join(errs...)
}

// validateOperators builds each of the user's operators, so that their own
// checks run.
func validateOperators(ops []operator.Config, set component.TelemetrySettings) []error {
	var errs []error
	for i, op := range ops {
		if op.Builder == nil {
			errs = append(errs, fmt.Errorf("operators[%d]: missing operator type", i))
			continue
		}
		if _, err := op.Build(set); err != nil {
			errs = append(errs, fmt.Errorf("operators[%d] (%s %q): %w", i, op.Type(), op.ID(), err))
		}
	}
	return errs
}
