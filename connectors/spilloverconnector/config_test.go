package spilloverconnector

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
)

func TestConfigs(t *testing.T) {
	traces := func(name string) pipeline.ID { return pipeline.NewIDWithName(pipeline.SignalTraces, name) }
	def := createDefaultConfig().(*Config)
	def.Primary, def.Spill = traces("upstream"), traces("spill")
	full := &Config{Primary: traces("direct"), Spill: traces("disk"), RetryPrimaryAfter: 30 * time.Second}
	id := func(name string) component.ID { return component.NewIDWithName(metadata.Type, name) }
	tests := []componenttestkit.ConfigCase{
		{ID: component.NewID(metadata.Type), Want: def},
		{ID: id("full"), Want: full},
		{ID: id("empty"), WantErr: []string{"primary: a traces pipeline is required", "spill: a traces pipeline is required"}},
		{ID: id("metrics_pipeline"), WantErr: []string{"primary:", `"metrics/upstream"`, "traces only"}},
		{ID: id("same"), WantErr: []string{"spill:", `"traces/upstream" is also the primary`}},
		{ID: id("zero_retry"), WantErr: []string{"retry_primary_after:", "positive", "0s"}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}
