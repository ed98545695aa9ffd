package mockllmextension

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension/internal/metadata"
)

var bg = context.Background()

func nopSettings() extension.Settings {
	return extension.Settings{
		ID:                component.NewID(metadata.Type),
		TelemetrySettings: componenttest.NewNopTelemetrySettings(),
		BuildInfo:         component.NewDefaultBuildInfo(),
	}
}

// create makes the extension for cfg through the factory.
func create(t *testing.T, cfg *Config, set extension.Settings) *mockLLM {
	t.Helper()
	ext, err := NewFactory().Create(bg, set, cfg)
	require.NoError(t, err)
	return ext.(*mockLLM)
}

func testConfig() *Config {
	cfg := createDefaultConfig()
	cfg.Endpoint = "127.0.0.1:0"
	return cfg
}

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, "mock_llm", f.Type().String())
	assert.Equal(t, metadata.ExtensionStability, f.Stability())
}

func TestLifecycle(t *testing.T) {
	// Shutdown without Start, twice.
	ext := create(t, testConfig(), nopSettings())
	require.NoError(t, ext.Shutdown(bg))
	require.NoError(t, ext.Shutdown(bg))

	// Start and shut down twice: a fresh extension, then the same one again.
	for i := 0; i < 2; i++ {
		e := create(t, testConfig(), nopSettings())
		for j := 0; j < 2; j++ {
			require.NoError(t, e.Start(bg, componenttest.NewNopHost()))
			assert.NotEmpty(t, e.Addr())
			require.Error(t, e.Start(bg, componenttest.NewNopHost()), "a second Start while running")
			require.NoError(t, e.Shutdown(bg))
			assert.Empty(t, e.Addr())
			require.NoError(t, e.Shutdown(bg))
		}
	}
}

func TestStartFailsWhenThePortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cfg := testConfig()
	cfg.Endpoint = ln.Addr().String()
	e := create(t, cfg, nopSettings())
	err = e.Start(bg, componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "endpoint:")
	assert.Contains(t, err.Error(), ln.Addr().String())
	require.NoError(t, e.Shutdown(bg))
}
