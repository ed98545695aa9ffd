package inferencelogreceiver

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/pipeline"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// presetPipeline is one preset's operators, between the classify step
// (fast parsers on or off) and the fields operator that closes them, built
// into a stanza pipeline whose output the test reads.
type presetPipeline struct {
	preset *preset
	first  operator.Operator
	out    []*entry.Entry
	pipe   pipeline.Pipeline
}

func buildPresetPipeline(t testing.TB, name string) *presetPipeline {
	t.Helper()
	return buildPresetPipelineWith(t, name, true)
}

func buildPresetPipelineWith(t testing.TB, name string, fast bool) *presetPipeline {
	t.Helper()
	fastParsersOff = !fast
	defer func() { fastParsersOff = false }()
	p, err := loadPreset(name, presetParams{Location: "UTC"})
	require.NoError(t, err)
	pp := &presetPipeline{preset: p}
	set := componenttest.NewNopTelemetrySettings()
	out := helper.NewSynchronousLogEmitter(set, func(_ context.Context, es []*entry.Entry) { pp.out = append(pp.out, es...) })
	ops := append(append([]operator.Config{newClassifyConfig(p)}, p.operators...), newFieldsConfig(p))
	pipe, err := (pipeline.Config{Operators: ops, DefaultOutput: out}).Build(set)
	require.NoError(t, err)
	// No preset operator keeps state, so there is nothing to persist.
	require.NoError(t, pipe.Start(nil))
	t.Cleanup(func() { require.NoError(t, pipe.Stop()) })
	// The classify step is the one the fold feeds.
	var first operator.Operator
	for _, op := range pipe.Operators() {
		if op.ID() == classifyOperatorID {
			first = op
		}
	}
	require.NotNil(t, first, "preset %s: %s not in the pipeline", name, classifyOperatorID)
	pp.first, pp.pipe = first, pipe
	return pp
}

// parse sends one line through the preset and returns the entry that comes
// out. Every line must come out: a preset may fail to parse a line, but it
// never swallows it.
func (pp *presetPipeline) parse(t testing.TB, line string) *entry.Entry {
	t.Helper()
	e := entry.New()
	e.Body = line
	e.ObservedTimestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.Attributes = map[string]any{attrFileName: "server.log"}
	pp.out = pp.out[:0]
	require.NoError(t, pp.first.Process(context.Background(), e))
	require.Len(t, pp.out, 1, "preset %s: line %q must come out exactly once", pp.preset.name, line)
	return pp.out[0]
}

