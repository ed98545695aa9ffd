package inferencelogreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/pipeline"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// The benchmarks read the same vLLM log (the sample file repeated to
// benchLines lines) with the inference_log vllm preset and, as the anchor,
// with the filelog receiver running a single regex_parser for the vLLM line
// header: the cost of the preset's routing, message parsing, typing and
// metric derivation over plain header parsing. Run both in one go:
//
//	go test -run '^$' -bench 'BenchmarkVLLMLog' -benchtime 5x ./receivers/inferencelogreceiver/
const benchLines = 50_000

func benchFile(b *testing.B) string {
	b.Helper()
	return benchFileOf(b, "vllm", testdataPath("logs", "vllm.log"))
}

// benchFileOf writes the lines of the sample files, repeated to benchLines
// lines, leaving out the preset's continuation lines so that every line is
// one record.
func benchFileOf(b *testing.B, preset string, samples ...string) string {
	b.Helper()
	p, err := loadPreset(preset, presetParams{Location: "UTC"})
	require.NoError(b, err)
	var lines []string
	for _, f := range samples {
		raw, err := os.ReadFile(f)
		require.NoError(b, err)
		for _, l := range strings.Split(string(raw), "\n") {
			l = strings.TrimRight(l, " \t\r")
			if l == "" || isContinuation(p, l) {
				continue
			}
			lines = append(lines, l)
		}
	}
	require.NotEmpty(b, lines)
	var sb strings.Builder
	for i := 0; i < benchLines; i++ {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	path := filepath.Join(b.TempDir(), preset+".log")
	require.NoError(b, os.WriteFile(path, []byte(sb.String()), 0o600))
	return path
}

type countingLogs struct{ n atomic.Int64 }

func (c *countingLogs) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (c *countingLogs) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	c.n.Add(int64(ld.LogRecordCount()))
	return nil
}

type countingMetrics struct{ n atomic.Int64 }

func (c *countingMetrics) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (c *countingMetrics) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	c.n.Add(int64(md.DataPointCount()))
	return nil
}

// runBench starts receivers made by start on the file and waits until all
// lines came out, b.N times.
func runBench(b *testing.B, start func(*countingLogs) []component.Component) {
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range b.N {
		sink := &countingLogs{}
		comps := start(sink)
		for _, c := range comps {
			require.NoError(b, c.Start(context.Background(), componenttest.NewNopHost()))
		}
		deadline := time.Now().Add(2 * time.Minute)
		for sink.n.Load() < benchLines && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		require.Equal(b, int64(benchLines), sink.n.Load())
		for _, c := range comps {
			require.NoError(b, c.Shutdown(context.Background()))
		}
	}
	b.StopTimer()
	lines := float64(b.N * benchLines)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/lines, "ns/line")
	b.ReportMetric(lines/b.Elapsed().Seconds(), "lines/s")
	// CPU time is the fairer measure on a shared machine: wall time also
	// counts the polling waits and other processes.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/lines, "cpu-ns/line")
}

// processCPU is the user+system CPU time the test process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkVLLMLogInferenceLog(b *testing.B) {
	benchFastAndGrammar(b, benchFile(b))
}

// benchFastAndGrammar runs the vllm preset over path with its fast parser
// and, for comparison in the same run, with the grammar alone.
func benchFastAndGrammar(b *testing.B, path string) {
	b.Run("fast", func(b *testing.B) { benchPreset(b, "vllm", path) })
	b.Run("grammar", func(b *testing.B) {
		fastParsersOff = true
		defer func() { fastParsersOff = false }()
		benchPreset(b, "vllm", path)
	})
}

// BenchmarkVLLMStatsLines reads only vLLM's stats lines (V0 and V1, with
// their metrics): the lines a busy server prints every few seconds per
// engine, and the costliest to parse.
func BenchmarkVLLMStatsLines(b *testing.B) {
	benchFastAndGrammar(b, benchFileOf(b, "vllm", writeStatsSample(b)))
}

