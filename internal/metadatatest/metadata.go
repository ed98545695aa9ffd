package metadatatest // import "github.com/otelcol-llm/otelcol-llm/internal/metadatatest"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.yaml.in/yaml/v3"
)

// Class is a component's kind as metadata.yaml's status.class spells it.
type Class string

// The component classes.
const (
	Receiver  Class = "receiver"
	Processor Class = "processor"
	Exporter  Class = "exporter"
	Connector Class = "connector"
	Extension Class = "extension"
)

// Identity is what internal/metadata/status.go says about a component.
type Identity struct {
	Type  component.Type
	Class Class
	// Stability maps each signal, as metadata.yaml spells it (traces,
	// metrics, logs, profiles, traces_to_metrics, ..., extension), to its
	// level. Signals the component does not offer are left out.
	Stability map[string]component.StabilityLevel
}

// Metadata is a component's metadata.yaml, in the parts the checks read.
type Metadata struct {
	Type   string `yaml:"type"`
	Status struct {
		Class string `yaml:"class"`
		// Stability maps a level (alpha, beta, ...) to its signals.
		Stability     map[string][]string `yaml:"stability"`
		Distributions []string            `yaml:"distributions"`
	} `yaml:"status"`
	Telemetry struct {
		Metrics map[string]Metric `yaml:"metrics"`
	} `yaml:"telemetry"`
}

// Metric is one entry of telemetry.metrics, in the mdatagen schema: exactly
// one of Sum, Gauge and Histogram is set.
type Metric struct {
	Enabled               *bool      `yaml:"enabled"`
	Description           string     `yaml:"description"`
	ExtendedDocumentation string     `yaml:"extended_documentation"`
	Unit                  *string    `yaml:"unit"`
	Sum                   *Sum       `yaml:"sum"`
	Gauge                 *Gauge     `yaml:"gauge"`
	Histogram             *Histogram `yaml:"histogram"`
	Attributes            []string   `yaml:"attributes"`
	Optional              bool       `yaml:"optional"`
}

// Sum is a counter or up-down counter.
type Sum struct {
	Monotonic bool   `yaml:"monotonic"`
	ValueType string `yaml:"value_type"`
	Async     bool   `yaml:"async"`
}

// Gauge is a gauge, synchronous or observable.
type Gauge struct {
	ValueType string `yaml:"value_type"`
	Async     bool   `yaml:"async"`
}

// Histogram is a histogram; BucketBoundaries, when given, must be the
// explicit boundaries the code creates it with.
type Histogram struct {
	ValueType        string    `yaml:"value_type"`
	BucketBoundaries []float64 `yaml:"bucket_boundaries"`
}

// shape returns the metric's documented shape, or an error when it does
// not name exactly one of sum, gauge and histogram.
func (m Metric) shape() (shape, error) {
	var shapes []shape
	if m.Sum != nil {
		shapes = append(shapes, shape{"sum", m.Sum.ValueType, m.Sum.Monotonic, m.Sum.Async})
	}
	if m.Gauge != nil {
		shapes = append(shapes, shape{"gauge", m.Gauge.ValueType, false, m.Gauge.Async})
	}
	if m.Histogram != nil {
		shapes = append(shapes, shape{"histogram", m.Histogram.ValueType, false, false})
	}
	if len(shapes) != 1 {
		return shape{}, errors.New("needs exactly one of sum, gauge and histogram")
	}
	return shapes[0], nil
}

