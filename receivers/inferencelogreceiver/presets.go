package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
)

// The presets are data: one YAML file per inference server, holding the stanza
// operators that parse its lines and the table of captured fields (their final
// attribute names, types, and the metrics derived from them).
//
//go:embed presets/*.yaml
var presetFiles embed.FS

// presetNone runs only the user's operators, like the filelog receiver.
const presetNone = "none"

// presetNames lists the presets in the order the documentation uses.
var presetNames = []string{"vllm", "tgi", "sglang", "ollama", "llamacpp"}

// Attribute names the receiver itself writes.
const (
	attrParseError = "inference_log.parse_error"
	attrServer     = "inference.server"
	attrFileName   = "log.file.name"
	attrEventName  = "event.name"
)

// fieldsOperatorID is the operator every preset branch outputs to; it renames
// and types the captured fields before any user operator runs.
const fieldsOperatorID = "inference_log_fields"

type presetSpec struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Continuation matches the lines that continue the record before them
	// (traceback frames, panics, indented dumps) once the wrappers are
	// peeled off; they are folded into that record. Empty: no folding.
	Continuation string `yaml:"continuation"`
	// RecordStart, for servers whose every record begins the same way
	// (TGI's timestamp or JSON object), matches the first line of a record
	// instead: every other line continues the record before it, joined
	// with a newline. At most one of Continuation and RecordStart.
	RecordStart string           `yaml:"record_start"`
	Operators   []map[string]any `yaml:"operators"`
	Fields      []fieldSpec      `yaml:"fields"`
}

// fieldSpec maps one capture of the preset's parsers to its final attribute.
type fieldSpec struct {
	Capture   string `yaml:"capture"`
	Attribute string `yaml:"attribute"`
	// Type is string (default), lower (lower-cased string), int, double, or
	// duration (a Go/Rust duration string converted to seconds).
	Type string `yaml:"type"`
	// Divisor converts units, e.g. 100 turns a logged percentage into the
	// ratio the server exposes on /metrics.
	Divisor float64 `yaml:"divisor"`
	Drop    bool    `yaml:"drop"`
	// MetricAttribute copies the attribute onto the metric points derived
	// from the same record (e.g. the engine index).
	MetricAttribute bool        `yaml:"metric_attribute"`
	Metric          *metricSpec `yaml:"metric"`
}

type metricSpec struct {
	Name        string `yaml:"name"`
	Unit        string `yaml:"unit"`
	Description string `yaml:"description"`
	// Monotonic makes the metric a cumulative monotonic sum (the server logs a
	// running total); otherwise it is a gauge.
	Monotonic bool `yaml:"monotonic"`
	// Buckets make the metric an explicit-bucket histogram of the values of
	// one read (delta temporality), for per-request fields (TGI's request
	// timings, Ollama's GIN latencies) where a gauge would keep only the last.
	Buckets []float64 `yaml:"buckets"`
}

var fieldTypes = []string{"string", "lower", "int", "double", "duration"}

// preset is a loaded preset: its operators ready for the stanza pipeline and
// its field table.
type preset struct {
	name string
	// location is the time zone of timestamps without one.
	location string
	fold     *operator.Config // folds continuation lines; nil for none
	// continuation is the preset's continuation pattern, recordStart its
	// record-start pattern (nil for none).
	continuation, recordStart *regexp.Regexp
	operators                 []operator.Config
	fields                    map[string]*fieldSpec
	metrics                   []*fieldSpec
	// metricAttrs are the fields copied onto metric points.
	metricAttrs []*fieldSpec
}

type presetParams struct {
	Location string
}

