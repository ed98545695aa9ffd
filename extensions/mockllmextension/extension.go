package mockllmextension // import "github.com/otelcol-llm/otelcol-llm/extensions/mockllmextension"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

// shutdownGrace bounds how long Shutdown lets in-flight requests finish
// (a stalled stream lasts stall_duration) before it cuts them.
const shutdownGrace = 5 * time.Second

// mockLLM is the extension: one mockllm.Server per Start.
type mockLLM struct {
	cfg *Config
	set component.TelemetrySettings
	tel *telemetry

	mu   sync.Mutex
	srv  *mockllm.Server
	addr string
}

func newMockLLM(cfg *Config, set component.TelemetrySettings) (*mockLLM, error) {
	tel, err := newTelemetry(set)
	if err != nil {
		return nil, err
	}
	return &mockLLM{cfg: cfg, set: set, tel: tel}, nil
}

// Start listens on the endpoint and serves the mock in the background.
func (m *mockLLM) Start(_ context.Context, _ component.Host) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv != nil {
		return errors.New("mock_llm: already started")
	}
	srv, err := mockllm.New(m.cfg.mockllm(), mockllm.WithTracerProvider(m.set.TracerProvider))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", m.cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("endpoint: cannot listen on %q: %w", m.cfg.Endpoint, err)
	}
	if err := srv.Serve(ln); err != nil {
		_ = ln.Close()
		return err
	}
	if err := m.tel.observe(srv); err != nil {
		_ = srv.Close()
		return err
	}
	m.srv, m.addr = srv, ln.Addr().String()
	fields := []zap.Field{zap.String("url", "http://"+m.addr+"/v1"), zap.Strings("models", m.cfg.Models),
		zap.Int("max_running", m.cfg.MaxRunning)}
	if !isLoopback(ln.Addr()) {
		m.set.Logger.Warn("mock_llm serves beyond loopback: every host that reaches this address can use the mock", fields...)
	} else {
		m.set.Logger.Info("mock_llm serving", fields...)
	}
	return nil
}

// Shutdown lets in-flight requests finish for at most shutdownGrace (or
// until ctx is done), then cuts them. It is safe without Start and twice.
func (m *mockLLM) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	srv := m.srv
	m.srv, m.addr = nil, ""
	m.mu.Unlock()
	if srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, shutdownGrace)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		m.set.Logger.Warn("mock_llm cut the requests still in flight at shutdown", zap.Int64("active_streams", srv.Stats().ActiveStreams))
		err = nil
	}
	return errors.Join(err, m.tel.stop())
}

// Addr is the address the mock listens on ("127.0.0.1:18000"), or "" when
// it is not started; with port 0 in the endpoint it carries the port chosen.
func (m *mockLLM) Addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
