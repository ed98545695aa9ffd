package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-llm/otelcol-llm/internal/selftel"
	"github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver/internal/metadata"
)

// Outcomes of an event delivered by the NVML event set.
const (
	outcomeEmitted    = "emitted"     // turned into a log record the logs pipeline accepted
	outcomeRefused    = "refused"     // the logs pipeline returned an error; the record is lost
	outcomeNoPipeline = "no_pipeline" // counted in the metrics, no logs pipeline to send it to
)

// telemetry is the receiver's self-observability on its TelemetrySettings
// meter. Every NVML call that fails or is skipped, every event and every
// initialization attempt is counted.
type telemetry struct {
	callsFailed      metric.Int64Counter
	callsUnsupported metric.Int64Counter
	events           metric.Int64Counter
	eventWaitErrors  metric.Int64Counter
	inits            metric.Int64Counter
	podResourcesErrs metric.Int64Counter
	devices          metric.Int64Gauge
	scrapeDuration   metric.Float64Histogram
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b := selftel.New(set, metadata.ScopeName)
	t := &telemetry{
		callsFailed: b.Counter("otelcol_nvidia_gpu_nvml_calls_failed", "{call}",
			"NVML calls that failed during a scrape; the metric points they feed are missing from that scrape. By call and reason (the NVML return code)."),
		callsUnsupported: b.Counter("otelcol_nvidia_gpu_nvml_calls_unsupported", "{call}",
			"NVML calls a device does not support; each is detected once per device and skipped from then on. By call."),
		events: b.Counter("otelcol_nvidia_gpu_events", "{event}",
			"Events delivered by the NVML event set, by event type and outcome (emitted, refused, no_pipeline)."),
		eventWaitErrors: b.Counter("otelcol_nvidia_gpu_event_wait_errors", "{error}",
			"Failed waits on the NVML event set, by reason (the NVML return code)."),
		inits: b.Counter("otelcol_nvidia_gpu_init_attempts", "{attempt}",
			"NVML initialization attempts, by outcome (ok, or the reason the receiver stays idle)."),
		podResourcesErrs: b.Counter("otelcol_nvidia_gpu_pod_resources_errors", "{error}",
			"Failed kubelet pod-resources List calls; that scrape's points carry no pod names. By reason (the gRPC status code)."),
	}
	t.devices = b.Gauge("otelcol_nvidia_gpu_devices", "{device}",
		"GPUs the receiver is scraping; 0 while it is idle because NVML or a GPU is missing.")
	t.scrapeDuration = b.Histogram("otelcol_nvidia_gpu_scrape_duration", "s",
		"Time to scrape one GPU (all NVML calls for it), by hw.id.",
		0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
	return t, b.Err()
}

func (t *telemetry) callFailed(call, reason string) {
	t.callsFailed.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("call", call), attribute.String("reason", reason)))
}

func (t *telemetry) callUnsupported(call string) {
	t.callsUnsupported.Add(context.Background(), 1, metric.WithAttributes(attribute.String("call", call)))
}

func (t *telemetry) event(typ, outcome string) {
	t.events.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("type", typ), attribute.String("outcome", outcome)))
}

func (t *telemetry) eventWaitError(reason string) {
	t.eventWaitErrors.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
}

func (t *telemetry) initAttempt(outcome string) {
	t.inits.Add(context.Background(), 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}
