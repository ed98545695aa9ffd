package live

import (
	"runtime"
	"time"
)

// cpuMeter is the process's CPU use over about the last second, as a
// fraction of the CPUs it may use (GOMAXPROCS), sampled at most once a
// second by the goroutine that renders spans (it is not safe for
// concurrent use). ok is false where the process's CPU time is unknown.
type cpuMeter struct {
	wall, cpu time.Time // the last sample: wall clock, and CPU time as a time since zero
	value     float64
	ok        bool
}

// sample returns the utilization at now, sampling again when a second has
// passed since the last sample.
func (m *cpuMeter) sample(now time.Time) (float64, bool) {
	if !m.wall.IsZero() && now.Sub(m.wall) < time.Second {
		return m.value, m.ok
	}
	used, ok := processCPU()
	if !ok {
		return 0, false
	}
	cpu := time.Time{}.Add(used)
	if !m.wall.IsZero() {
		m.value = cpu.Sub(m.cpu).Seconds() / (now.Sub(m.wall).Seconds() * float64(runtime.GOMAXPROCS(0)))
		m.ok = true
	}
	m.wall, m.cpu = now, cpu
	return m.value, m.ok
}
