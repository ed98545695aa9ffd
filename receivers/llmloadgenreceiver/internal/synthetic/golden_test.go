package synthetic

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/otelcol-llm/otelcol-llm/internal/goldentest"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// goldenConfig is the fixed, seeded configuration of the golden files: a
// few requests of one scenario, with a fault mix that shows the error
// spellings, in one dialect.
func goldenConfig(scenario, dialect string) *config.Config {
	cfg := afapConfig(3)
	cfg.Semconv = dialect
	cfg.Scenarios = []config.ScenarioConfig{{Type: scenario, Weight: 1}}
	cfg.Faults = []config.FaultConfig{
		{Type: config.FaultRateLimit, Probability: 0.2, MaxRetries: 2},
		{Type: config.FaultMidStream, Probability: 0.1},
	}
	cfg.Resources.Services, cfg.Resources.InstancesPerService = 1, 1
	cfg.BatchSize = 10
	return cfg
}

func mergeTraces(all []ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range all {
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

// TestGoldenTraces pins the traces of every scenario in every dialect for a
// fixed seed: span names, kinds, attributes, events, links, ids and
// timestamps. Run with -update after an intended change.
func TestGoldenTraces(t *testing.T) {
	for _, scenario := range config.Scenarios {
		for _, dialect := range dialectNames {
			t.Run(scenario+"/"+dialect, func(t *testing.T) {
				sink := &consumertest.TracesSink{}
				runSync(t, goldenConfig(scenario, dialect), sink, nil, nil)
				got := mergeTraces(sink.AllTraces())
				path := filepath.Join("testdata", "golden", fmt.Sprintf("%s_%s.yaml", scenario, dialect))
				if goldentest.Updating() {
					require.NoError(t, golden.WriteTraces(t, path, got))
				}
				want, err := golden.ReadTraces(path)
				require.NoError(t, err)
				require.NoError(t, ptracetest.CompareTraces(want, got))
			})
		}
	}
}

// TestGoldenMetrics pins the GenAI client metrics of a mixed run under both
// metric targets.
func TestGoldenMetrics(t *testing.T) {
	for _, dialect := range []string{"gen_ai_v1.41", "gen_ai_latest"} {
		t.Run(dialect, func(t *testing.T) {
			cfg := afapConfig(20)
			cfg.Semconv = dialect
			cfg.Resources.Services, cfg.Resources.InstancesPerService = 1, 1
			cfg.Faults = []config.FaultConfig{{Type: config.FaultOverloaded, Probability: 0.1}}
			sink := &consumertest.MetricsSink{}
			runSync(t, cfg, nil, sink, nil)
			all := sink.AllMetrics()
			require.Len(t, all, 1, "bounded as_fast_as_possible runs send their cumulative metrics once, at the end")
			path := filepath.Join("testdata", "golden", "metrics_"+dialect+".yaml")
			if goldentest.Updating() {
				require.NoError(t, golden.WriteMetrics(t, path, all[0]))
			}
			want, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, all[0], pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder(),
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp()))
		})
	}
}
