// Package componenttestkit holds the tests every component of the
// repository has, written once: the configuration table test over the
// component's testdata/config.yaml and the lifecycle test. Import it from
// _test.go files only.
package componenttestkit // import "github.com/otelcol-llm/otelcol-llm/internal/componenttestkit"

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// ConfigCase is one entry of a configuration file: the configuration it
// must load to (Want), or the parts its validation error must name
// (WantErr: the field, the value, the allowed values).
type ConfigCase struct {
	ID      component.ID
	Want    component.Config
	WantErr []string
}

// CheckConfigs loads each case's entry of the file at path over a fresh
// default configuration and validates it as the collector does. Every
// entry of the file must have a case, so that no configuration in it goes
// unchecked.
func CheckConfigs[C component.Config](t *testing.T, path string, newDefault func() C, cases []ConfigCase) {
	t.Helper()
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.ID.String(), func(t *testing.T) {
			cfg := newDefault()
			sub, err := cm.Sub(tc.ID.String())
			require.NoError(t, err)
			require.True(t, cm.IsSet(tc.ID.String()), "%s has no entry %q", path, tc.ID.String())
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tc.WantErr) > 0 {
				require.Error(t, err, "the configuration is invalid")
				for _, w := range tc.WantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.Want, cfg)
		})
	}
	missing := uncovered(cm, cases)
	assert.Empty(t, missing, "entries of %s without a case", path)
}

// uncovered lists the entries of cm that no case names.
func uncovered(cm *confmap.Conf, cases []ConfigCase) []string {
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.ID.String()] = true
	}
	var missing []string
	for _, k := range cm.AllKeys() {
		if id := topKey(k); !covered[id] {
			missing = append(missing, id)
			covered[id] = true
		}
	}
	sort.Strings(missing)
	return missing
}

// topKey is the first segment of a confmap key ("a::b" → "a").
func topKey(k string) string {
	for i := 0; i+1 < len(k); i++ {
		if k[i] == ':' && k[i+1] == ':' {
			return k[:i]
		}
	}
	return k
}

// Lifecycle checks what the collector may do with a component, on fresh
// instances from create: shut down one that never started; start one and
// shut it down twice; then the same again, as a restarted collector does
// with the same configuration.
func Lifecycle(t *testing.T, create func(t *testing.T) component.Component) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, create(t).Shutdown(ctx), "Shutdown without Start")
	for round := 0; round < 2; round++ {
		c := create(t)
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()), "Start (round %d)", round+1)
		require.NoError(t, c.Shutdown(ctx), "Shutdown (round %d)", round+1)
		require.NoError(t, c.Shutdown(ctx), "a second Shutdown (round %d)", round+1)
	}
}
