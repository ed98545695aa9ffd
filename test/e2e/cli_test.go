//go:build e2e

package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// builderManifest is the part of builder-config.yaml the tests compare with
// what the binary reports.
type builderManifest struct {
	Receivers  []builderModule `yaml:"receivers"`
	Processors []builderModule `yaml:"processors"`
	Exporters  []builderModule `yaml:"exporters"`
	Connectors []builderModule `yaml:"connectors"`
	Extensions []builderModule `yaml:"extensions"`
	Providers  []builderModule `yaml:"providers"`
}

type builderModule struct {
	GoMod string `yaml:"gomod"`
}

// componentsOutput is what `otelcol-llm components` prints.
type componentsOutput struct {
	Receivers  []listedComponent `yaml:"receivers"`
	Processors []listedComponent `yaml:"processors"`
	Exporters  []listedComponent `yaml:"exporters"`
	Connectors []listedComponent `yaml:"connectors"`
	Extensions []listedComponent `yaml:"extensions"`
	Providers  []listedComponent `yaml:"providers"`
}

type listedComponent struct {
	Name   string `yaml:"name"`
	Scheme string `yaml:"scheme"`
	Module string `yaml:"module"`
}

func modulesOf(entries []builderModule) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.GoMod)
	}
	sort.Strings(out)
	return out
}

func listedModules(entries []listedComponent) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Module)
	}
	sort.Strings(out)
	return out
}

// TestComponentsMatchManifest checks that every component the manifest names
// is in the binary, and nothing else: one listed component per manifest entry
// of each kind, from the same module at the same version.
func TestComponentsMatchManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "builder-config.yaml"))
	require.NoError(t, err)
	var manifest builderManifest
	require.NoError(t, yaml.Unmarshal(raw, &manifest))

	out, code := runBinary(t, 30*time.Second, "components")
	require.Equal(t, 0, code, out)
	var listed componentsOutput
	require.NoError(t, yaml.Unmarshal([]byte(out), &listed), out)

	kinds := []struct {
		kind     string
		manifest []builderModule
		listed   []listedComponent
	}{
		{"receivers", manifest.Receivers, listed.Receivers},
		{"processors", manifest.Processors, listed.Processors},
		{"exporters", manifest.Exporters, listed.Exporters},
		{"connectors", manifest.Connectors, listed.Connectors},
		{"extensions", manifest.Extensions, listed.Extensions},
		{"providers", manifest.Providers, listed.Providers},
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			require.NotEmpty(t, k.manifest)
			assert.Equal(t, modulesOf(k.manifest), listedModules(k.listed))
		})
	}

	// The component types users write in their configs.
	names := map[string]bool{}
	for _, group := range [][]listedComponent{listed.Receivers, listed.Processors, listed.Exporters, listed.Connectors, listed.Extensions} {
		for _, c := range group {
			names[c.Name] = true
		}
	}
	for _, want := range []string{
		"otlp", "prometheus", "file_log",
		"memory_limiter", "batch", "resource", "redaction", "probabilistic_sampler", "groupbytrace",
		"debug", "otlp_grpc", "otlp_http", "prometheus_remote_write",
		"span_metrics", "forward",
		"health_check", "pprof", "zpages", "file_storage",
		// ours
		"llm_loadgen", "nvidia_gpu", "inference_log", "llm_semconv", "span_guard", "llm_metrics", "load_report", "mock_llm",
		"tee", "spillover",
	} {
		assert.True(t, names[want], "component type %q is not in the binary", want)
	}
	schemes := map[string]bool{}
	for _, p := range listed.Providers {
		schemes[p.Scheme] = true
	}
	for _, want := range []string{"env", "file", "http", "https", "yaml", "builtin"} {
		assert.True(t, schemes[want], "config provider scheme %q is not in the binary", want)
	}
}

// TestValidateConfigs runs `validate` on every shipped configuration, from its
// file and, for the compiled-in copies, through the builtin provider.
func TestValidateConfigs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "configs", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			out, code := runBinary(t, 30*time.Second, "validate", "--config", "file:"+f)
			assert.Equal(t, 0, code, out)
			out, code = runBinary(t, 30*time.Second, "validate", "--config", "builtin:"+name)
			assert.Equal(t, 0, code, out)
		})
	}
}

// TestValidateRejectsInvalidConfigs runs `validate` on each deliberately
// broken config under testdata/invalid. Each file states, in `# want:` lines,
// the text the error must contain: the component and the field at fault.
func TestValidateRejectsInvalidConfigs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "invalid", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			wants := wantLines(t, f)
			require.NotEmpty(t, wants, "%s has no `# want:` line", f)
			out, code := runBinary(t, 30*time.Second, "validate", "--config", "file:"+f)
			assert.NotEqual(t, 0, code, "validate accepted a broken config:\n%s", out)
			for _, w := range wants {
				assert.Contains(t, out, w)
			}
		})
	}
}

func TestValidateUnknownBuiltin(t *testing.T) {
	out, code := runBinary(t, 30*time.Second, "validate", "--config", "builtin:no-such-config")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out, `no builtin config named "no-such-config"; available: `)
	assert.Contains(t, out, "default")
}

func wantLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var wants []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if w, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "# want:"); ok {
			wants = append(wants, strings.TrimSpace(w))
		}
	}
	require.NoError(t, s.Err())
	return wants
}
