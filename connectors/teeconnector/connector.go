package teeconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/teeconnector"

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

type tee struct {
	component.StartFunc
	component.ShutdownFunc

	readers []reader
	owner   consumer.Traces
	logger  *zap.Logger
	tel     *telemetry
	warned  atomic.Bool
}

func newConnector(set connector.Settings, readers []reader, owner consumer.Traces) (*tee, error) {
	tel, err := newTelemetry(set.TelemetrySettings, readers)
	if err != nil {
		return nil, err
	}
	return &tee{readers: readers, owner: owner, logger: set.Logger, tel: tel}, nil
}

// Capabilities: the owner pipeline gets the batch itself and may modify it.
// (The collector derives the connector's capabilities from its pipelines
// too; this states the same.)
func (t *tee) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// ConsumeTraces hands td to every reader in turn, then to the owner. The
// owner's answer is the connector's: a reader's refusal is counted and
// logged, not returned, because the caller would resend the batch and the
// owner, which already took it, would forward it twice.
//
// The owner gets td itself unless it is read-only: the caller marked it so,
// or a reader pipeline did (the collector marks a batch read-only when it
// hands it to more than one consumer that only reads). Then the owner gets
// a copy, counted in otelcol_tee_copied_batches.
func (t *tee) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	n := int64(td.SpanCount())
	for i := range t.readers {
		r := &t.readers[i]
		if err := r.next.ConsumeTraces(ctx, td); err != nil {
			t.tel.readerRefused.Add(ctx, n, t.tel.byReader[i])
			if !t.warned.Swap(true) {
				t.logger.Warn("a reader pipeline refused a batch; the owner still gets it "+
					"(later refusals are counted in otelcol_tee_reader_refused_spans, logged at debug level)",
					zap.String("pipeline", r.id.String()), zap.Int64("spans", n), zap.Error(err))
			} else {
				t.logger.Debug("a reader pipeline refused a batch",
					zap.String("pipeline", r.id.String()), zap.Int64("spans", n), zap.Error(err))
			}
		}
	}
	if td.IsReadOnly() {
		t.tel.copied.Add(ctx, 1)
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		td = cp
	}
	return t.owner.ConsumeTraces(ctx, td)
}
