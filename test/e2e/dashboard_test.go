//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// dashboard is the part of the Grafana dashboard JSON the test reads.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

type dashboardQuery struct{ panel, expr string }

func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "grafana", "otelcol-llm.json"))
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	var qs []dashboardQuery
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			// Grafana's variables, as a user viewing every model would have them.
			expr := strings.NewReplacer("$__rate_interval", "15s", "$model", ".*").Replace(tg.Expr)
			qs = append(qs, dashboardQuery{panel: p.Title, expr: expr})
		}
	}
	require.NotEmpty(t, qs)
	return qs
}

// startPrometheus runs a real Prometheus server on loopback that scrapes
// targets every second, and returns its base URL.
func startPrometheus(t *testing.T, targets ...string) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS")
	require.NotEmpty(t, bin, "PROMETHEUS is not set: `make e2e` installs Prometheus and sets it")
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: otelcol-llm
    static_configs:
      - targets: [%s]
`, strings.Join(quoted, ", "))), 0o600))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	out := &syncBuffer{}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "prometheus did not become ready:\n%s", out.String())
	return base
}

// promQuery runs an instant query and returns how many series it gave, or
// the error Prometheus reported.
func promQuery(base, expr string) (int, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("%s", body.Error)
	}
	return len(body.Data.Result), nil
}

// TestDashboardQueriesReturnData runs the demo configuration, forwards GPU
// metrics to it over OTLP the way an agent does, has a real Prometheus server
// scrape it, and runs every query of the Grafana dashboard through
// Prometheus's HTTP API: each must be valid and return data.
func TestDashboardQueriesReturnData(t *testing.T) {
	queries := dashboardQueries(t)

	t.Setenv("OTELCOL_LLM_METRICS_FLUSH_INTERVAL", "1s")
	// A tight per-trace budget, so span_guard drops (not only folds) spans
	// within the first seconds and its "dropped" series exist.
	t.Setenv("OTELCOL_LLM_TRACE_MAX_SPANS", "16")
	col := StartCollector(t, "--config", "builtin:demo")
	col.WaitHealthy(t, 30*time.Second)

	// GPU metrics as the nvidia_gpu receiver produces them for an H200 (the
	// golden output of its NVML-mock test), sent every second as an agent
	// forwarding to this collector would.
	gpu, err := golden.ReadMetrics(filepath.Join(repoRoot, "receivers", "nvidiagpureceiver", "testdata", "golden", "h200.yaml"))
	require.NoError(t, err)
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	client := pmetricotlp.NewGRPCClient(conn)
	ctx, cancel := context.WithCancel(context.Background())
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; i < 180; i++ { // bounded: the test ends well before
			_, _ = client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(gpu))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-sent })

	prom := startPrometheus(t, fmt.Sprintf("127.0.0.1:%d", col.MetricsPort), fmt.Sprintf("127.0.0.1:%d", col.PromPort))

	var missing []string
	start := time.Now()
	deadline := start.Add(150 * time.Second)
	for {
		missing = missing[:0]
		for _, q := range queries {
			n, err := promQuery(prom, q.expr)
			require.NoError(t, err, "panel %q: %s", q.panel, q.expr)
			if n == 0 {
				missing = append(missing, fmt.Sprintf("%s: %s", q.panel, q.expr))
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		t.Logf("%v: %d of %d queries without data yet", time.Since(start).Round(time.Second), len(missing), len(queries))
		time.Sleep(2 * time.Second)
	}
	sort.Strings(missing)
	require.Empty(t, missing, "dashboard queries without data after %v", time.Since(start).Round(time.Second))
	t.Logf("all %d dashboard queries return data after %v", len(queries), time.Since(start).Round(time.Second))
}
