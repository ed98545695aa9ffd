package llmsemconvprocessor

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

// goldenSpan is the compact YAML form of a span used by the golden files.
type goldenSpan struct {
	Name       string         `yaml:"name"`
	Kind       string         `yaml:"kind,omitempty"`
	StartMs    int64          `yaml:"start_ms,omitempty"`
	DurationMs int64          `yaml:"duration_ms,omitempty"`
	Attributes map[string]any `yaml:"attributes,omitempty"`
	Events     []goldenEvent  `yaml:"events,omitempty"`
}

type goldenEvent struct {
	Name       string         `yaml:"name"`
	AtMs       int64          `yaml:"at_ms"`
	Attributes map[string]any `yaml:"attributes,omitempty"`
}

type goldenFile struct {
	// Config overrides applied to the default configuration.
	Config map[string]any `yaml:"config,omitempty"`
	Spans  []goldenSpan   `yaml:"spans,omitempty"`
	Logs   []goldenLog    `yaml:"logs,omitempty"`
}

type goldenLog struct {
	EventName  string         `yaml:"event_name,omitempty"`
	Body       string         `yaml:"body,omitempty"`
	Attributes map[string]any `yaml:"attributes,omitempty"`
}

const baseTime = 1_780_000_000_000 // ms since the epoch

var kinds = map[string]ptrace.SpanKind{
	"": ptrace.SpanKindInternal, "internal": ptrace.SpanKindInternal, "client": ptrace.SpanKindClient,
	"server": ptrace.SpanKindServer, "producer": ptrace.SpanKindProducer, "consumer": ptrace.SpanKindConsumer,
}

func putAttrs(t testing.TB, m pcommon.Map, attrs map[string]any) {
	t.Helper()
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := attrs[k]
		if i, ok := v.(int); ok {
			v = int64(i)
		}
		require.NoError(t, m.PutEmpty(k).FromRaw(v), k)
	}
}

func tracesFromGolden(t testing.TB, g goldenFile) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i, gs := range g.Spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetName(gs.Name)
		sp.SetKind(kinds[gs.Kind])
		sp.SetTraceID(pcommon.TraceID{1, 2, 3})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		start := pcommon.Timestamp((baseTime + gs.StartMs) * 1e6)
		sp.SetStartTimestamp(start)
		sp.SetEndTimestamp(start + pcommon.Timestamp(gs.DurationMs*1e6))
		putAttrs(t, sp.Attributes(), gs.Attributes)
		for _, ge := range gs.Events {
			ev := sp.Events().AppendEmpty()
			ev.SetName(ge.Name)
			ev.SetTimestamp(start + pcommon.Timestamp(ge.AtMs*1e6))
			putAttrs(t, ev.Attributes(), ge.Attributes)
		}
	}
	return td
}

func logsFromGolden(t testing.TB, g goldenFile) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	for _, gl := range g.Logs {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(gl.EventName)
		if gl.Body != "" {
			lr.Body().SetStr(gl.Body)
		}
		putAttrs(t, lr.Attributes(), gl.Attributes)
	}
	return ld
}

func kindName(k ptrace.SpanKind) string {
	for n, v := range kinds {
		if v == k && n != "" {
			return n
		}
	}
	return ""
}

func goldenFromTraces(td ptrace.Traces) []goldenSpan {
	var out []goldenSpan
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		sp := spans.At(i)
		start := int64(sp.StartTimestamp()/1e6) - baseTime
		gs := goldenSpan{Name: sp.Name(), Kind: kindName(sp.Kind()), StartMs: start, DurationMs: int64((sp.EndTimestamp() - sp.StartTimestamp()) / 1e6), Attributes: sp.Attributes().AsRaw()}
		for j := 0; j < sp.Events().Len(); j++ {
			ev := sp.Events().At(j)
			gs.Events = append(gs.Events, goldenEvent{Name: ev.Name(), AtMs: int64((ev.Timestamp() - sp.StartTimestamp()) / 1e6), Attributes: ev.Attributes().AsRaw()})
		}
		out = append(out, gs)
	}
	return out
}

func goldenFromLogs(ld plog.Logs) []goldenLog {
	var out []goldenLog
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		lr := lrs.At(i)
		out = append(out, goldenLog{EventName: lr.EventName(), Body: lr.Body().AsString(), Attributes: lr.Attributes().AsRaw()})
	}
	return out
}

// configFrom applies overrides to the default configuration.
func configFrom(t testing.TB, overrides map[string]any) *Config {
	cfg := createDefaultConfig().(*Config)
	if len(overrides) > 0 {
		raw, err := yaml.Marshal(overrides)
		require.NoError(t, err)
		require.NoError(t, unmarshalYAMLConfig(raw, cfg))
	}
	require.NoError(t, cfg.Validate())
	return cfg
}

// runGolden processes a golden input file and compares with its .out file.
func runGolden(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var in goldenFile
	require.NoError(t, yaml.Unmarshal(raw, &in))
	cfg := configFrom(t, in.Config)
	f := NewFactory()
	got := goldenFile{}
	if len(in.Spans) > 0 {
		sink := new(consumertest.TracesSink)
		p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		require.NoError(t, err)
		require.NoError(t, p.ConsumeTraces(context.Background(), tracesFromGolden(t, in)))
		require.Len(t, sink.AllTraces(), 1)
		got.Spans = goldenFromTraces(sink.AllTraces()[0])
	}
	if len(in.Logs) > 0 {
		sink := new(consumertest.LogsSink)
		p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		require.NoError(t, err)
		require.NoError(t, p.ConsumeLogs(context.Background(), logsFromGolden(t, in)))
		got.Logs = goldenFromLogs(sink.AllLogs()[0])
	}
	out, err := yaml.Marshal(got)
	require.NoError(t, err)
	want := strings.TrimSuffix(path, ".in.yaml") + ".out.yaml"
	goldentest.Bytes(t, want, out)
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.in.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".in.yaml"), func(t *testing.T) { runGolden(t, f) })
	}
}

var _ component.Config = (*Config)(nil)
