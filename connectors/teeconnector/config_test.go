package teeconnector

import (
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-llm/otelcol-llm/connectors/teeconnector/internal/metadata"
	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
)

func TestConfigs(t *testing.T) {
	traces := func(name string) pipeline.ID { return pipeline.NewIDWithName(pipeline.SignalTraces, name) }
	id := func(name string) component.ID { return component.NewIDWithName(metadata.Type, name) }
	tests := []componenttestkit.ConfigCase{
		{ID: component.NewID(metadata.Type), Want: &Config{Readers: []pipeline.ID{traces("genai")}, Owner: traces("guarded")}},
		{ID: id("two_readers"), Want: &Config{Readers: []pipeline.ID{traces("genai"), traces("spanmetrics")}, Owner: traces("guarded")}},
		{ID: id("empty"), WantErr: []string{"readers: at least one traces pipeline", "owner: a traces pipeline is required"}},
		{ID: id("metrics_pipeline"), WantErr: []string{"readers[0]:", `"metrics/genai"`, "traces pipelines only"}},
		{ID: id("twice"), WantErr: []string{"readers[1]:", `"traces/genai" is listed twice`}},
		{ID: id("owner_reads"), WantErr: []string{"owner:", `"traces/genai" is also a reader`}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}
