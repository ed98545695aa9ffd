package spilloverconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector"

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

type spillover struct {
	component.StartFunc
	component.ShutdownFunc

	primary, spill consumer.Traces
	retryAfter     time.Duration
	logger         *zap.Logger
	tel            *telemetry
	now            func() time.Time

	// spillUntil is the Unix time in nanoseconds until which batches go
	// straight to the spill pipeline; 0 while the primary takes them.
	spillUntil atomic.Int64
}

func newConnector(set connector.Settings, cfg *Config, primary, spill consumer.Traces) (*spillover, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	c := &spillover{
		primary:    primary,
		spill:      spill,
		retryAfter: cfg.RetryPrimaryAfter,
		logger:     set.Logger,
		tel:        tel,
		now:        time.Now,
	}
	tel.spilling.Record(context.Background(), 0)
	return c, nil
}

// Capabilities: the connector hands the batch on unchanged, to the spill
// pipeline only after the primary has finished with it.
func (c *spillover) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeTraces sends td to the primary pipeline unless a recent refusal
// put the connector in spill mode, and to the spill pipeline when the
// primary refuses it with a retryable error.
func (c *spillover) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	n := int64(td.SpanCount())
	now := c.now().UnixNano()
	if until := c.spillUntil.Load(); until != 0 && now < until {
		return c.toSpill(ctx, td, n, c.tel.byBackoff)
	}
	err := c.primary.ConsumeTraces(ctx, td)
	if err == nil {
		c.tel.spans.Add(ctx, n, c.tel.onPrimary)
		if c.spillUntil.Swap(0) != 0 {
			c.tel.spilling.Record(ctx, 0)
			c.logger.Info("primary pipeline takes batches again; spilling stopped")
		}
		return nil
	}
	if consumererror.IsPermanent(err) {
		c.tel.refused.Add(ctx, n, c.tel.byPermanent)
		return err
	}
	if c.spillUntil.Swap(now+c.retryAfter.Nanoseconds()) == 0 {
		c.tel.spilling.Record(ctx, 1)
		c.logger.Warn("primary pipeline refused a batch; sending batches to the spill pipeline",
			zap.Duration("retry_primary_after", c.retryAfter), zap.Int64("spans", n), zap.Error(err))
	}
	return c.toSpill(ctx, td, n, c.tel.byRefused)
}

func (c *spillover) toSpill(ctx context.Context, td ptrace.Traces, n int64, cause metric.AddOption) error {
	c.tel.spilled.Add(ctx, 1, cause)
	if err := c.spill.ConsumeTraces(ctx, td); err != nil {
		c.tel.refused.Add(ctx, n, c.tel.bySpillNo)
		return err
	}
	c.tel.spans.Add(ctx, n, c.tel.onSpill)
	return nil
}
