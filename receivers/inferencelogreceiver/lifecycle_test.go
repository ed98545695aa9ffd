package inferencelogreceiver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

func TestShutdownWithoutStart(t *testing.T) {
	cfg := testConfig("vllm", filepath.Join(t.TempDir(), "*.log"))
	f := NewFactory()
	lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lr.Shutdown(context.Background()))
	require.NoError(t, lr.Shutdown(context.Background()))
}

func TestStartShutdownTwice(t *testing.T) {
	for _, name := range append(presetNames, presetNone) {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				cfg := testConfig(name, filepath.Join(t.TempDir(), "*.log"))
				s := startReceiver(t, cfg, componenttest.NewNopHost())
				// A second Start (both pipelines start the shared receiver) is harmless.
				require.NoError(t, s.lr.Start(context.Background(), componenttest.NewNopHost()))
				s.stop(t)
			}
		})
	}
}

// TestSharedBetweenSignals checks the logs and metrics pipelines share one
// tailer: a line is read once and shows up in both outputs.
func TestSharedBetweenSignals(t *testing.T) {
	cfg := testConfig("vllm", testdataPath("logs", "vllm.log"))
	f := NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	lr, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	mr, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.Same(t, lr, mr)
	require.NoError(t, lr.Shutdown(context.Background()))
	// After shutdown the configuration gets a fresh receiver.
	lr2, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NotSame(t, lr, lr2)
	require.NoError(t, lr2.Shutdown(context.Background()))
}

func TestStartFailsOnMissingStorage(t *testing.T) {
	cfg := testConfig("vllm", filepath.Join(t.TempDir(), "*.log"))
	id := storageID()
	cfg.StorageID = &id
	f := NewFactory()
	lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	err = lr.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "storage")
	require.NoError(t, lr.Shutdown(context.Background()))
}
