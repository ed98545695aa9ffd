// Package goldentest is the golden-file mechanism of every test in the
// repository, with one flag: `go test ./... -update` (or one package's
// tests with -update) rewrites the golden files instead of comparing with
// them. Import it from _test.go files only: it registers the flag.
package goldentest // import "github.com/otelcol-llm/otelcol-llm/internal/goldentest"

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ instead of comparing with them")

// Updating reports whether the tests run with -update, for golden files
// written by other means (e.g. golden.WriteTraces of pdata).
func Updating() bool { return *update }

// Bytes compares got with the golden file at path; with -update it writes
// got there first (creating the folder).
func Bytes(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test -run '%s' -update", t.Name())
	require.Equal(t, string(want), string(got), "golden file %s differs (go test -update rewrites it after an intended change)", path)
}
