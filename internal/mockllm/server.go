package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Stats are the server's counters.
type Stats struct {
	Requests      int64 `json:"requests"`
	ActiveStreams int64 `json:"active_streams"`
	MaxStreams    int64 `json:"max_concurrent_streams"`
	Completed     int64 `json:"completed_streams"`
	Faults        int64 `json:"faults"`
	ClientGone    int64 `json:"client_gone"`
	// CutBodies counts completion requests whose client went before their
	// body was complete: no request to serve, so no record and no span.
	CutBodies int64 `json:"cut_bodies"`
	// Running is the completion requests holding an engine slot now (in
	// prefill or decode); Queued those waiting for one, MaxQueued the peak
	// of Queued, and Rejected those refused with a 503 because the queue
	// was full (Config.MaxQueue).
	Running   int64 `json:"running"`
	Queued    int64 `json:"queued"`
	MaxQueued int64 `json:"max_queued"`
	Rejected  int64 `json:"rejected"`
	// HistoryMismatches counts session turns whose messages lacked the
	// server's answer to the turn before.
	HistoryMismatches int64 `json:"history_mismatches"`
	// PrefixCacheQueries and PrefixCacheHits are the prompt tokens looked
	// up in the prefix cache and those found (vLLM's prefix_cache_queries
	// and prefix_cache_hits); 0 with the cache off.
	PrefixCacheQueries int64 `json:"prefix_cache_queries"`
	PrefixCacheHits    int64 `json:"prefix_cache_hits"`
	// Preemptions counts requests preempted to free KV cache, and
	// KVCacheTokens is the KV cache in use now (Config.KVCacheTokens).
	Preemptions   int64 `json:"preemptions"`
	KVCacheTokens int64 `json:"kv_cache_tokens"`
}

// Server is the mock. Its zero value is not usable; call New.
type Server struct {
	cfg     Config
	hist    *history
	tracer  trace.Tracer
	prop    propagation.TraceContext
	seq     atomic.Uint64
	seed    uint64
	created int64

	requests, active, maxActive, completed, faults, gone atomic.Int64
	cutBodies                                            atomic.Int64
	faultsByKind                                         map[string]*atomic.Int64
	eng                                                  *engine
	sessions                                             *sessionBook
	historyMismatches                                    atomic.Int64
	prefix                                               *prefixCache // nil when off
	prefixQueries, prefixHits                            atomic.Int64
	metrics                                              *serverMetrics

	mux *http.ServeMux

	mu  sync.Mutex
	srv *http.Server
	ln  net.Listener
	wg  sync.WaitGroup
}

// Option configures a Server.
type Option func(*Server)

// WithTracerProvider makes the server record one SERVER span per request,
// joined to the caller's trace through the traceparent header.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *Server) { s.tracer = tp.Tracer("github.com/otelcol-llm/otelcol-llm/internal/mockllm") }
}

// New returns a server for cfg.
func New(cfg Config, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, hist: newHistory(cfg.HistorySize), seed: cfg.Seed, created: time.Now().Unix(),
		eng: newEngine(cfg.MaxRunning, cfg.MaxQueue, cfg.KVCacheTokens), faultsByKind: map[string]*atomic.Int64{}, sessions: newSessionBook(),
		prefix: newPrefixCache(cfg.PrefixCacheBlockTokens, cfg.PrefixCacheBlocks)}
	for _, f := range Faults {
		s.faultsByKind[f] = new(atomic.Int64)
	}
	if s.seed == 0 {
		s.seed = rand.Uint64()
	}
	s.tracer = noop.NewTracerProvider().Tracer("")
	for _, o := range opts {
		o(s)
	}
	s.metrics = newServerMetrics(s)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleCompletion(endpointChat))
	mux.HandleFunc("POST /v1/completions", s.handleCompletion(endpointText))
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /mock/requests/{id}", s.handleRecord)
	mux.HandleFunc("GET /mock/stats", s.handleStats)
	mux.Handle("GET /metrics", s.metrics.handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux = mux
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Start listens on addr (e.g. "127.0.0.1:0") and serves HTTP/1.1 and
// cleartext HTTP/2 until Shutdown.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve serves on ln in the background until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("mockllm: server already started")
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second, Protocols: &protos, ConnContext: withConn}
	ln = stampListener{ln}
	s.ln = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln)
	}()
	return nil
}

// URL is the base URL of the running server ("http://127.0.0.1:port").
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Shutdown stops accepting, waits for in-flight requests up to ctx, then
// closes the remaining connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		_ = srv.Close()
	}
	s.wg.Wait()
	return err
}