// Load reads dir/metadata.yaml. Metric entries are checked strictly: a key
// the schema does not know (a leftover "type: counter", a typo) is an error.
func Load(dir string) (*Metadata, error) {
	path := filepath.Join(dir, "metadata.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Telemetry struct {
			Metrics map[string]yaml.Node `yaml:"metrics"`
		} `yaml:"telemetry"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	md := &Metadata{}
	if err := yaml.Unmarshal(b, md); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var bad []keyError
	for name, node := range raw.Telemetry.Metrics {
		bad = append(bad, checkKeys(&node, name, "", metricKeys)...)
	}
	if len(bad) > 0 {
		sort.Slice(bad, func(i, j int) bool { return bad[i].line < bad[j].line })
		var errs []error
		for _, e := range bad {
			errs = append(errs, fmt.Errorf("%s:%d: telemetry.metrics.%s: %s", path, e.line, e.metric, e.msg))
		}
		return nil, fmt.Errorf("%w\n(metric entries use the mdatagen schema: description, unit, "+
			"sum: {monotonic, value_type, async} | gauge: {value_type, async} | histogram: {value_type, bucket_boundaries}, attributes)",
			errors.Join(errs...))
	}
	return md, nil
}

// metricKeys are the keys a telemetry.metrics entry may have, and those of
// its nested mappings.
var metricKeys = map[string]map[string]bool{
	"": {"enabled": true, "description": true, "extended_documentation": true, "unit": true,
		"sum": true, "gauge": true, "histogram": true, "attributes": true, "optional": true},
	"sum":       {"monotonic": true, "value_type": true, "async": true},
	"gauge":     {"value_type": true, "async": true},
	"histogram": {"value_type": true, "bucket_boundaries": true},
}

type keyError struct {
	line        int
	metric, msg string
}

// checkKeys reports the keys of the mapping n (metric's entry, or its
// nested mapping named path) that schema does not know.
func checkKeys(n *yaml.Node, metric, path string, schema map[string]map[string]bool) []keyError {
	if n.Kind != yaml.MappingNode {
		if path == "" {
			return []keyError{{n.Line, metric, "an entry must be a mapping"}}
		}
		return nil // decoding reports a wrong type
	}
	var bad []keyError
	known := schema[path]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			where := k.Value
			if path != "" {
				where = path + "." + k.Value
			}
			bad = append(bad, keyError{k.Line, metric, fmt.Sprintf("unknown key %q", where)})
			continue
		}
		if _, nested := schema[k.Value]; nested && path == "" {
			bad = append(bad, checkKeys(n.Content[i+1], metric, k.Value, schema)...)
		}
	}
	return bad
}

// MustLoad is Load for tests: it fails t when metadata.yaml cannot be read.
func MustLoad(t testing.TB, dir string) *Metadata {
	t.Helper()
	md, err := Load(dir)
	require.NoError(t, err)
	return md
}

// stability inverts status.stability into signal → level.
func (md *Metadata) stability() (map[string]component.StabilityLevel, []string) {
	out := map[string]component.StabilityLevel{}
	var problems []string
	for level, signals := range md.Status.Stability {
		var l component.StabilityLevel
		if err := l.UnmarshalText([]byte(level)); err != nil || l == component.StabilityLevelUndefined {
			problems = append(problems, fmt.Sprintf("status.stability: unknown level %q", level))
			continue
		}
		for _, s := range signals {
			if prev, ok := out[s]; ok {
				problems = append(problems, fmt.Sprintf("status.stability: signal %q listed under both %s and %s",
					s, levelName(prev), level))
			}
			out[s] = l
		}
	}
	return out, problems
}

func levelName(l component.StabilityLevel) string { return strings.ToLower(l.String()) }

// IdentityProblems compares metadata.yaml's type, class and stability with
// want; it returns one line per disagreement.
func (md *Metadata) IdentityProblems(want Identity) []string {
	var problems []string
	if md.Type != want.Type.String() {
		problems = append(problems, fmt.Sprintf("type: metadata.yaml says %q, internal/metadata says %q", md.Type, want.Type))
	}
	if md.Status.Class != string(want.Class) {
		problems = append(problems, fmt.Sprintf("status.class: metadata.yaml says %q, the component is a %s", md.Status.Class, want.Class))
	}
	got, p := md.stability()
	problems = append(problems, p...)
	problems = append(problems, stabilityProblems("metadata.yaml", got, "internal/metadata", want.Stability)...)
	return problems
}

func stabilityProblems(gotName string, got map[string]component.StabilityLevel, wantName string, want map[string]component.StabilityLevel) []string {
	var problems []string
	for _, s := range sortedKeys(want) {
		w := want[s]
		if w == component.StabilityLevelUndefined {
			problems = append(problems, fmt.Sprintf("stability of %q: %s gives no level", s, wantName))
			continue
		}
		g, ok := got[s]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("stability: %s lists no %q, %s says %s", gotName, s, wantName, levelName(w)))
		case g != w:
			problems = append(problems, fmt.Sprintf("stability of %q: %s says %s, %s says %s", s, gotName, levelName(g), wantName, levelName(w)))
		}
	}
	for _, s := range sortedKeys(got) {
		if _, ok := want[s]; !ok {
			problems = append(problems, fmt.Sprintf("stability: %s lists %q (%s), %s does not", gotName, s, levelName(got[s]), wantName))
		}
	}
	return problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckMetadata asserts that dir/metadata.yaml gives the type, class and
// stability levels of want, the values of the component's internal/metadata
// package.
func CheckMetadata(t testing.TB, dir string, want Identity) {
	t.Helper()
	md := MustLoad(t, dir)
	for _, p := range md.IdentityProblems(want) {
		t.Error(p)
	}
}

// stabilityMethods names, per signal as metadata.yaml spells it, the
// factory method that gives its stability (receiver, processor and
// exporter factories: TracesStability...; connectors: TracesToMetricsStability...;
// extensions: Stability).
var stabilityMethods = func() map[string]string {
	signals := []string{"traces", "metrics", "logs", "profiles"}
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	m := map[string]string{"extension": "Stability"}
	for _, from := range signals {
		m[from] = title(from) + "Stability"
		for _, to := range signals {
			m[from+"_to_"+to] = title(from) + "To" + title(to) + "Stability"
		}
	}
	return m
}()

var stabilityType = reflect.TypeFor[component.StabilityLevel]()

// stabilityOf calls f's method named method when f has one that returns a
// StabilityLevel.
func stabilityOf(f any, method string) (component.StabilityLevel, bool) {
	m := reflect.ValueOf(f).MethodByName(method)
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0) != stabilityType {
		return component.StabilityLevelUndefined, false
	}
	return m.Call(nil)[0].Interface().(component.StabilityLevel), true
}

// FactoryClass returns the class of f's component, or "" when f is no
// collector factory.
func FactoryClass(f component.Factory) Class {
	switch f.(type) {
	case receiver.Factory:
		return Receiver
	case processor.Factory:
		return Processor
	case exporter.Factory:
		return Exporter
	case connector.Factory:
		return Connector
	case extension.Factory:
		return Extension
	}
	return ""
}

// FactoryStability returns the level of every signal f offers (the signals
// whose level is not undefined).
func FactoryStability(f component.Factory) map[string]component.StabilityLevel {
	out := map[string]component.StabilityLevel{}
	for signal, method := range stabilityMethods {
		if l, ok := stabilityOf(f, method); ok && l != component.StabilityLevelUndefined {
			out[signal] = l
		}
	}
	return out
}

// FactoryProblems compares a factory's type, class and signals with want.
func FactoryProblems(f component.Factory, want Identity) []string {
	var problems []string
	if f.Type() != want.Type {
		problems = append(problems, fmt.Sprintf("type: the factory says %q, internal/metadata says %q", f.Type(), want.Type))
	}
	if c := FactoryClass(f); c != want.Class {
		problems = append(problems, fmt.Sprintf("class: the factory makes a %q, want %q", c, want.Class))
	}
	return append(problems, stabilityProblems("the factory", FactoryStability(f), "internal/metadata", want.Stability)...)
}

// CheckFactory asserts that f has want's type and class and offers exactly
// want's signals at want's levels.
func CheckFactory(t testing.TB, f component.Factory, want Identity) {
	t.Helper()
	for _, p := range FactoryProblems(f, want) {
		t.Error(p)
	}
}
