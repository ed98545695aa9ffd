package componenttestkit

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

type exampleConfig struct {
	Size int `mapstructure:"size"`
}

func (c *exampleConfig) Validate() error {
	if c.Size < 0 {
		return errors.New("size: must be >= 0")
	}
	return nil
}

var exampleType = component.MustNewType("example")

func exampleCases() []ConfigCase {
	return []ConfigCase{
		{ID: component.NewID(exampleType), Want: &exampleConfig{Size: 1}},
		{ID: component.NewIDWithName(exampleType, "named"), Want: &exampleConfig{Size: 3}},
		{ID: component.NewIDWithName(exampleType, "bad"), WantErr: []string{"size:", ">= 0"}},
	}
}

func TestCheckConfigs(t *testing.T) {
	cases := append(exampleCases(), ConfigCase{ID: component.NewIDWithName(exampleType, "forgotten"), Want: &exampleConfig{Size: 1}})
	CheckConfigs(t, filepath.Join("testdata", "config.yaml"), func() *exampleConfig { return &exampleConfig{Size: 1} }, cases)
}

func TestUncoveredEntries(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []string{"example/forgotten"}, uncovered(cm, exampleCases()), "an entry with no case is reported")
}

// counting is a component that counts the calls of all its instances.
type counting struct {
	starts, shutdowns *int
}

func (c counting) Start(context.Context, component.Host) error { *c.starts++; return nil }
func (c counting) Shutdown(context.Context) error              { *c.shutdowns++; return nil }

func TestLifecycle(t *testing.T) {
	starts, shutdowns, created := 0, 0, 0
	Lifecycle(t, func(*testing.T) component.Component {
		created++
		return counting{starts: &starts, shutdowns: &shutdowns}
	})
	assert.Equal(t, 3, created, "one instance that never starts, two that do")
	assert.Equal(t, 2, starts)
	assert.Equal(t, 5, shutdowns, "one without Start, two per started instance")
}
