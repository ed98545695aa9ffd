package mockllm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/sse"
)

// fuzzServer answers at once (no TTFT, no gaps, no stalls), so that every
// input finishes in microseconds while taking the same code paths.
func fuzzServer(tb testing.TB) *Server {
	tb.Helper()
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.Jitter = 0, 0, 0
	cfg.OutputTokens, cfg.OutputJitter = 8, 0
	cfg.EmbeddingLatency, cfg.StallDuration, cfg.SlowHeaders = 0, 0, 0
	cfg.RetryAfter = time.Second
	cfg.HistorySize = 64
	cfg.Seed = 7
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

var fuzzPaths = []string{"/v1/chat/completions", "/v1/completions", "/v1/embeddings"}

// FuzzRequest sends arbitrary bodies and override headers to every endpoint
// and checks the server's contract: only the documented statuses; every
// error is an OpenAI-style JSON error with a message; every stream is
// well-formed SSE whose data lines are JSON or [DONE], ending in [DONE]
// unless a fault that cuts the stream was asked for; every unary answer is
// JSON; the ground truth records the status that was sent.
func FuzzRequest(f *testing.F) {
	f.Add(uint8(0), []byte(`{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`), "", "")
	f.Add(uint8(0), []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"stream":false,"max_tokens":3}`), "", "4")
	f.Add(uint8(1), []byte(`{"model":"mock-llm","prompt":"once upon","stream":true,"max_tokens":2,"ignore_eos":true}`), "", "")
	f.Add(uint8(2), []byte(`{"model":"mock-llm","input":["a","b"]}`), "", "")
	f.Add(uint8(0), []byte(`{"model":"nope"}`), "", "")
	f.Add(uint8(0), []byte(`{"stream":true,"max_tokens":-5}`), "", "")
	f.Add(uint8(0), []byte(`{"stream":true,"max_tokens":100000}`), "", "")
	for _, fault := range Faults {
		f.Add(uint8(0), []byte(`{"stream":true,"stream_options":{"include_usage":true}}`), fault, "")
	}
	f.Add(uint8(0), []byte(`{not json`), "", "")
	f.Add(uint8(0), []byte(`{"stream":true}`), "unknown_fault", "x")

	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte, fault, outputTokens string) {
		path := fuzzPaths[int(which)%len(fuzzPaths)]
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if fault != "" {
			req.Header.Set(HeaderFault, fault)
		}
		if outputTokens != "" {
			req.Header.Set(HeaderOutputTokens, outputTokens)
		}
		if n, err := strconv.Atoi(outputTokens); err == nil && n > 4096 {
			t.Skip("outputs longer than the fuzz budget are covered by the stream tests")
		}
		w := httptest.NewRecorder()
		if serve(s.Handler(), w, req) && fault != FaultDrop {
			t.Fatalf("%s: connection aborted without a drop fault", path)
		}
		checkResponse(t, s, path, fault, w)
	})
}

// serve runs the handler as net/http's server does: a panic with
// http.ErrAbortHandler (how the drop fault cuts the connection) ends the
// response; any other panic is a bug and fails the test.
func serve(h http.Handler, w http.ResponseWriter, req *http.Request) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler { //nolint:errorlint // net/http compares the same way
				panic(v)
			}
			aborted = true
		}
	}()
	h.ServeHTTP(w, req)
	return false
}

func checkResponse(t *testing.T, s *Server, path, fault string, w *httptest.ResponseRecorder) {
	t.Helper()
	res := w.Result()
	raw := w.Body.Bytes()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest, http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Fatalf("%s: status %d with a body that is not an OpenAI error (%v): %q", path, res.StatusCode, err, raw)
		}
		if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
			t.Fatalf("429 without Retry-After")
		}
		checkRecordStatus(t, s, res)
		return
	default:
		t.Fatalf("%s: undocumented status %d: %q", path, res.StatusCode, raw)
	}
	checkRecordStatus(t, s, res)
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		if !json.Valid(raw) {
			t.Fatalf("%s: unary 200 body is not JSON: %q", path, raw)
		}
		return
	}
	r := sse.NewReader(bytes.NewReader(raw), 1<<20)
	var last string
	events := 0
	for ; events < 1_000_000; events++ {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, sse.ErrUnterminatedEvent) && fault == FaultCutEvent {
			break // the fault's point: the body ends inside its last event
		}
		if err != nil {
			t.Fatalf("%s: stream is not valid SSE after %d events: %v", path, events, err)
		}
		data := string(ev.Data)
		last = data
		if data == "[DONE]" {
			continue
		}
		if !json.Valid(ev.Data) && fault != FaultMalformed {
			t.Fatalf("%s: data event %d is not JSON without a malformed fault: %q", path, events, data)
		}
	}
	cuts := fault == FaultDrop || fault == FaultMissingDone || fault == FaultCutEvent
	if last != "[DONE]" && !cuts {
		t.Fatalf("%s: stream of %d events does not end in [DONE] (fault %q); last %q", path, events, fault, last)
	}
	if last == "[DONE]" && fault == FaultMissingDone {
		t.Fatalf("%s: missing_done fault still sent [DONE]", path)
	}
}

// checkRecordStatus looks the request up in the ground truth by the id the
// response carries and compares the status.
func checkRecordStatus(t *testing.T, s *Server, res *http.Response) {
	t.Helper()
	id := res.Header.Get(HeaderRequestID)
	if id == "" {
		return // embeddings carry no per-request record
	}
	rec, ok := s.hist.get(t.Context(), id)
	if !ok {
		t.Fatalf("request %s has no ground-truth record", id)
	}
	if rec.Status != res.StatusCode {
		t.Fatalf("request %s: ground truth says status %d, response was %d", id, rec.Status, res.StatusCode)
	}
}
