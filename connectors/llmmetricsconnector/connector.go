package llmmetricsconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/llmmetricsconnector"

import (
	"context"
	"sync"
	"time"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// llmMetrics is the traces → metrics connector.
type llmMetrics struct {
	cfg    *Config
	logger *zap.Logger
	next   consumer.Metrics
	tel    *telemetry
	now    func() time.Time

	mu        sync.Mutex // guards everything below
	agg       *aggregator
	ext       extractor
	facts     spanFacts
	resKeyBuf []byte
	lastFlush time.Time

	lifecycle sync.Mutex
	stop      chan struct{}
	done      chan struct{}
	shutdown  bool
}

var _ connector.Traces = (*llmMetrics)(nil)

func newConnector(set connector.Settings, cfg *Config, next consumer.Metrics) (*llmMetrics, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	hf := histogramFactory{exponential: cfg.Histogram.Type == histogramExponential}
	if hf.exponential {
		hf.expoCfg = structure.NewConfig(structure.WithMaxSize(cfg.Histogram.MaxSize))
	}
	extraIndex := make(map[string]int, len(cfg.Dimensions))
	for i, d := range cfg.Dimensions {
		extraIndex[d.Name] = i
	}
	c := &llmMetrics{
		cfg:       cfg,
		logger:    set.Logger,
		next:      next,
		tel:       tel,
		now:       time.Now,
		agg:       newAggregator(cfg, hf),
		ext:       extractor{extraIndex: extraIndex, numExtras: len(extraIndex)},
		resKeyBuf: make([]byte, 0, 128),
	}
	c.lastFlush = c.now()
	return c, nil
}

func (c *llmMetrics) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start begins the periodic flush.
func (c *llmMetrics) Start(context.Context, component.Host) error {
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.stop != nil || c.shutdown {
		return nil
	}
	c.mu.Lock()
	c.lastFlush = c.now() // the first concurrency window starts now
	c.mu.Unlock()
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.flushLoop(c.stop, c.done)
	return nil
}

func (c *llmMetrics) flushLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ticker := time.NewTicker(c.cfg.MetricsFlushInterval)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
			c.flush(context.Background())
		}
	}
}

// Shutdown stops the flush loop and sends what is still aggregated.
func (c *llmMetrics) Shutdown(ctx context.Context) error {
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.shutdown {
		return nil
	}
	c.shutdown = true
	if c.stop == nil {
		return nil
	}
	close(c.stop)
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.flush(ctx)
	return nil
}

// ConsumeTraces aggregates the GenAI spans of td; nothing is passed on until
// the next flush.
func (c *llmMetrics) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var counts batchCounts
	c.mu.Lock()
	c.agg.counts, c.ext.counts = &counts, &counts
	now := c.now()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		resAttrs := rs.Resource().Attributes()
		resKey := c.resourceKey(resAttrs)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				c.consumeSpan(spans.At(k), resKey, resAttrs, now, &counts)
			}
		}
	}
	c.agg.counts, c.ext.counts = nil, nil
	c.mu.Unlock()
	c.tel.report(ctx, &counts)
	return nil
}

func (c *llmMetrics) consumeSpan(span ptrace.Span, resKey string, resAttrs pcommon.Map, now time.Time, counts *batchCounts) {
	f := &c.facts
	c.ext.read(span, f)
	if f.dims[dimOperation] == "" {
		counts.spans[spanNotGenAI]++
		return
	}
	start, end := span.StartTimestamp(), span.EndTimestamp()
	if end < start {
		counts.spans[spanInvalid]++
		return
	}
	f.duration = float64(end-start) / 1e9
	if c.cfg.Exemplars.Enabled {
		f.traceID, f.spanID, f.end = span.TraceID(), span.SpanID(), end
	}
	overflow, points := c.agg.record(resKey, resAttrs, f, now)
	if overflow {
		counts.spans[spanOverflow]++
		counts.overflowPts += int64(points)
		return
	}
	counts.spans[spanRecorded]++
}

// resourceKey identifies a resource by the configured attributes only.
func (c *llmMetrics) resourceKey(attrs pcommon.Map) string {
	k := c.resKeyBuf[:0]
	for _, name := range c.cfg.ResourceAttributes {
		if v, ok := attrs.Get(name); ok {
			k = append(k, 1)
			k = append(k, str(v)...)
		}
		k = append(k, 0)
	}
	c.resKeyBuf = k
	if len(c.cfg.ResourceAttributes) == 0 {
		return ""
	}
	return string(k)
}

// flush sends the aggregated metrics to the next consumer.
func (c *llmMetrics) flush(ctx context.Context) {
	delta := c.cfg.temporality() == pmetric.AggregationTemporalityDelta
	c.mu.Lock()
	now := c.now()
	md, points := c.agg.build(now, c.lastFlush, c.cfg.temporality())
	expired := c.agg.afterFlush(now, delta)
	c.lastFlush = now
	held := len(c.agg.series)
	c.mu.Unlock()

	c.tel.series.Record(ctx, int64(held))
	if expired > 0 {
		c.tel.expiredSeries.Add(ctx, int64(expired))
	}
	if points == 0 {
		return
	}
	err := c.next.ConsumeMetrics(ctx, md)
	lost := 0
	if delta {
		lost = points
	}
	c.tel.flushed(ctx, lost, err)
	if err != nil {
		c.logger.Warn("Failed to send GenAI metrics", zap.Int("points", points), zap.Bool("lost", delta), zap.Error(err))
	}
}
