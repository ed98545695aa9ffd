package metadatatest // import "github.com/otelcol-llm/otelcol-llm/internal/metadatatest"

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
)

// StartShutdown starts every component on a no-op host, in order, then
// shuts them all down, in order: for components that create instruments
// when they start rather than when they are created.
func StartShutdown(t testing.TB, comps ...component.Component) {
	t.Helper()
	for _, c := range comps {
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	}
	for _, c := range comps {
		require.NoError(t, c.Shutdown(context.Background()))
	}
}
