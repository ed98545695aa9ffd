// Package builtinprovider is a confmap provider that serves the configurations
// compiled into the otelcol-llm binary. "--config builtin:default" starts the
// collector on the default pipeline without any file on disk; the other names
// are the pipeline configurations shipped under configs.
package builtinprovider // import "github.com/otelcol-llm/otelcol-llm/providers/builtinprovider"

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"

	otelcolllm "github.com/otelcol-llm/otelcol-llm"
)

// Scheme is the URI scheme of the provider: "builtin:<name>".
const Scheme = "builtin"

type provider struct {
	files fs.FS
	dir   string
}

// NewFactory returns the factory of the builtin provider.
func NewFactory() confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider {
		return &provider{files: otelcolllm.Configs, dir: otelcolllm.ConfigDir}
	})
}

func (p *provider) Retrieve(_ context.Context, uri string, _ confmap.WatcherFunc) (*confmap.Retrieved, error) {
	name, ok := strings.CutPrefix(uri, Scheme+":")
	if !ok {
		return nil, fmt.Errorf("%q uri is not supported by %q provider", uri, Scheme)
	}
	name = strings.TrimSuffix(name, ".yaml")
	if name == ListName {
		return nil, fmt.Errorf("builtin configurations (start one with --config builtin:<name>):\n%s", Describe(p.files, p.dir))
	}
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("builtin config name %q is invalid; available: %s", name, strings.Join(Names(p.files, p.dir), ", "))
	}
	raw, err := fs.ReadFile(p.files, path.Join(p.dir, name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("no builtin config named %q; available: %s", name, strings.Join(Names(p.files, p.dir), ", "))
	}
	// confmap treats bytes that are not YAML as a plain string; a builtin
	// config must be a mapping, so say so here rather than later.
	var probe map[string]any
	if err := yaml.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("builtin config %q is not a YAML mapping: %w", name, err)
	}
	return confmap.NewRetrievedFromYAML(raw)
}

func (*provider) Scheme() string { return Scheme }

func (*provider) Shutdown(context.Context) error { return nil }

// ListName is the name that lists the builtin configurations instead of
// loading one: "--config builtin:list". The collector can only print what a
// provider returns as an error, so the list comes as one (and the exit
// status is 1).
const ListName = "list"

// Describe lists every builtin configuration with the first line of its
// header comment, one per line.
func Describe(files fs.FS, dir string) string {
	var b strings.Builder
	for _, n := range Names(files, dir) {
		raw, _ := fs.ReadFile(files, path.Join(dir, n+".yaml"))
		first, _, _ := strings.Cut(string(raw), "\n")
		fmt.Fprintf(&b, "  %-16s %s\n", n, strings.TrimSpace(strings.TrimPrefix(first, "#")))
	}
	return strings.TrimRight(b.String(), "\n")
}

// Names lists the builtin configuration names found in dir of files, sorted.
func Names(files fs.FS, dir string) []string {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
