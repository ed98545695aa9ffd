package llmsemconvprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"
	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {

	latest := createDefaultConfig().(*Config)
	latest.Target = TargetLatest
	latest.Dialects = []string{"openinference", "openllmetry"}
	latest.RemoveOriginals = false
	latest.Overwrite = true
	latest.Annotate = false
	latest.Span = SpanConfig{}

	content := createDefaultConfig().(*Config)
	content.Content.InputMessages = GroupPolicy{Action: ActionRedact, MaxBytes: 4096}
	content.Content.OutputMessages = GroupPolicy{Action: ActionTruncate, MaxBytes: 1024}
	content.Content.SystemInstructions = GroupPolicy{Action: ActionHash}
	content.Content.ToolContent = GroupPolicy{Action: ActionDrop}
	content.Content.BuiltinPatterns = []string{"email"}
	content.Content.Patterns = []PatternConfig{{Name: "ticket", Regex: "TICKET-[0-9]+"}}
	content.Derive.Timing = false
	content.Derive.Prices = []PriceConfig{
		{Model: "gpt-4o", Input: 2.5, Output: 10},
		{Model: "claude-3-5-*", Provider: "anthropic", Input: 3, Output: 15, CachedInput: 0.3},
	}

	tests := []componenttestkit.ConfigCase{
		{ID: component.NewID(metadata.Type), Want: createDefaultConfig().(*Config)},
		{ID: component.NewIDWithName(metadata.Type, "latest"), Want: latest},
		{ID: component.NewIDWithName(metadata.Type, "content"), Want: content},
		{ID: component.NewIDWithName(metadata.Type, "bad_target"), WantErr: []string{"target:", `"v1.41", "latest"`}},
		{ID: component.NewIDWithName(metadata.Type, "bad_dialect"), WantErr: []string{"dialects[1]", "langchain", "openinference, openllmetry"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_action"), WantErr: []string{"content.input_messages.action", "encrypt", "keep, truncate, redact, hash, drop"}},
		{ID: component.NewIDWithName(metadata.Type, "truncate_without_size"), WantErr: []string{"content.output_messages.max_bytes", "at least 64"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_pattern"), WantErr: []string{"content.patterns[0].regex"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_price"), WantErr: []string{"derive.prices[0].model", "derive.prices[0]: input, output and cached_input must be >= 0"}},
		{ID: component.NewIDWithName(metadata.Type, "bad_builtin"), WantErr: []string{"content.builtin_patterns[0]", "ssn", "api_key, card_number, email"}},
	}
	componenttestkit.CheckConfigs(t, filepath.Join("testdata", "config.yaml"), createDefaultConfig, tests)
}

func TestConfigStruct(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(createDefaultConfig()))
}

func TestMappingTableCompilesForEveryTarget(t *testing.T) {
	for _, target := range []string{TargetV141, TargetLatest} {
		tbl, err := compileTable(mappingYAML, target, nil)
		require.NoError(t, err, target)
		assert.Len(t, tbl.dialects, len(dialectNames()))
		assert.NotEmpty(t, tbl.version)
	}
	_, err := compileTable(mappingYAML, "v9", nil)
	assert.ErrorContains(t, err, `no target "v9"`)
}

func TestMappingTableRejectsAmbiguity(t *testing.T) {
	bad := []byte(`schema: 1
version: x
targets: {v1.41: {}}
dialects:
  - name: a
    attributes:
      foo.bar: {to: gen_ai.request.model}
  - name: b
    attributes:
      foo.bar: {to: gen_ai.response.model}
`)
	_, err := compileTable(bad, TargetV141, nil)
	assert.ErrorContains(t, err, `key "foo.bar" is defined by dialects a and b`)
	_, err = compileTable([]byte("schema: 2\n"), TargetV141, nil)
	assert.ErrorContains(t, err, "schema 2")
	_, err = compileTable([]byte("schema: 1\ntargets: {v1.41: {}}\ndialects: [{name: a, attributes: {x.y: {type: float}}}]\n"), TargetV141, nil)
	assert.ErrorContains(t, err, `unknown type "float"`)
}
