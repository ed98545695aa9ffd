package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"go.opentelemetry.io/collector/component"
)

// Targets the processor can write.
const (
	TargetV141   = string(genai.TargetV1_41)
	TargetLatest = string(genai.TargetLatest)
)

// Content policy actions.
const (
	ActionKeep     = "keep"
	ActionTruncate = "truncate"
	ActionRedact   = "redact"
	ActionHash     = "hash"
	ActionDrop     = "drop"
)

var allowedActions = []string{ActionKeep, ActionTruncate, ActionRedact, ActionHash, ActionDrop}

// Config is the configuration of the llm_semconv processor.
type Config struct {
	// Target is the GenAI semantic-convention version written: "v1.41" (the
	// last frozen release) or "latest" (semantic-conventions-genai main).
	Target string `mapstructure:"target"`
	// Dialects restricts the source dialects that are mapped. Empty means all.
	Dialects []string `mapstructure:"dialects"`
	// RemoveOriginals deletes foreign attributes once they are mapped.
	RemoveOriginals bool `mapstructure:"remove_originals"`
	// Overwrite replaces official attributes that are already present on the
	// item with the mapped value. When false the existing value wins and the
	// foreign attribute is kept and listed as a conflict.
	Overwrite bool `mapstructure:"overwrite"`
	// Annotate records the detected dialect in otelcol_llm.semconv.dialect,
	// the foreign attributes that could not be mapped (and stay on the item)
	// in otelcol_llm.semconv.unmapped, and those kept because they disagree
	// with an official value in otelcol_llm.semconv.conflicts.
	Annotate bool `mapstructure:"annotate"`
	// Span controls the span name and kind fix for inference spans detected
	// in a foreign dialect.
	Span SpanConfig `mapstructure:"span"`
	// Derive controls derived attributes (timing, cost).
	Derive DeriveConfig `mapstructure:"derive"`
	// Content is the content policy per group.
	Content ContentConfig `mapstructure:"content"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// SpanConfig controls the span name and kind fix.
type SpanConfig struct {
	// Rename sets the span name to "{gen_ai.operation.name} {gen_ai.request.model}".
	Rename bool `mapstructure:"rename"`
	// SetKind sets the span kind to CLIENT.
	SetKind bool `mapstructure:"set_kind"`
}

// DeriveConfig controls derived attributes.
type DeriveConfig struct {
	// Timing derives time to first chunk from first-chunk events or foreign
	// timestamps, time per output token and output tokens per second.
	Timing bool `mapstructure:"timing"`
	// FirstChunkEvents are span event names that mark the first streamed chunk.
	FirstChunkEvents []string `mapstructure:"first_chunk_events"`
	// Prices is the price table used to compute cost. Empty disables cost.
	Prices []PriceConfig `mapstructure:"prices"`
}

// PriceConfig is the price of one model, in currency units per million tokens.
type PriceConfig struct {
	// Model is an exact model name, or a prefix followed by "*".
	Model string `mapstructure:"model"`
	// Provider restricts the entry to one gen_ai.provider.name; empty matches any.
	Provider string `mapstructure:"provider"`
	// Input is the price per million input tokens that are not cache reads.
	Input float64 `mapstructure:"input"`
	// Output is the price per million output tokens.
	Output float64 `mapstructure:"output"`
	// CachedInput is the price per million cache-read input tokens; when zero
	// the input price applies.
	CachedInput float64 `mapstructure:"cached_input"`
}

// ContentConfig is the content policy.
type ContentConfig struct {
	InputMessages      GroupPolicy `mapstructure:"input_messages"`
	OutputMessages     GroupPolicy `mapstructure:"output_messages"`
	SystemInstructions GroupPolicy `mapstructure:"system_instructions"`
	ToolContent        GroupPolicy `mapstructure:"tool_content"`
	// Patterns are extra redaction patterns, applied with the built-in ones
	// listed in BuiltinPatterns by groups whose action is "redact".
	Patterns []PatternConfig `mapstructure:"patterns"`
	// BuiltinPatterns selects the built-in patterns: email, api_key, card_number.
	BuiltinPatterns []string `mapstructure:"builtin_patterns"`
}

// GroupPolicy is the policy of one content group.
type GroupPolicy struct {
	// Action is keep, truncate, redact, hash or drop.
	Action string `mapstructure:"action"`
	// MaxBytes bounds the attribute size. It applies with every action but
	// drop and hash; with "truncate" it is required.
	MaxBytes int `mapstructure:"max_bytes"`
}

// PatternConfig is a named redaction pattern.
type PatternConfig struct {
	Name  string `mapstructure:"name"`
	Regex string `mapstructure:"regex"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration and names the offending field; it
// reports every error, section by section.
func (c *Config) Validate() error {
	var errs []error
	if c.Target != TargetV141 && c.Target != TargetLatest {
		errs = append(errs, fmt.Errorf("target: %q is not supported; allowed values: %q, %q", c.Target, TargetV141, TargetLatest))
	}
	known := dialectNames()
	for i, d := range c.Dialects {
		if !contains(known, d) {
			errs = append(errs, fmt.Errorf("dialects[%d]: unknown dialect %q; allowed values: %s", i, d, strings.Join(known, ", ")))
		}
	}
	errs = append(errs, c.Derive.validate()...)
	errs = append(errs, c.Content.validate()...)
	return errors.Join(errs...)
}

// validate checks derive: first-chunk event names and price entries.
func (d *DeriveConfig) validate() []error {
	var errs []error
	for i, ev := range d.FirstChunkEvents {
		if ev == "" {
			errs = append(errs, fmt.Errorf("derive.first_chunk_events[%d]: must not be empty", i))
		}
	}
	for i, p := range d.Prices {
		field := fmt.Sprintf("derive.prices[%d]", i)
		if strings.TrimSuffix(p.Model, "*") == "" {
			errs = append(errs, fmt.Errorf("%s.model: must name a model or a prefix followed by \"*\"", field))
		}
		if strings.Contains(strings.TrimSuffix(p.Model, "*"), "*") {
			errs = append(errs, fmt.Errorf("%s.model: %q: \"*\" is only allowed at the end", field, p.Model))
		}
		if p.Input < 0 || p.Output < 0 || p.CachedInput < 0 {
			errs = append(errs, fmt.Errorf("%s: input, output and cached_input must be >= 0", field))
		}
	}
	return errs
}

// validate checks content: each group's policy, the built-in pattern names
// and the custom patterns' regular expressions.
func (cc *ContentConfig) validate() []error {
	var errs []error
	groups := []struct {
		name string
		p    GroupPolicy
	}{
		{"content.input_messages", cc.InputMessages},
		{"content.output_messages", cc.OutputMessages},
		{"content.system_instructions", cc.SystemInstructions},
		{"content.tool_content", cc.ToolContent},
	}
	for _, g := range groups {
		errs = append(errs, g.p.validate(g.name)...)
	}
	builtins := builtinPatternNames()
	for i, b := range cc.BuiltinPatterns {
		if !contains(builtins, b) {
			errs = append(errs, fmt.Errorf("content.builtin_patterns[%d]: unknown pattern %q; allowed values: %s", i, b, strings.Join(builtins, ", ")))
		}
	}
	for i, p := range cc.Patterns {
		field := fmt.Sprintf("content.patterns[%d]", i)
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: must not be empty", field))
		}
		if p.Regex == "" {
			errs = append(errs, fmt.Errorf("%s.regex: must not be empty", field))
		} else if _, err := regexp.Compile(p.Regex); err != nil {
			errs = append(errs, fmt.Errorf("%s.regex: %w", field, err))
		}
	}
	return errs
}

// validate checks one content group's policy, named name.
func (p GroupPolicy) validate(name string) []error {
	var errs []error
	if !contains(allowedActions, p.Action) {
		errs = append(errs, fmt.Errorf("%s.action: %q is not supported; allowed values: %s", name, p.Action, strings.Join(allowedActions, ", ")))
	}
	if p.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("%s.max_bytes: must be >= 0, got %d", name, p.MaxBytes))
	}
	if p.Action == ActionTruncate && p.MaxBytes < minTruncateBytes {
		errs = append(errs, fmt.Errorf("%s.max_bytes: must be at least %d when action is %q, got %d", name, minTruncateBytes, ActionTruncate, p.MaxBytes))
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func builtinPatternNames() []string {
	names := make([]string, 0, len(builtinPatterns))
	for n := range builtinPatterns {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
