package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
)

type syntheticRunner struct{ l *loadgen }

func newSyntheticRunner(l *loadgen) (runner, error) { return &syntheticRunner{l: l}, nil }

func (*syntheticRunner) Start(context.Context, component.Host) error { return nil }
func (*syntheticRunner) Shutdown(context.Context) error              { return nil }
