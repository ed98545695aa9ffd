package loadreportexporter

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter/internal/metadata"
)

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, "load_report", f.Type().String())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
	assert.Equal(t, metadata.MetricsStability, f.MetricsStability())
}

func readReport(t *testing.T, dir string) Report {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	var r Report
	require.NoError(t, json.Unmarshal(raw, &r))
	return r
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := testConfig(t)
	set := exportertest.NewNopSettings(metadata.Type)

	// Shutdown without Start.
	te, err := f.CreateTraces(bg, set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Shutdown(bg))

	// Start and shut down twice, traces and metrics sharing one report.
	for i := 0; i < 2; i++ {
		te, err := f.CreateTraces(bg, set, cfg)
		require.NoError(t, err)
		me, err := f.CreateMetrics(bg, set, cfg)
		require.NoError(t, err)
		require.NoError(t, te.Start(bg, componenttest.NewNopHost()))
		require.NoError(t, me.Start(bg, componenttest.NewNopHost()))
		require.NoError(t, te.ConsumeTraces(bg, knownRun()))
		require.NoError(t, me.ConsumeMetrics(bg, knownMetrics()))
		require.NoError(t, te.Shutdown(bg))
		_, err = os.Stat(filepath.Join(cfg.Directory, "report.json"))
		assert.True(t, os.IsNotExist(err) || i > 0, "the report is written when the last signal stops")
		require.NoError(t, me.Shutdown(bg))
		r := readReport(t, cfg.Directory)
		assert.True(t, r.Final)
		// One report per run: the second run starts from a fresh state.
		assert.EqualValues(t, 50, r.Total.Requests)
		require.NotNil(t, r.SpanLoss)
		assert.Equal(t, "metrics", r.SpanLoss.Source)
		for _, name := range []string{"report.json", "report.md", "report.html"} {
			_, err := os.Stat(filepath.Join(cfg.Directory, name))
			require.NoError(t, err, name)
		}
		require.NoError(t, os.Remove(filepath.Join(cfg.Directory, "report.json")))
	}
}

func TestStartFailsOnUnwritableDirectory(t *testing.T) {
	cfg := testConfig(t)
	file := filepath.Join(cfg.Directory, "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cfg.Directory = filepath.Join(file, "sub")
	te, err := NewFactory().CreateTraces(bg, exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	err = te.Start(bg, componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "directory:")
	require.NoError(t, te.Shutdown(bg))
}

func TestIntervalWrites(t *testing.T) {
	cfg := testConfig(t)
	cfg.Interval = 20 * time.Millisecond
	te, err := NewFactory().CreateTraces(bg, exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, te.Start(bg, componenttest.NewNopHost()))
	require.NoError(t, te.ConsumeTraces(bg, knownRun()))
	p := filepath.Join(cfg.Directory, "report.md")
	require.Eventually(t, func() bool { _, err := os.Stat(p); return err == nil }, 5*time.Second, 10*time.Millisecond)
	r := readReport(t, cfg.Directory)
	assert.False(t, r.Final, "an interval report is interim")
	require.NoError(t, te.Shutdown(bg))
	assert.True(t, readReport(t, cfg.Directory).Final)
}

// TestExitGate checks both halves of the exit behaviour: the shutdown error
// that makes the collector exit 1 on FAIL, and the stop request (a fatal
// status) when the run is over or the verdict is reached early.
func TestExitGate(t *testing.T) {
	tests := []struct {
		name     string
		exit     ExitConfig
		traces   ptrace.Traces
		wantErr  bool
		wantStop string // substring of the stop reason, "" for none
	}{
		{name: "gate off", exit: ExitConfig{OnVerdict: "none", NoData: "fail"}, traces: knownRun()},
		{name: "fail gates", exit: ExitConfig{OnVerdict: "fail", NoData: "fail"}, traces: knownRun(), wantErr: true},
		{name: "stop early on fail", exit: ExitConfig{OnVerdict: "fail", StopEarly: true, MinRequests: 10, NoData: "fail"},
			traces: knownRun(), wantErr: true, wantStop: "stopping early"},
		{name: "min requests not reached", exit: ExitConfig{OnVerdict: "fail", StopEarly: true, MinRequests: 1000, NoData: "fail"},
			traces: knownRun(), wantErr: true},
		{name: "no data fails", exit: ExitConfig{OnVerdict: "fail", NoData: "fail"}, traces: ptrace.NewTraces(), wantErr: true},
		{name: "no data passes", exit: ExitConfig{OnVerdict: "fail", NoData: "pass"}, traces: ptrace.NewTraces()},
		{name: "stop after", exit: ExitConfig{OnVerdict: "none", StopAfter: time.Millisecond, NoData: "fail"},
			traces: knownRun(), wantStop: "exit.stop_after"},
		{name: "stop when idle", exit: ExitConfig{OnVerdict: "none", StopWhenIdle: time.Millisecond, NoData: "fail"},
			traces: knownRun(), wantStop: "exit.stop_when_idle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Interval = 10 * time.Millisecond
			cfg.Exit = tt.exit
			require.NoError(t, cfg.Validate())
			e, err := newReportExporter(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			stops := make(chan error, 2)
			e.onStop = func(_ component.Host, reason error) { stops <- reason }
			require.NoError(t, e.start(bg, componenttest.NewNopHost()))
			require.NoError(t, e.consumeTraces(bg, tt.traces))
			if tt.wantStop != "" {
				select {
				case reason := <-stops:
					assert.Contains(t, reason.Error(), tt.wantStop)
				case <-time.After(5 * time.Second):
					t.Fatal("no stop request")
				}
			} else {
				time.Sleep(50 * time.Millisecond)
				assert.Empty(t, stops)
			}
			err = e.shutdown(bg)
			if tt.wantErr {
				require.Error(t, err)
				assert.True(t, errors.Is(err, errVerdict))
				assert.Contains(t, err.Error(), cfg.Directory)
			} else {
				require.NoError(t, err)
			}
			assert.Len(t, stops, 0, "a stop is requested at most once")
		})
	}
}
