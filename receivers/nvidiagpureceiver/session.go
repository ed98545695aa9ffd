package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/sharedcomponent"
)

// errNoDevice is returned when NVML works but no (selected) GPU is visible.
var errNoDevice = errors.New("no NVIDIA GPU visible to NVML")

// gpu is one physical GPU and what the receiver remembers about it.
type gpu struct {
	dev    nvml.Device
	index  int
	uuid   string
	name   string
	busID  string
	serial string
	minor  int

	calls callGuard

	lastSeen     [nvml.SAMPLINGTYPE_COUNT]uint64 // per sampling type, µs
	lastProcUtil uint64
	mig          map[string]*callGuard // per MIG device UUID
	migByGI      map[int64]string      // GPU instance ID -> MIG device UUID, from the last scrape
}

// callGuard remembers which calls a device does not support.
type callGuard struct {
	unsupported map[string]bool
}

func (c *callGuard) skip(call string) bool { return c.unsupported[call] }

// session is the NVML state shared by the metrics and the logs receiver built
// from one configuration: NVML is initialized once, when the first of them
// starts, and released when the last one shuts down.
type session struct {
	cfg    *Config
	newLib func(*Config) nvml.Interface
	logger *zap.Logger
	tel    *telemetry

	mu          sync.Mutex // lifecycle, devices and scrapes
	active      bool       // started and not shut down
	host        component.Host
	lib         nvml.Interface
	ready       bool
	initErr     error
	lastAttempt time.Time
	start       pcommon.Timestamp
	driver      string
	cuda        string
	hostname    string
	gpus        []*gpu
	procs       *procResolver
	pods        *podResourcesClient

	evMu        sync.Mutex // events: consumer, counters
	logs        consumer.Logs
	xidCounts   map[string]map[uint64]int64 // uuid -> code -> count
	eventCounts map[string]map[string]int64 // uuid -> event type -> count
	recentSev   map[string]string           // uuid -> worst XID severity since the last scrape
	evStop      chan struct{}
	evDone      chan struct{}
	evSet       nvml.EventSet
	evCancel    context.CancelFunc
}

// sessions holds one session per configuration (internal/sharedcomponent).
// The metrics and the logs receiver take a reference each, so the session
// starts with the first of them and stops with the last.
var sessions = sharedcomponent.NewMap[*Config, *session]()

// sessionFor returns the shared session of a configuration, creating it on
// first use.
func sessionFor(cfg *Config, set component.TelemetrySettings, newLib func(*Config) nvml.Interface) (*sharedcomponent.Component[*session], error) {
	return sessions.LoadOrStore(cfg, func() (*session, error) { return newSession(cfg, set, newLib) })
}

func newSession(cfg *Config, set component.TelemetrySettings, newLib func(*Config) nvml.Interface) (*session, error) {
	tel, err := newTelemetry(set)
	if err != nil {
		return nil, err
	}
	return &session{
		cfg:         cfg,
		newLib:      newLib,
		logger:      set.Logger,
		tel:         tel,
		xidCounts:   map[string]map[uint64]int64{},
		eventCounts: map[string]map[string]int64{},
		recentSev:   map[string]string{},
		procs:       newProcResolver(cfg.Processes.ProcRoot),
	}, nil
}

func (s *session) setLogsConsumer(c consumer.Logs) {
	s.evMu.Lock()
	s.logs = c
	s.evMu.Unlock()
}

// Start starts the session; the registry calls it once, for the first
// receiver that starts. With on_missing: fail a missing NVML or GPU is
// returned as an error; with warn the receiver stays idle, reports a
// recoverable error status and retries later.
func (s *session) Start(_ context.Context, host component.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.host = host
	s.start = pcommon.NewTimestampFromTime(time.Now())
	if err := s.initLocked(); err != nil {
		if s.cfg.OnMissing == onMissingFail {
			return err
		}
		s.logger.Warn("nvidia_gpu receiver is idle: NVML or a GPU is missing (on_missing: warn); it keeps retrying",
			zap.Error(err), zap.Duration("init_retry_interval", s.cfg.InitRetryInterval))
		componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
	}
	s.active = true
	return nil
}

// Shutdown stops the session; the registry calls it once, when the last
// receiver shuts down, and only after a successful Start.
func (s *session) Shutdown(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = false
	return s.teardownLocked()
}

