package live

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// BenchmarkLiveErrorUnderCPUHog is BenchmarkLiveErrorAt1000Streams with the
// generator's core taken by a busy loop: this process (GOMAXPROCS 1) and a
// spinning shell share CPU 0, the mock runs alone on CPU 1. It runs three
// clients: raw with kernel receive timestamps, raw timed in user space, and
// net/http (user space). A stamp taken by the kernel does not wait for the
// generator to be scheduled, so the ITL error and the TTFT error counted from
// the request's write stay small under the hog while the user-space ones
// carry the generator's scheduling delay, which the kernel-stamped run
// reports as client_delay.
func BenchmarkLiveErrorUnderCPUHog(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs: one for the generator and the hog, one for the mock")
	}
	for _, v := range []struct {
		name, transport string
		kernel          bool
	}{{"raw_kernel", config.TransportRaw, true}, {"raw_user", config.TransportRaw, false}, {"net_http", config.TransportNetHTTP, false}} {
		b.Run(v.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				url := startMockOn(b, 1, "-ttft", "200ms", "-itl", "50ms", "-output-tokens", "40", "-output-jitter", "0", "-jitter", "0.2")
				restore := pinSelf(b, 0)
				stopHog := startHog(b, 0)
				c0 := costSelf()
				cfg := closedConfig(url, 1000, 8*time.Second, config.ChunkEventsAll, v.transport)
				cfg.Live.KernelTimestamps = v.kernel
				ms := runLoadgen(b, cfg, 8*time.Second)
				c := costSelf().sub(c0)
				stopHog()
				restore()
				st := compareTruth(b, url, ms, 1000)
				reportErrors(b, st, len(ms), c)
				b.ReportMetric(1e3*pct(st.ttftSent, 0.5), "ttft_sent_err_p50_ms")
				b.ReportMetric(1e3*pct(st.ttftSent, 0.99), "ttft_sent_err_p99_ms")
				b.ReportMetric(1e3*pct(st.ttftReused, 0.5), "ttft_reused_err_p50_ms")
				b.ReportMetric(1e3*pct(st.ttftReused, 0.99), "ttft_reused_err_p99_ms")
			}
		})
	}
}

// pinSelf binds every thread of this process to cpu (threads created later
// inherit it) with GOMAXPROCS 1, and returns the function that undoes both.
func pinSelf(b *testing.B, cpu int) func() {
	var all, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		b.Fatal(err)
	}
	one.Set(cpu)
	setAll := func(set *unix.CPUSet) {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				_ = unix.SchedSetaffinity(tid, set) // a thread may have exited meanwhile
			}
		}
	}
	procs := runtime.GOMAXPROCS(1)
	setAll(&one)
	return func() {
		setAll(&all)
		runtime.GOMAXPROCS(procs)
	}
}

// startHog runs a busy loop pinned to cpu and returns the function that
// stops it.
func startHog(b *testing.B, cpu int) func() {
	cmd := exec.Command("taskset", "-c", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	b.Cleanup(stop)
	return stop
}
