package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/pipeline"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"
	"github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver/internal/metadata"
)

// receivers shares one receiver between the logs and metrics pipelines that
// name the same configuration, so each file is tailed once. Both signals get
// the same reference (internal/sharedcomponent): the first Shutdown stops
// tailing.
var receivers = sharedcomponent.NewMap[*Config, *inferenceLogReceiver]()

func sharedReceiver(set receiver.Settings, cfg *Config) (*sharedcomponent.Component[*inferenceLogReceiver], error) {
	return receivers.LoadOrStore(cfg, func() (*inferenceLogReceiver, error) { return newReceiver(set, cfg) })
}

type inferenceLogReceiver struct {
	set     receiver.Settings
	cfg     *Config
	preset  *preset
	pipe    *pipeline.DirectedPipeline
	obs     *receiverhelper.ObsReport
	tel     *telemetry
	metrics *metricsBuilder

	mu          sync.RWMutex
	nextLogs    consumer.Logs
	nextMetrics consumer.Metrics

	storageClient storage.Client
}

func newReceiver(set receiver.Settings, cfg *Config) (*inferenceLogReceiver, error) {
	r := &inferenceLogReceiver{set: set, cfg: cfg}
	presetName := cfg.Preset
	if presetName != presetNone {
		p, err := loadPreset(presetName, presetParams{Location: cfg.Timezone})
		if err != nil {
			return nil, err
		}
		r.preset = p
		r.metrics = newMetricsBuilder(p, cfg.Metrics.Namespace, time.Now(), set.BuildInfo.Version)
	}
	var err error
	if r.tel, err = newTelemetry(set.TelemetrySettings, presetName); err != nil {
		return nil, err
	}
	if r.obs, err = receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "file",
		ReceiverCreateSettings: set,
	}); err != nil {
		return nil, err
	}
	ops := pipelineOperators(cfg, r.preset)
	emitter := helper.NewBatchingLogEmitter(set.TelemetrySettings, r.consumeEntries)
	if r.pipe, err = (pipeline.Config{Operators: ops, DefaultOutput: emitter}).Build(set.TelemetrySettings); err != nil {
		return nil, fmt.Errorf("building the operator pipeline: %w", err)
	}
	return r, nil
}

// pipelineOperators are the operators of the pipeline: the file input, the
// preset's (unwrap, fold, classify, its parsers, the field table) when there
// is one, then the user's.
func pipelineOperators(cfg *Config, p *preset) []operator.Config {
	ops := []operator.Config{operator.NewConfig(&cfg.InputConfig)}
	if p != nil {
		if cfg.Unwrap {
			ops = append(ops, newUnwrapConfig())
		}
		if p.fold != nil {
			ops = append(ops, *p.fold)
		}
		ops = append(ops, newClassifyConfig(p))
		ops = append(ops, p.operators...)
		ops = append(ops, newFieldsConfig(p))
	}
	return append(ops, cfg.Operators...)
}

func (r *inferenceLogReceiver) setLogs(next consumer.Logs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextLogs = next
}

func (r *inferenceLogReceiver) setMetrics(next consumer.Metrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextMetrics = next
}

// Start starts tailing; the registry calls it once for both signals.
func (r *inferenceLogReceiver) Start(ctx context.Context, host component.Host) error {
	client, err := adapter.GetStorageClient(ctx, host, r.cfg.StorageID, r.set.ID)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if err = r.pipe.Start(client); err != nil {
		_ = client.Close(ctx)
		return fmt.Errorf("starting the operator pipeline: %w", err)
	}
	r.storageClient = client
	return nil
}

// Shutdown stops tailing, flushes what was read and saves the offsets; the
// registry calls it once, and only after a successful Start.
func (r *inferenceLogReceiver) Shutdown(ctx context.Context) error {
	err := r.pipe.Stop()
	if r.storageClient != nil {
		err = errors.Join(err, r.storageClient.Close(ctx))
	}
	return err
}

// consumeEntries receives the entries at the end of the operator pipeline.
func (r *inferenceLogReceiver) consumeEntries(ctx context.Context, entries []*entry.Entry) {
	if len(entries) == 0 {
		return
	}
	parseErrors := 0
	for _, e := range entries {
		if _, bad := e.Attributes[attrParseError]; bad {
			parseErrors++
		}
	}
	r.tel.recordsRead(ctx, len(entries)-parseErrors, parseErrors)

	r.mu.RLock()
	nextLogs, nextMetrics := r.nextLogs, r.nextMetrics
	r.mu.RUnlock()

	if nextMetrics != nil && r.metrics != nil {
		r.sendMetrics(ctx, nextMetrics, entries)
	}
	if nextLogs == nil {
		for _, e := range entries {
			entry.Put(e)
		}
		return
	}
	r.sendLogs(ctx, nextLogs, entries)
}

// sendMetrics sends the metrics of the entries' stats lines, if any.
func (r *inferenceLogReceiver) sendMetrics(ctx context.Context, next consumer.Metrics, entries []*entry.Entry) {
	md, n := r.metrics.build(entries)
	if n == 0 {
		return
	}
	mctx := r.obs.StartMetricsOp(ctx)
	err := next.ConsumeMetrics(ctx, md)
	r.obs.EndMetricsOp(mctx, r.cfg.Preset, n, err)
	r.tel.metricPoints(ctx, n, err)
	if err != nil {
		r.set.Logger.Error("Metrics from stats lines refused by the next consumer", zap.Int("points", n), zap.Error(err))
	}
}

// sendLogs sends the entries as log records, giving the entries back to
// their pool.
func (r *inferenceLogReceiver) sendLogs(ctx context.Context, next consumer.Logs, entries []*entry.Entry) {
	ld := adapter.ConvertEntries(entries, metadata.ScopeName, r.set.BuildInfo.Version)
	for _, e := range entries {
		entry.Put(e)
	}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			if sls.At(j).Scope().Name() == "" {
				sls.At(j).Scope().SetName(metadata.ScopeName)
				sls.At(j).Scope().SetVersion(r.set.BuildInfo.Version)
			}
		}
	}
	n := ld.LogRecordCount()
	lctx := r.obs.StartLogsOp(ctx)
	err := next.ConsumeLogs(ctx, ld)
	r.obs.EndLogsOp(lctx, r.cfg.Preset, n, err)
	if err != nil {
		r.tel.logsRefused(ctx, n)
		r.set.Logger.Error("Log records refused by the next consumer", zap.Int("records", n), zap.Error(err))
	}
}
