package metadatatest // import "github.com/otelcol-llm/otelcol-llm/internal/metadatatest"

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.yaml.in/yaml/v3"
)

// SelfMetricsProblems compares telemetry.metrics with the instruments the
// component creates, registered (Recorder.Instruments of its scope). It
// returns one line per disagreement:
//
//   - a created instrument metadata.yaml does not list, with the entry to add;
//   - a listed metric no instrument has;
//   - a name created twice with different definitions;
//   - for the others, a description, unit, type (sum with monotonic, gauge,
//     histogram), value_type, async or bucket_boundaries that is not the
//     code's (bucket_boundaries only where metadata.yaml gives them);
//   - a name that does not start with otelcol_<type>_.
func (md *Metadata) SelfMetricsProblems(registered []Instrument) []string {
	var problems []string
	byName := map[string]Instrument{}
	var names []string
	for _, in := range registered {
		if prev, ok := byName[in.Name]; ok {
			if !prev.same(in) {
				problems = append(problems, fmt.Sprintf("%s is created twice, differently: %s, then %s", in.Name, prev, in))
			}
			continue
		}
		byName[in.Name] = in
		names = append(names, in.Name)
	}
	sort.Strings(names)

	prefix := "otelcol_" + md.Type + "_"
	for _, name := range names {
		in := byName[name]
		if !strings.HasPrefix(name, prefix) {
			problems = append(problems, fmt.Sprintf("%s: the component's own metrics are named %s*", name, prefix))
		}
		doc, ok := md.Telemetry.Metrics[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("telemetry.metrics lacks %s, which the code creates (%s); add:\n%s",
				name, in.Kind, Entry(in)))
			continue
		}
		problems = append(problems, metricProblems(name, doc, in)...)
	}
	for _, name := range sortedKeys(md.Telemetry.Metrics) {
		if _, ok := byName[name]; !ok {
			problems = append(problems, fmt.Sprintf("telemetry.metrics lists %s, which the code does not create", name))
		}
	}
	return problems
}

func metricProblems(name string, doc Metric, in Instrument) []string {
	var problems []string
	if got := strings.TrimSpace(doc.Description); got != in.Description {
		problems = append(problems, fmt.Sprintf("%s: description\n  metadata.yaml: %q\n  code:          %q", name, got, in.Description))
	}
	unit := ""
	if doc.Unit != nil {
		unit = *doc.Unit
	}
	if unit != in.Unit {
		problems = append(problems, fmt.Sprintf("%s: unit: metadata.yaml says %q, the code %q", name, unit, in.Unit))
	}
	want, ok := shapes[in.Kind]
	if !ok {
		return append(problems, fmt.Sprintf("%s: unknown instrument kind %q", name, in.Kind))
	}
	got, err := doc.shape()
	if err != nil {
		return append(problems, fmt.Sprintf("%s: %v; the code's %s is %s", name, err, in.Kind, shapeYAML(want)))
	}
	if got != want {
		problems = append(problems, fmt.Sprintf("%s: metadata.yaml says %s, the code's %s is %s",
			name, shapeYAML(got), in.Kind, shapeYAML(want)))
	}
	if doc.Histogram != nil && doc.Histogram.BucketBoundaries != nil &&
		!slices.Equal(doc.Histogram.BucketBoundaries, in.BucketBoundaries) {
		problems = append(problems, fmt.Sprintf("%s: bucket_boundaries: metadata.yaml says %v, the code %v",
			name, doc.Histogram.BucketBoundaries, in.BucketBoundaries))
	}
	return problems
}

// shapeYAML writes a shape as metadata.yaml spells it.
func shapeYAML(s shape) string {
	var b strings.Builder
	b.WriteString(s.typ + ": {")
	if s.typ == "sum" {
		fmt.Fprintf(&b, "monotonic: %t, ", s.monotonic)
	}
	b.WriteString("value_type: " + s.valueType)
	if s.async {
		b.WriteString(", async: true")
	}
	b.WriteString("}")
	return b.String()
}

// yamlScalar returns s as a YAML scalar, quoted only where YAML needs it,
// and then in double quotes as this project's metadata.yaml files write them.
func yamlScalar(s string) string {
	b, err := yaml.Marshal(s)
	out := strings.TrimSuffix(string(b), "\n")
	if err != nil || strings.HasPrefix(out, "'") || strings.Contains(out, "\n") {
		return strconv.Quote(s)
	}
	return out
}

// Entry is the telemetry.metrics entry that documents in, in the block
// style of exporters/loadreportexporter/metadata.yaml.
func Entry(in Instrument) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    %s:\n", in.Name)
	fmt.Fprintf(&b, "      description: %s\n", yamlScalar(in.Description))
	fmt.Fprintf(&b, "      unit: %s\n", yamlScalar(in.Unit))
	if s, ok := shapes[in.Kind]; ok {
		fmt.Fprintf(&b, "      %s\n", shapeYAML(s))
	}
	return b.String()
}

// CheckSelfMetrics asserts that dir/metadata.yaml's telemetry.metrics lists
// exactly the instruments registered, with their descriptions, units and
// types (see SelfMetricsProblems). registered is what the component created
// on a Recorder, filtered by its scope: rec.Instruments(metadata.ScopeName).
func CheckSelfMetrics(t testing.TB, dir string, registered []Instrument) {
	t.Helper()
	md := MustLoad(t, dir)
	if len(registered) == 0 && len(md.Telemetry.Metrics) > 0 {
		t.Error("no instrument was recorded: was the component created with the Recorder's settings, in the right scope?")
	}
	for _, p := range md.SelfMetricsProblems(registered) {
		t.Error(p)
	}
}

// CheckSelfMetricNames asserts that telemetry.metrics lists exactly names,
// when only the names are known.
func CheckSelfMetricNames(t testing.TB, dir string, names []string) {
	t.Helper()
	md := MustLoad(t, dir)
	listed := sortedKeys(md.Telemetry.Metrics)
	want := slices.Clone(names)
	sort.Strings(want)
	want = slices.Compact(want)
	for _, n := range want {
		if _, ok := md.Telemetry.Metrics[n]; !ok {
			t.Errorf("telemetry.metrics lacks %s", n)
		}
	}
	for _, n := range listed {
		if !slices.Contains(want, n) {
			t.Errorf("telemetry.metrics lists %s, which the code does not create", n)
		}
	}
}

// CounterSum sums the points of the int counter name whose attributes
// include every one of kv; a counter that was never recorded sums to 0.
func CounterSum(t testing.TB, tel *componenttest.Telemetry, name string, kv ...attribute.KeyValue) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is an int counter", name)
	var total int64
	for _, dp := range sum.DataPoints {
		if hasAll(dp.Attributes, kv) {
			total += dp.Value
		}
	}
	return total
}

// GaugeValue is the value of the int gauge name's point whose attributes
// include every one of kv; it fails the test when there is no such point.
func GaugeValue(t testing.TB, tel *componenttest.Telemetry, name string, kv ...attribute.KeyValue) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err, name)
	g, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%s is an int gauge", name)
	for _, dp := range g.DataPoints {
		if hasAll(dp.Attributes, kv) {
			return dp.Value
		}
	}
	require.Failf(t, "no gauge point", "%s has no point with %v", name, kv)
	return 0
}

func hasAll(set attribute.Set, kv []attribute.KeyValue) bool {
	for _, want := range kv {
		if got, present := set.Value(want.Key); !present || got != want.Value {
			return false
		}
	}
	return true
}
