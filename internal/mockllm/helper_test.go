package mockllm

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/sse"
)

// The concurrency benchmark runs its client in a child process (this test
// binary re-executed), so that client and server each have their own file
// descriptor limit: 10,000 loopback streams need 20,000 sockets.
const helperEnv = "MOCKLLM_STREAM_CLIENT"

type clientResult struct {
	OK, Failed int
	FirstError string
}

// helperMain runs the stream client when the environment asks for it.
func helperMain() bool {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		return false
	}
	parts := strings.Split(spec, ",")
	url := parts[0]
	n, _ := strconv.Atoi(parts[1])
	perSec, _ := strconv.Atoi(parts[2])
	res := runStreamClient(url, n, perSec)
	_ = json.NewEncoder(os.Stdout).Encode(res)
	return true
}

func runStreamClient(url string, n, perSec int) clientResult {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConnsPerHost: n, MaxConnsPerHost: 0, DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var ok, failed atomic.Int64
	var firstErr sync.Once
	var errText string
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(perSec)
	start := time.Now()
	for i := 0; i < n; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() error {
				resp, err := client.Post(url+"/v1/chat/completions", "application/json",
					strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				rd := sse.NewReader(resp.Body, 0)
				for {
					ev, err := rd.Next()
					if err != nil {
						return err
					}
					if sse.IsDone(ev.Data) {
						return nil
					}
				}
			}()
			if err != nil {
				failed.Add(1)
				firstErr.Do(func() { errText = err.Error() })
				return
			}
			ok.Add(1)
		}()
	}
	wg.Wait()
	return clientResult{OK: int(ok.Load()), Failed: int(failed.Load()), FirstError: errText}
}

// BenchmarkConcurrentStreams holds 10,000 streams open at once against one
// server on loopback and reports the peak the server saw. Each stream lasts
// about 60 s (30 tokens, 2 s apart) and the client opens 1,000 per second,
// so the streams overlap even on a busy two-core machine.
func BenchmarkConcurrentStreams(b *testing.B) {
	const streams, perSec = 10000, 1000
	for i := 0; i < b.N; i++ {
		cfg := DefaultConfig()
		cfg.TTFT, cfg.ITL, cfg.Jitter, cfg.OutputTokens, cfg.OutputJitter = 100*time.Millisecond, 2*time.Second, 0, 30, 0
		cfg.HistorySize, cfg.RecordTokenTimes = 1000, false
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start("127.0.0.1:0"); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", helperEnv, s.URL(), streams, perSec))
		cmd.Stderr = os.Stderr
		start := time.Now()
		out, err := cmd.Output()
		elapsed := time.Since(start)
		_ = s.Close()
		if err != nil {
			b.Fatalf("client: %v", err)
		}
		var res clientResult
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatalf("client output %q: %v", out, err)
		}
		st := s.Stats()
		b.ReportMetric(float64(st.MaxStreams), "peak_streams")
		b.ReportMetric(float64(res.OK), "ok_streams")
		b.ReportMetric(float64(res.Failed), "failed_streams")
		b.ReportMetric(elapsed.Seconds(), "wall_s")
		if res.Failed > 0 || st.MaxStreams < streams {
			b.Errorf("peak %d concurrent streams, %d ok, %d failed (first error: %s)", st.MaxStreams, res.OK, res.Failed, res.FirstError)
		}
	}
}