func (s *session) teardownLocked() error {
	s.stopEventsLocked()
	if s.pods != nil {
		_ = s.pods.close()
		s.pods = nil
	}
	if !s.ready {
		return nil
	}
	s.ready = false
	s.gpus = nil
	s.tel.devices.Record(context.Background(), 0)
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvidia_gpu: NVML shutdown: %s", returnReason(ret))
	}
	return nil
}

// retryLocked tries NVML again for an idle receiver, at most once per
// init_retry_interval.
func (s *session) retryLocked() {
	if s.ready || !s.active || s.cfg.InitRetryInterval == 0 || time.Since(s.lastAttempt) < s.cfg.InitRetryInterval {
		return
	}
	if err := s.initLocked(); err != nil {
		s.logger.Debug("nvidia_gpu: NVML still unavailable", zap.Error(err))
		return
	}
	s.logger.Info("nvidia_gpu: NVML available, receiver active", zap.Int("gpus", len(s.gpus)))
	componentstatus.ReportStatus(s.host, componentstatus.NewEvent(componentstatus.StatusOK))
}

// initLocked loads NVML, finds the GPUs and starts the event goroutine.
func (s *session) initLocked() (err error) {
	s.lastAttempt = time.Now()
	defer func() { s.initDone(err) }()
	lib := s.newLib(s.cfg)
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return &initError{ret: ret}
	}
	gpus, err := s.discover(lib)
	if err != nil {
		_ = lib.Shutdown()
		return err
	}
	s.lib = lib
	s.gpus = gpus
	s.ready = true
	s.readHost(lib)
	s.tel.devices.Record(context.Background(), int64(len(gpus)))
	if sock := s.cfg.Kubernetes.PodResourcesSocket; sock != "" {
		if s.pods, err = newPodResourcesClient(sock, s.cfg.Kubernetes.Timeout); err != nil {
			s.logger.Warn("nvidia_gpu: no pod attribution from the kubelet", zap.Error(err))
			s.pods, err = nil, nil
		}
	}
	s.startEventsLocked()
	uuids := make([]string, len(gpus))
	for i, g := range gpus {
		uuids[i] = g.uuid
	}
	s.logger.Info("nvidia_gpu: NVML initialized", zap.String("driver_version", s.driver), zap.Strings("gpus", uuids))
	return nil
}

// initDone keeps the outcome of an initialization attempt and counts it by
// outcome.
func (s *session) initDone(err error) {
	s.initErr = err
	if err != nil {
		s.tel.devices.Record(context.Background(), 0)
	}
	switch {
	case err == nil:
		s.tel.initAttempt("ok")
	case errors.Is(err, errNoDevice):
		s.tel.initAttempt("no_device")
	default:
		var ie *initError
		if errors.As(err, &ie) {
			s.tel.initAttempt(returnReason(ie.ret))
		} else {
			s.tel.initAttempt("error")
		}
	}
}

// readHost reads what describes the host of the GPUs: the driver and CUDA
// versions and the host name, each when it can be read.
func (s *session) readHost(lib nvml.Interface) {
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		s.driver = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		s.cuda = fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
	}
	if h, herr := os.Hostname(); herr == nil {
		s.hostname = h
	}
}

// initError is an NVML initialization failure with its likely cause.
type initError struct{ ret nvml.Return }

func (e *initError) Error() string {
	msg := "nvidia_gpu: NVML initialization failed: " + returnReason(e.ret)
	if hint, ok := initHints[e.ret]; ok {
		msg += " (" + hint + ")"
	}
	return msg
}

// discover lists the GPUs NVML sees and keeps those the configuration selects.
func (s *session) discover(lib nvml.Interface) ([]*gpu, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvidia_gpu: listing GPUs: %s: %w", returnReason(ret), errNoDevice)
	}
	want := map[string]bool{}
	for _, d := range s.cfg.Devices {
		want[strings.TrimSpace(d)] = false
	}
	var gpus []*gpu
	var visible []string
	for i := 0; i < count; i++ {
		dev, uuid, ok := s.device(lib, i)
		if !ok {
			continue
		}
		visible = append(visible, uuid)
		if selectDevice(want, uuid, strconv.Itoa(i)) {
			gpus = append(gpus, newGPU(dev, i, uuid))
		}
	}
	if err := s.checkDiscovered(len(gpus), count, want, visible); err != nil {
		return nil, err
	}
	return gpus, nil
}

