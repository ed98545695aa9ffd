package builtinprovider

import (
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.uber.org/goleak"

	otelcolllm "github.com/otelcol-llm/otelcol-llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestProvider() confmap.Provider {
	return NewFactory().Create(confmaptest.NewNopProviderSettings())
}

func TestValidateProviderScheme(t *testing.T) {
	assert.NoError(t, confmaptest.ValidateProviderScheme(newTestProvider()))
}

// TestRetrieveServesShippedConfigs checks that every builtin name serves the
// same configuration as its file under configs.
func TestRetrieveServesShippedConfigs(t *testing.T) {
	names := Names(otelcolllm.Configs, otelcolllm.ConfigDir)
	require.Contains(t, names, "default")
	p := newTestProvider()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ret, err := p.Retrieve(t.Context(), "builtin:"+name, nil)
			require.NoError(t, err)
			got, err := ret.AsConf()
			require.NoError(t, err)
			want, err := confmaptest.LoadConf(filepath.Join("..", "..", otelcolllm.ConfigDir, name+".yaml"))
			require.NoError(t, err)
			assert.Equal(t, want.ToStringMap(), got.ToStringMap())
			assert.True(t, got.IsSet("service::pipelines"), "a shipped config defines pipelines")
		})
	}
	require.NoError(t, p.Shutdown(t.Context()))
}

func TestRetrieveAcceptsYAMLSuffix(t *testing.T) {
	ret, err := newTestProvider().Retrieve(t.Context(), "builtin:default.yaml", nil)
	require.NoError(t, err)
	conf, err := ret.AsConf()
	require.NoError(t, err)
	assert.True(t, conf.IsSet("receivers::llm_loadgen"))
}

func TestRetrieveErrors(t *testing.T) {
	tests := []struct {
		uri     string
		wantErr string
	}{
		{uri: "file:/etc/passwd", wantErr: `"file:/etc/passwd" uri is not supported by "builtin" provider`},
		{uri: "builtin:nope", wantErr: `no builtin config named "nope"; available: `},
		{uri: "builtin:", wantErr: `builtin config name "" is invalid`},
		{uri: "builtin:../go", wantErr: `builtin config name "../go" is invalid`},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			_, err := newTestProvider().Retrieve(t.Context(), tt.uri, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	// The error lists what exists, so a typo is easy to fix.
	_, err := newTestProvider().Retrieve(t.Context(), "builtin:defualt", nil)
	assert.ErrorContains(t, err, "default")
}

func TestRetrieveMalformedYAML(t *testing.T) {
	p := &provider{files: fstest.MapFS{"c/bad.yaml": {Data: []byte("a: [1, 2\n")}}, dir: "c"}
	_, err := p.Retrieve(t.Context(), "builtin:bad", nil)
	assert.ErrorContains(t, err, `builtin config "bad" is not a YAML mapping`)
}

func TestNames(t *testing.T) {
	files := fstest.MapFS{
		"c/b.yaml":     {Data: []byte("x: 1")},
		"c/a.yaml":     {Data: []byte("x: 1")},
		"c/notes.txt":  {Data: []byte("x")},
		"c/sub/d.yaml": {Data: []byte("x: 1")},
		"other/e.yaml": {Data: []byte("x: 1")},
	}
	assert.Equal(t, []string{"a", "b"}, Names(files, "c"))
	assert.Empty(t, Names(files, "missing"))
}

func TestListNamesEveryConfig(t *testing.T) {
	_, err := newTestProvider().Retrieve(t.Context(), "builtin:list", nil)
	require.Error(t, err)
	msg := err.Error()
	for _, n := range Names(otelcolllm.Configs, otelcolllm.ConfigDir) {
		require.Contains(t, msg, "\n  "+n+" ", "builtin:list names %s", n)
	}
	require.Contains(t, msg, "default          otelcol-llm's main job on a default config")
}