// writeStatsSample writes 2,000 stats lines, V1 (two engines) and V0
// alternating, five seconds apart and with changing numbers, as a busy
// server prints them.
func writeStatsSample(b *testing.B) string {
	b.Helper()
	var sb strings.Builder
	t0 := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	for i := range 2000 {
		ts := t0.Add(time.Duration(5*i) * time.Second).Format("01-02 15:04:05")
		if i%2 == 0 {
			fmt.Fprintf(&sb, "(APIServer pid=2914) INFO %s [loggers.py:127] Engine %03d: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%\n",
				ts, i/2%2, float64(i%977)*3.7, float64(i%331)*1.3, i%64, i%7, float64(i%1000)/10, float64(i%613)/10)
		} else {
			fmt.Fprintf(&sb, "INFO %s metrics.py:351] Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: %.1f%%.\n",
				ts, float64(i%977)*2.1, float64(i%331)*0.9, i%48, i%3, i%11, float64(i%1000)/10, float64(i%97)/10)
		}
	}
	stats := filepath.Join(b.TempDir(), "stats.log")
	require.NoError(b, os.WriteFile(stats, []byte(sb.String()), 0o600))
	return stats
}

// BenchmarkVLLMStatsLinesFilelogFloor reads the same stats lines with the
// filelog receiver and no operator at all: the cost of tailing, splitting
// and converting a line that every receiver built on stanza pays, the
// floor under BenchmarkVLLMStatsLines.
func BenchmarkVLLMStatsLinesFilelogFloor(b *testing.B) {
	path := benchFileOf(b, "vllm", writeStatsSample(b))
	benchFilelog(b, path, nil)
}

// BenchmarkPresetRealLines reads each preset's real samples
// (testdata/real/<server>/, continuation lines left out) repeated.
func BenchmarkPresetRealLines(b *testing.B) {
	for _, name := range presetNames {
		b.Run(name, func(b *testing.B) {
			files, err := filepath.Glob(testdataPath("real", name, "*.log"))
			require.NoError(b, err)
			benchPreset(b, name, benchFileOf(b, name, files...))
		})
	}
}

// benchPreset runs the preset over the file with both signals.
func benchPreset(b *testing.B, preset, path string) {
	set := receivertest.NewNopSettings(NewFactory().Type())
	runBench(b, func(sink *countingLogs) []component.Component {
		cfg := testConfig(preset, path)
		cfg.InputConfig.PollInterval = time.Millisecond
		f := NewFactory()
		lr, err := f.CreateLogs(context.Background(), set, cfg, sink)
		require.NoError(b, err)
		mr, err := f.CreateMetrics(context.Background(), set, cfg, &countingMetrics{})
		require.NoError(b, err)
		return []component.Component{lr, mr}
	})
}

func BenchmarkVLLMLogFilelogHeaderOnly(b *testing.B) {
	benchFilelog(b, benchFile(b), []any{map[string]any{
		"type":     "regex_parser",
		"on_error": "send_quiet",
		"regex":    `^(?:\((?P<process>[^ )]+) pid=(?P<pid>\d+)\) )?(?P<level>[A-Z]+) (?P<time>\d{2}-\d{2} \d{2}:\d{2}:\d{2}) \[?(?P<code_file>[^:\] ]+):(?P<code_line>\d+)\] (?P<message>(?s:.*))$`,
		"timestamp": map[string]any{
			"parse_from": "attributes.time", "layout_type": "strptime", "layout": "%m-%d %H:%M:%S", "location": "UTC",
		},
		"severity": map[string]any{"parse_from": "attributes.level"},
	}})
}

// benchFilelog reads path with contrib's filelog receiver running operators.
func benchFilelog(b *testing.B, path string, operators []any) {
	f := filelogreceiver.NewFactory()
	set := receivertest.NewNopSettings(f.Type())
	runBench(b, func(sink *countingLogs) []component.Component {
		cfg := f.CreateDefaultConfig()
		conf := confmap.NewFromStringMap(map[string]any{
			"include":       []any{path},
			"start_at":      "beginning",
			"poll_interval": "1ms",
			"operators":     operators,
		})
		require.NoError(b, conf.Unmarshal(cfg))
		var lr receiver.Logs
		lr, err := f.CreateLogs(context.Background(), set, cfg, sink)
		require.NoError(b, err)
		return []component.Component{lr}
	})
}

