package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
)

// semconvProcessor normalizes traces and logs in place.
type semconvProcessor struct {
	n   *normalizer
	tel *telemetry
}

func newSemconvProcessor(set processor.Settings, cfg *Config) (*semconvProcessor, error) {
	n, err := newNormalizer(cfg)
	if err != nil {
		return nil, err
	}
	dialects := make([]string, len(n.t.dialects))
	for i, d := range n.t.dialects {
		dialects[i] = d.name
	}
	patterns := make([]string, 0, len(n.policy.patterns))
	for _, p := range n.policy.patterns {
		patterns = append(patterns, p.name)
	}
	tel, err := newTelemetry(set.TelemetrySettings, dialects, patterns)
	if err != nil {
		return nil, err
	}
	return &semconvProcessor{n: n, tel: tel}, nil
}

func (p *semconvProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	st := p.tel.get()
	s := p.n.getScratch()
	defer p.n.putScratch(s)
	var it item
	it.isSpan = true
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				it.span = sp
				it.attrs = sp.Attributes()
				it.start = sp.StartTimestamp()
				it.name = sp.Name()
				p.n.processWith(&it, st, s)
				p.processEvents(sp, st, s)
			}
		}
	}
	p.tel.flush(ctx, st, false)
	return td, nil
}

// processEvents normalizes the attributes of the span events that remain
// (exceptions, evaluation results, content events of foreign dialects).
func (p *semconvProcessor) processEvents(sp ptrace.Span, st *batchStats, s *scratch) {
	evs := sp.Events()
	if evs.Len() == 0 {
		return
	}
	var it item
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		if ev.Attributes().Len() == 0 {
			continue
		}
		it.attrs = ev.Attributes()
		it.start = sp.StartTimestamp()
		p.n.processEventAttrs(&it, st, s)
	}
}

func (p *semconvProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	st := p.tel.get()
	s := p.n.getScratch()
	defer p.n.putScratch(s)
	var it item
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				it.attrs = lr.Attributes()
				it.start = 0
				p.n.processWith(&it, st, s)
			}
		}
	}
	p.tel.flush(ctx, st, true)
	return ld, nil
}