// selectDevice reports whether the GPU with this UUID and index is one
// the configuration asks for (every GPU when devices is empty), and marks
// the entries that named it as found.
func selectDevice(want map[string]bool, uuid, idx string) bool {
	if len(want) == 0 {
		return true
	}
	_, byUUID := want[uuid]
	_, byIndex := want[idx]
	if !byUUID && !byIndex {
		return false
	}
	want[uuid], want[idx] = true, true
	return true
}

// checkDiscovered fails when no GPU was selected, and warns for each
// configured device that is not visible.
func (s *session) checkDiscovered(selected, count int, want map[string]bool, visible []string) error {
	if selected == 0 {
		if len(want) > 0 {
			return fmt.Errorf("nvidia_gpu: none of devices %v is visible (visible: %v): %w", s.cfg.Devices, visible, errNoDevice)
		}
		return fmt.Errorf("nvidia_gpu: NVML reports %d GPUs: %w", count, errNoDevice)
	}
	for _, d := range s.cfg.Devices {
		if !want[strings.TrimSpace(d)] {
			s.logger.Warn("nvidia_gpu: configured device not found", zap.String("device", d), zap.Strings("visible", visible))
		}
	}
	return nil
}

// device is the handle and the UUID of the GPU at index i; ok is false, the
// failure counted and logged, when NVML gives either not.
func (s *session) device(lib nvml.Interface, i int) (dev nvml.Device, uuid string, ok bool) {
	dev, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		s.tel.callFailed("DeviceGetHandleByIndex", returnReason(ret))
		s.logger.Warn("nvidia_gpu: GPU skipped: no handle", zap.Int("index", i), zap.String("reason", returnReason(ret)))
		return nil, "", false
	}
	uuid, ret = dev.GetUUID()
	if ret != nvml.SUCCESS {
		s.tel.callFailed("GetUUID", returnReason(ret))
		s.logger.Warn("nvidia_gpu: GPU skipped: no UUID", zap.Int("index", i), zap.String("reason", returnReason(ret)))
		return nil, "", false
	}
	return dev, uuid, true
}

// newGPU is the scraping state of a selected GPU, with the identity NVML
// gives (name, PCI bus id, serial and minor number, each when it does).
func newGPU(dev nvml.Device, index int, uuid string) *gpu {
	g := &gpu{dev: dev, index: index, uuid: uuid, minor: -1,
		calls: callGuard{unsupported: map[string]bool{}}, mig: map[string]*callGuard{}, migByGI: map[int64]string{}}
	for t := range g.lastSeen {
		g.lastSeen[t] = uint64(time.Now().UnixMicro())
	}
	g.lastProcUtil = uint64(time.Now().UnixMicro())
	if v, ret := dev.GetName(); ret == nvml.SUCCESS {
		g.name = v
	}
	if v, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
		g.busID = cString(v.BusId[:])
	}
	if v, ret := dev.GetSerial(); ret == nvml.SUCCESS {
		g.serial = v
	}
	if v, ret := dev.GetMinorNumber(); ret == nvml.SUCCESS {
		g.minor = v
	}
	return g
}

// resource fills the resource attributes of a GPU.
func (s *session) resource(res pcommon.Resource, g *gpu) {
	a := res.Attributes()
	a.PutStr("hw.id", g.uuid)
	a.PutStr("hw.type", "gpu")
	a.PutStr("hw.vendor", "NVIDIA")
	if g.name != "" {
		a.PutStr("hw.model", g.name)
	}
	if g.minor >= 0 {
		a.PutStr("hw.name", "nvidia"+strconv.Itoa(g.minor))
	}
	if g.serial != "" {
		a.PutStr("hw.serial_number", g.serial)
	}
	if s.driver != "" {
		a.PutStr("hw.driver_version", s.driver)
	}
	if s.cuda != "" {
		a.PutStr("nvidia.gpu.cuda_driver_version", s.cuda)
	}
	a.PutInt("nvidia.gpu.index", int64(g.index))
	if g.busID != "" {
		a.PutStr("nvidia.gpu.pci.bus_id", g.busID)
	}
	if s.hostname != "" {
		a.PutStr("host.name", s.hostname)
	}
}