// loadPreset reads the named preset, fills in its parameters and decodes its
// operators through stanza's own registry, exactly as user operators are.
func loadPreset(name string, params presetParams) (*preset, error) {
	spec, err := readPresetSpec(name, params)
	if err != nil {
		return nil, fmt.Errorf("preset %q: %w", name, err)
	}
	if spec.Name != name {
		return nil, fmt.Errorf("preset file %q declares name %q", name, spec.Name)
	}
	p := &preset{name: name, location: params.Location, fields: map[string]*fieldSpec{}}
	var ops struct {
		Operators []operator.Config `mapstructure:"operators"`
	}
	conf := confmap.NewFromStringMap(map[string]any{"operators": toAnySlice(spec.Operators)})
	if err = conf.Unmarshal(&ops); err != nil {
		return nil, fmt.Errorf("preset %q operators: %w", name, err)
	}
	p.operators = ops.Operators
	if err = p.setFold(spec); err != nil {
		return nil, fmt.Errorf("preset %q: %w", name, err)
	}
	for i := range spec.Fields {
		if err = p.addField(&spec.Fields[i]); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// readPresetSpec reads the named preset's file with its parameters filled
// in.
func readPresetSpec(name string, params presetParams) (presetSpec, error) {
	var spec presetSpec
	raw, err := presetFiles.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		return spec, err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return spec, err
	}
	var buf bytes.Buffer
	if err = tmpl.Execute(&buf, params); err != nil {
		return spec, err
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	err = dec.Decode(&spec)
	return spec, err
}

// addField checks one entry of the preset's field table and adds it.
func (p *preset) addField(f *fieldSpec) error {
	if f.Type == "" {
		f.Type = "string"
	}
	if !slices.Contains(fieldTypes, f.Type) {
		return fmt.Errorf("preset %q field %q: type %q is not one of %s", p.name, f.Capture, f.Type, strings.Join(fieldTypes, ", "))
	}
	if !f.Drop && f.Attribute == "" {
		return fmt.Errorf("preset %q field %q: attribute is empty", p.name, f.Capture)
	}
	if _, dup := p.fields[f.Capture]; dup {
		return fmt.Errorf("preset %q: capture %q listed twice", p.name, f.Capture)
	}
	p.fields[f.Capture] = f
	if f.Metric != nil && len(f.Metric.Buckets) > 0 && f.Metric.Monotonic {
		return fmt.Errorf("preset %q field %q: a metric is a histogram (buckets) or monotonic, not both", p.name, f.Capture)
	}
	if f.Metric != nil && !slices.IsSorted(f.Metric.Buckets) {
		return fmt.Errorf("preset %q field %q: metric buckets must increase", p.name, f.Capture)
	}
	if f.Metric != nil {
		p.metrics = append(p.metrics, f)
	}
	if f.MetricAttribute {
		p.metricAttrs = append(p.metricAttrs, f)
	}
	return nil
}

// setFold builds the fold operator from the preset's continuation or
// record-start pattern.
func (p *preset) setFold(spec presetSpec) error {
	var err error
	switch {
	case spec.Continuation != "" && spec.RecordStart != "":
		return fmt.Errorf("continuation and record_start: set one of them, not both")
	case spec.Continuation != "":
		p.continuation, err = compileFoldPattern("continuation", spec.Continuation)
	case spec.RecordStart != "":
		p.recordStart, err = compileFoldPattern("record_start", spec.RecordStart)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	fold := newFoldConfig(p.startsRecord)
	p.fold = &fold
	return nil
}

// startsRecord reports whether line (wrappers peeled) starts a record: a
// line in the preset's own header format does (checked first, in Go, where
// the preset has such a check), else whatever the pattern says.
func (p *preset) startsRecord(line string) bool {
	if start := recordHeaders[p.name]; start != nil && start(line) {
		return true
	}
	return !p.continues(line)
}

// recordHeaders are the presets' checks of their own record header, by
// preset name: a line that passes one starts a record.
var recordHeaders = map[string]func(string) bool{
	"vllm": func(line string) bool {
		_, ok := parseVLLMHeader(line)
		return ok
	},
}

// continues reports whether the preset folds line (wrappers peeled) into
// the record before it.
func (p *preset) continues(line string) bool {
	switch {
	case p.recordStart != nil:
		return !p.recordStart.MatchString(line)
	case p.continuation != nil:
		return p.continuation.MatchString(line)
	}
	return false
}

func toAnySlice(in []map[string]any) []any {
	out := make([]any, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}