// BenchmarkVLLMStatsOutput is the output half of BenchmarkVLLMStatsLines
// alone: already parsed stats records turned into their log records
// (stanza's entry → pdata conversion) and metric points, in batches of 100
// as the emitter sends them. What no parser can save.
func BenchmarkVLLMStatsOutput(b *testing.B) {
	pp := buildPresetPipeline(b, "vllm")
	raw, err := os.ReadFile(writeStatsSample(b))
	require.NoError(b, err)
	var parsed []*entry.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parsed = append(parsed, pp.parse(b, unwrap(l, map[string]any{})))
	}
	mb := newMetricsBuilder(pp.preset, "", time.Unix(0, 0), "bench")
	b.ReportAllocs()
	b.ResetTimer()
	lines := 0
	for range b.N {
		for i := 0; i+100 <= len(parsed); i += 100 {
			batch := parsed[i : i+100]
			_, n := mb.build(batch)
			ld := adapter.ConvertEntries(batch, metadata.ScopeName, "bench")
			if n == 0 || ld.LogRecordCount() != 100 {
				b.Fatal("no output")
			}
			lines += 100
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
}

// BenchmarkPresetStages runs each preset's own stages in memory, without
// the file input before them or the conversion to pdata after them: the
// unwrap step, the fold, the classify step (fast parser), the grammar and
// the field table, on batches of 100 lines as the file input emits them.
// "preset" is those stages alone; "preset+output" adds what the receiver
// does with each batch after them (the log records' and the metric points'
// pdata), the part of BenchmarkVLLMStatsLines that is not file tailing.
// The vllm-stats case is BenchmarkVLLMStatsLines' lines.
func BenchmarkPresetStages(b *testing.B) {
	cases := map[string][]string{}
	for _, name := range presetNames {
		cases[name] = realLines(b, name)
	}
	raw, err := os.ReadFile(writeStatsSample(b))
	require.NoError(b, err)
	cases["vllm-stats"] = strings.Split(strings.TrimSpace(string(raw)), "\n")
	for _, name := range append([]string{"vllm-stats"}, presetNames...) {
		preset := strings.TrimSuffix(name, "-stats")
		for _, output := range []bool{false, true} {
			label := name + "/preset"
			if output {
				label += "+output"
			}
			b.Run(label, func(b *testing.B) { benchStages(b, preset, cases[name], output) })
		}
	}
}

func benchStages(b *testing.B, presetName string, lines []string, output bool) {
	p, err := loadPreset(presetName, presetParams{Location: "UTC"})
	require.NoError(b, err)
	set := componenttest.NewNopTelemetrySettings()
	mb := newMetricsBuilder(p, "", time.Unix(0, 0), "bench")
	out := helper.NewSynchronousLogEmitter(set, func(_ context.Context, es []*entry.Entry) {
		if output {
			mb.build(es)
			adapter.ConvertEntries(es, metadata.ScopeName, "bench")
		}
	})
	cfg := testConfig(presetName)
	ops := pipelineOperators(cfg, p)[1:] // the preset's stages, without the file input
	pipe, err := (pipeline.Config{Operators: ops, DefaultOutput: out}).Build(set)
	require.NoError(b, err)
	require.NoError(b, pipe.Start(nil))
	defer func() { require.NoError(b, pipe.Stop()) }()
	first := pipe.Operators()[0]
	require.Equal(b, unwrapOperatorID, first.ID())
	batch := make([]*entry.Entry, 0, 100)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		e := entry.New()
		e.Body = lines[i%len(lines)]
		e.Attributes = map[string]any{attrFileName: "server.log"}
		batch = append(batch, e)
		if len(batch) == cap(batch) || i == b.N-1 {
			require.NoError(b, first.ProcessBatch(context.Background(), batch))
			batch = make([]*entry.Entry, 0, 100)
		}
	}
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/line")
	// Lines per second of CPU: the rate one core sustains, GC included.
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "lines/cpu-s")
}
