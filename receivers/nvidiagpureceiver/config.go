package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"
)

// What the receiver does when NVML cannot be loaded, no GPU is visible or the
// driver does not match the library.
const (
	onMissingWarn = "warn" // log, report the component status, stay idle and retry
	onMissingFail = "fail" // refuse to start
)

// Config configures the nvidia_gpu receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`

	// OnMissing is warn (default) or fail.
	OnMissing string `mapstructure:"on_missing"`
	// InitRetryInterval is how often an idle receiver (on_missing: warn) tries
	// NVML again; 0 disables retries.
	InitRetryInterval time.Duration `mapstructure:"init_retry_interval"`
	// LibraryPath loads NVML from this file instead of libnvidia-ml.so.1.
	LibraryPath string `mapstructure:"library_path"`
	// Devices restricts the receiver to these GPUs, by UUID (GPU-...) or
	// index. Empty means every visible GPU.
	Devices []string `mapstructure:"devices"`
	// MIG enumerates MIG instances on MIG-enabled GPUs and reports per
	// instance metrics.
	MIG bool `mapstructure:"mig"`
	// Processes configures per-process metrics and their attribution.
	Processes ProcessesConfig `mapstructure:"processes"`
	// Kubernetes configures pod attribution from the kubelet.
	Kubernetes KubernetesConfig `mapstructure:"kubernetes"`
	// Events configures the event-set goroutine (XID and other critical
	// events).
	Events EventsConfig `mapstructure:"events"`
	// Metrics enables or disables each metric by name.
	Metrics map[string]MetricConfig `mapstructure:"metrics"`
}

// MetricConfig enables or disables one metric.
type MetricConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// ProcessesConfig configures per-process attribution.
type ProcessesConfig struct {
	// ProcRoot is where the host's /proc is mounted (in a container, mount
	// the host's /proc, e.g. at /host/proc, and run with hostPID).
	ProcRoot string `mapstructure:"proc_root"`
}

// KubernetesConfig configures device-to-pod attribution through the kubelet
// pod-resources API.
type KubernetesConfig struct {
	// PodResourcesSocket is the kubelet's pod-resources socket, usually
	// /var/lib/kubelet/pod-resources/kubelet.sock; empty disables it.
	PodResourcesSocket string `mapstructure:"pod_resources_socket"`
	// Timeout bounds one List call.
	Timeout time.Duration `mapstructure:"timeout"`
}

// EventsConfig configures NVML event delivery.
type EventsConfig struct {
	// Enabled starts the event-set goroutine.
	Enabled bool `mapstructure:"enabled"`
	// Types are the event types registered on each GPU (those a GPU does not
	// support are skipped for it).
	Types []string `mapstructure:"types"`
	// WaitTimeout bounds one blocking wait on the event set; it is also the
	// longest Shutdown waits for the goroutine.
	WaitTimeout time.Duration `mapstructure:"wait_timeout"`
}

// Validate checks the configuration; each error names the field and the
// allowed values.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.CollectionInterval <= 0 {
		errs = append(errs, fmt.Errorf("collection_interval must be positive, got %v", cfg.CollectionInterval))
	}
	switch cfg.OnMissing {
	case onMissingWarn, onMissingFail:
	default:
		errs = append(errs, fmt.Errorf("on_missing: unknown value %q, allowed values: %s, %s", cfg.OnMissing, onMissingWarn, onMissingFail))
	}
	if cfg.InitRetryInterval < 0 {
		errs = append(errs, fmt.Errorf("init_retry_interval must be 0 (no retry) or positive, got %v", cfg.InitRetryInterval))
	}
	errs = append(errs, validateDevices(cfg.Devices)...)
	if cfg.Processes.ProcRoot == "" {
		errs = append(errs, errors.New("processes::proc_root must not be empty (default /proc)"))
	}
	if cfg.Kubernetes.PodResourcesSocket != "" && (cfg.Kubernetes.Timeout <= 0 || cfg.Kubernetes.Timeout > 30*time.Second) {
		errs = append(errs, fmt.Errorf("kubernetes::timeout must be between 1ns and 30s, got %v", cfg.Kubernetes.Timeout))
	}
	errs = append(errs, cfg.Events.validate()...)
	errs = append(errs, validateMetrics(cfg.Metrics)...)
	return errors.Join(errs...)
}

// validateDevices checks the devices list: no empty entry, none twice.
func validateDevices(devices []string) []error {
	var errs []error
	seen := map[string]bool{}
	for i, d := range devices {
		if strings.TrimSpace(d) == "" {
			errs = append(errs, fmt.Errorf("devices[%d]: empty; allowed values: a GPU UUID (GPU-...) or a device index", i))
		}
		if seen[d] {
			errs = append(errs, fmt.Errorf("devices[%d]: %q listed twice", i, d))
		}
		seen[d] = true
	}
	return errs
}

// validate checks the events section when events are enabled.
func (e EventsConfig) validate() []error {
	if !e.Enabled {
		return nil
	}
	var errs []error
	if e.WaitTimeout < 10*time.Millisecond || e.WaitTimeout > time.Minute {
		errs = append(errs, fmt.Errorf("events::wait_timeout must be between 10ms and 1m, got %v", e.WaitTimeout))
	}
	if len(e.Types) == 0 {
		errs = append(errs, fmt.Errorf("events::types must not be empty when events are enabled; allowed values: %s", strings.Join(eventTypeNames(), ", ")))
	}
	for i, t := range e.Types {
		if _, ok := eventTypesByName[t]; !ok {
			errs = append(errs, fmt.Errorf("events::types[%d]: unknown event type %q, allowed values: %s", i, t, strings.Join(eventTypeNames(), ", ")))
		}
	}
	return errs
}

// validateMetrics checks that every metric named is one the receiver has,
// in the order of their names.
func validateMetrics(metrics map[string]MetricConfig) []error {
	var errs []error
	unknown := make([]string, 0)
	for name := range metrics {
		if _, ok := metricDefsByName[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		errs = append(errs, fmt.Errorf("metrics::%s: unknown metric, allowed values: %s", name, strings.Join(metricNames(), ", ")))
	}
	return errs
}

// metricEnabled reports whether the named metric is on, falling back to its
// default when the configuration does not mention it.
func (cfg *Config) metricEnabled(name string) bool {
	if mc, ok := cfg.Metrics[name]; ok {
		return mc.Enabled
	}
	if d, ok := metricDefsByName[name]; ok {
		return d.enabled
	}
	return false
}
