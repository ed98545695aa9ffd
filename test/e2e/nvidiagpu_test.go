//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hasNVIDIADriver reports whether this machine can load NVML; the tests
// below assert the GPU-less behaviour and are skipped where a GPU exists
// (make gpu-check covers that case).
func hasNVIDIADriver() bool {
	return exec.Command("nvidia-smi", "-L").Run() == nil
}

// TestNvidiaGPUAgentKeepsRunningWithoutGPU starts the compiled-in GPU agent
// configuration on a machine without the NVIDIA driver: the collector becomes
// healthy and keeps running, the receiver says why it is idle, and its own
// metrics show the failed NVML initialization and zero devices.
func TestNvidiaGPUAgentKeepsRunningWithoutGPU(t *testing.T) {
	if hasNVIDIADriver() {
		t.Skip("an NVIDIA driver is present; run make gpu-check instead")
	}
	col := StartCollector(t, "--config", "builtin:gpu-agent")
	col.WaitHealthy(t, 30*time.Second)

	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", col.MetricsPort)
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		body = scrape(t, url)
		if sumSeriesOrZero(body, "otelcol_nvidia_gpu_init_attempts", `outcome="library_not_found"`) >= 1 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, sumSeries(t, body, "otelcol_nvidia_gpu_init_attempts", `outcome="library_not_found"`), 1.0)
	assert.Regexp(t, regexp.MustCompile(`(?m)^otelcol_nvidia_gpu_devices(\{[^}]*\})? 0$`), body, "idle receiver reports zero devices")

	// Still running several seconds later (the scraper ticks every 10 s by
	// default; 3 s is enough to catch a crash right after start).
	time.Sleep(3 * time.Second)
	require.False(t, col.Exited(), "collector exited:\n%s", col.Output())
	out := col.Output()
	assert.Contains(t, out, "nvidia_gpu receiver is idle")
	assert.Contains(t, out, "library_not_found")
	require.NoError(t, col.Stop(t, 15*time.Second))
}

// TestNvidiaGPUOnMissingFailStopsStartup checks that on_missing: fail makes
// the collector refuse to start on a GPU-less machine, naming the cause.
func TestNvidiaGPUOnMissingFailStopsStartup(t *testing.T) {
	if hasNVIDIADriver() {
		t.Skip("an NVIDIA driver is present")
	}
	cfg := writeFile(t, "gpu-fail.yaml", `
receivers:
  nvidia_gpu:
    on_missing: fail
exporters:
  debug:
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [nvidia_gpu]
      exporters: [debug]
`)
	out, code := runBinary(t, 60*time.Second, "--config", "file:"+cfg)
	assert.NotEqual(t, 0, code)
	assert.True(t, strings.Contains(out, "NVML initialization failed: library_not_found"), out)
}