// checkEntry asserts what every preset guarantees for any line: the line is
// kept, the server is stamped, no scratch capture leaks, typed fields carry
// their declared type (or the record says why not), and the metrics built
// from the record are finite and well formed.
func checkEntry(t testing.TB, pp *presetPipeline, line string, e *entry.Entry) {
	t.Helper()
	require.Equal(t, pp.preset.name, e.Attributes[attrServer], "line %q", line)
	if _, kept := e.Body.(string); !kept {
		require.Failf(t, "body lost", "preset %s, line %q: body is %T", pp.preset.name, line, e.Body)
	}
	_, parseErr := e.Attributes[attrParseError]
	for _, f := range pp.preset.fields {
		_, leaked := e.Attributes[f.Capture]
		if leaked && f.Capture != f.Attribute {
			// A capture under its own name means the fields operator skipped it.
			require.Failf(t, "capture not renamed", "preset %s, line %q: capture %q kept", pp.preset.name, line, f.Capture)
		}
		if f.Drop {
			continue
		}
		v, ok := e.Attributes[f.Attribute]
		if !ok || parseErr {
			continue
		}
		switch f.Type {
		case "int":
			switch n := v.(type) {
			case int64:
			case float64:
				require.False(t, math.IsNaN(n) || math.IsInf(n, 0), "preset %s, %s = %v", pp.preset.name, f.Attribute, n)
			default:
				require.Failf(t, "wrong type", "preset %s, line %q: %s is %T", pp.preset.name, line, f.Attribute, v)
			}
		case "double", "duration":
			if _, isFloat := v.(float64); !isFloat {
				require.Failf(t, "wrong type", "preset %s, line %q: %s is %T", pp.preset.name, line, f.Attribute, v)
			}
		}
	}
	b := newMetricsBuilder(pp.preset, "", time.Unix(0, 0), "test")
	md, n := b.build([]*entry.Entry{e})
	require.Equal(t, n, md.DataPointCount(), "preset %s, line %q", pp.preset.name, line)
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				dps := pmetric.NewNumberDataPointSlice()
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeHistogram:
					hps := m.Histogram().DataPoints()
					for d := 0; d < hps.Len(); d++ {
						hp := hps.At(d)
						require.Equal(t, uint64(1), hp.Count(), "preset %s, line %q: %s holds the line's one value", pp.preset.name, line, m.Name())
						require.False(t, math.IsNaN(hp.Sum()) || math.IsInf(hp.Sum(), 0),
							"preset %s, line %q: %s sum = %v", pp.preset.name, line, m.Name(), hp.Sum())
					}
				default:
					require.Failf(t, "unexpected metric type", "%s is %s", m.Name(), m.Type())
				}
				for d := 0; d < dps.Len(); d++ {
					dp := dps.At(d)
					if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
						require.False(t, math.IsNaN(dp.DoubleValue()) || math.IsInf(dp.DoubleValue(), 0),
							"preset %s, line %q: %s = %v", pp.preset.name, line, m.Name(), dp.DoubleValue())
					}
				}
			}
		}
	}
}

// FuzzPresetLine feeds arbitrary lines, seeded with every line of the real
// server logs under testdata/logs, through every preset.
func FuzzPresetLine(f *testing.F) {
	for _, name := range presetNames {
		fh, err := os.Open(filepath.Join("testdata", "logs", name+".log"))
		require.NoError(f, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			f.Add(sc.Text())
		}
		require.NoError(f, sc.Err())
		require.NoError(f, fh.Close())
	}
	f.Add("")
	f.Add("INFO 01-02 03:04:05 [metrics.py:1] Avg prompt throughput: NaN tokens/s, Running: 99999999999999999999 reqs")
	f.Add("\x00\xff\xfe garbage \u2028 line")

	pipes := make([]*presetPipeline, 0, len(presetNames))
	for _, name := range presetNames {
		pipes = append(pipes, buildPresetPipeline(f, name))
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, pp := range pipes {
			checkEntry(t, pp, line, pp.parse(t, line))
		}
	})
}

// TestPresetPipelineParsesRealLines keeps the fuzz harness honest: driven by
// the real server logs, the in-memory pipeline must type fields and derive
// metric points, as the file-tailing receiver does.
func TestPresetPipelineParsesRealLines(t *testing.T) {
	for _, name := range presetNames {
		t.Run(name, func(t *testing.T) {
			pp := buildPresetPipeline(t, name)
			fh, err := os.Open(filepath.Join("testdata", "logs", name+".log"))
			require.NoError(t, err)
			defer fh.Close()
			sc := bufio.NewScanner(fh)
			sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
			typed, points := 0, 0
			for sc.Scan() {
				e := pp.parse(t, sc.Text())
				checkEntry(t, pp, sc.Text(), e)
				for _, f := range pp.preset.fields {
					if _, ok := e.Attributes[f.Attribute]; ok && !f.Drop {
						typed++
						break
					}
				}
				_, n := newMetricsBuilder(pp.preset, "", time.Unix(0, 0), "test").build([]*entry.Entry{e})
				points += n
			}
			require.NoError(t, sc.Err())
			require.Positive(t, typed, "no line of %s.log gained a preset attribute", name)
			if len(pp.preset.metrics) > 0 {
				require.Positive(t, points, "no line of %s.log produced a metric point", name)
			} else {
				require.Zero(t, points, "%s declares no metric but produced points", name)
			}
		})
	}
}
