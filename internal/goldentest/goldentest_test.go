package goldentest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that records a failure instead of stopping the
// test, so that the helper's failing path can be checked.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { panic(r) }

func check(tb *recorder, path string, got []byte) {
	defer func() {
		if p := recover(); p != nil && p != tb {
			panic(p)
		}
	}()
	Bytes(tb, path, got)
}

func TestBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "golden.txt")
	missing := &recorder{TB: t}
	check(missing, path, []byte("x"))
	require.True(t, missing.failed, "a missing golden file fails")

	*update = true
	check(&recorder{TB: t}, path, []byte("v1\n"))
	*update = false
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "v1\n", string(raw), "-update writes the file, creating its folder")

	same := &recorder{TB: t}
	check(same, path, []byte("v1\n"))
	require.False(t, same.failed)
	differs := &recorder{TB: t}
	check(differs, path, []byte("v2\n"))
	require.True(t, differs.failed, "a different output fails")
	require.False(t, Updating(), "-update is off by default")
}