// Close stops the server at once, cutting in-flight streams.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	s.wg.Wait()
	return err
}

// Record returns the ground truth of request id, waiting until the request
// has ended or ctx is done.
func (s *Server) Record(ctx context.Context, id string) (Record, bool) { return s.hist.get(ctx, id) }

// Records returns the ground truth of every finished request still kept.
func (s *Server) Records() []Record { return s.hist.all() }

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), ActiveStreams: s.active.Load(), MaxStreams: s.maxActive.Load(),
		Completed: s.completed.Load(), Faults: s.faults.Load(), ClientGone: s.gone.Load(),
		CutBodies: s.cutBodies.Load(), Running: s.eng.running.Load(), Queued: s.eng.queued.Load(), MaxQueued: s.eng.maxQueued.Load(),
		Rejected: s.eng.rejected.Load(), HistoryMismatches: s.historyMismatches.Load(),
		PrefixCacheQueries: s.prefixQueries.Load(), PrefixCacheHits: s.prefixHits.Load(),
		Preemptions: s.eng.preemptions.Load(), KVCacheTokens: s.eng.kvTokens.Load(),
	}
}

// FaultCounts returns how many requests got each fault kind so far (every
// kind of Faults is present); their sum is Stats.Faults.
func (s *Server) FaultCounts() map[string]int64 {
	out := make(map[string]int64, len(s.faultsByKind))
	for k, n := range s.faultsByKind {
		out[k] = n.Load()
	}
	return out
}

func (s *Server) handleRecord(w http.ResponseWriter, r *http.Request) {
	wait := 2 * time.Second
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "wait", fmt.Sprintf("wait: %v", err))
			return
		}
		wait = d
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	rec, ok := s.Record(ctx, r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "id", "no finished request with this id")
		return
	}
	out := struct {
		Record
		TTFTSeconds      float64   `json:"ttft_s"`
		WireTTFTSeconds  float64   `json:"wire_ttft_s"`
		QueueWaitSeconds float64   `json:"queue_wait_s"`
		ITLSeconds       []float64 `json:"itl_s"`
	}{Record: rec, TTFTSeconds: rec.TTFT().Seconds(), WireTTFTSeconds: rec.WireTTFT().Seconds(), QueueWaitSeconds: rec.QueueWait.Seconds()}
	for _, d := range rec.ITLs() {
		out.ITLSeconds = append(out.ITLSeconds, d.Seconds())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
		MaxLen  int    `json:"max_model_len"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, m := range s.cfg.Models {
		out.Data = append(out.Data, model{ID: m, Object: "model", Created: s.created, OwnedBy: "mockllm", MaxLen: s.cfg.ContextWindow})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) hasModel(m string) bool {
	for _, x := range s.cfg.Models {
		if x == m {
			return true
		}
	}
	return false
}

// rng returns a generator for one request, seeded from the server seed and
// the request's sequence number.
func (s *Server) rng(n uint64) *rand.Rand { return rand.New(rand.NewPCG(s.seed, n)) }

// jitter draws mean·[1-j, 1+j].
func jitter(rng *rand.Rand, mean time.Duration, j float64) time.Duration {
	if j == 0 || mean == 0 {
		return mean
	}
	return time.Duration(float64(mean) * (1 - j + 2*j*rng.Float64()))
}

func (s *Server) pickFault(r *http.Request, rng *rand.Rand) (string, error) {
	if h := r.Header.Get(HeaderFault); h != "" {
		if !isFault(h) {
			return "", fmt.Errorf("%s: unknown fault %q", HeaderFault, h)
		}
		return h, nil
	}
	if len(s.cfg.FaultRates) == 0 {
		return FaultNone, nil
	}
	u := rng.Float64()
	for _, f := range Faults { // fixed order: reproducible with a seed
		u -= s.cfg.FaultRates[f]
		if u < 0 {
			return f, nil
		}
	}
	return FaultNone, nil
}

func (s *Server) startSpan(r *http.Request, name string) (context.Context, trace.Span) {
	ctx := s.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
}

func headerInt(r *http.Request, name string) (int, bool, error) {
	v := r.Header.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("%s: %q is not a non-negative integer", name, v)
	}
	return n, true, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	body := struct {
		Error errorBody `json:"error"`
	}{errorBody{Message: msg, Type: typ, Param: param, Code: status}}
	writeJSON(w, status, body)
}

type errorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param,omitempty"`
	Code    any    `json:"code"`
}

func setSpanError(span trace.Span, typ string) {
	span.SetAttributes(attribute.String("error.type", typ))
	span.SetStatus(codes.Error, typ)
}
