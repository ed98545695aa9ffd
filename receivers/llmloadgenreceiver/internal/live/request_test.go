package live

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Events keep the idle phase alive without resetting the timer; silence for
// the idle timeout cancels with the idle cause.
func TestPhaseTimerIdleTouch(t *testing.T) {
	const idle = 60 * time.Millisecond
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	pt := newPhaseTimer(cancel, idle, time.Now().Add(time.Hour))
	defer pt.stop()
	pt.arm(idle, phaseIdle)
	// Events every 10 ms for 4 idle timeouts: no cancellation.
	for end := time.Now().Add(4 * idle); time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
		pt.touch(time.Now())
		require.NoError(t, ctx.Err(), "cancelled while events kept coming")
	}
	last := time.Now()
	pt.touch(last)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a silent stream was not cancelled")
	}
	assert.ErrorIs(t, context.Cause(ctx), errIdleTimeout)
	assert.GreaterOrEqual(t, time.Since(last), idle)
}

// Arming a phase moves the deadline and names the phase that expires; stop
// disarms.
func TestPhaseTimerPhases(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	pt := newPhaseTimer(cancel, time.Hour, time.Now().Add(time.Hour))
	pt.arm(20*time.Millisecond, phaseConnect)
	pt.arm(80*time.Millisecond, phaseTTFT) // before connect expired
	start := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("TTFT timeout did not fire")
	}
	assert.ErrorIs(t, context.Cause(ctx), errTTFTTimeout)
	assert.GreaterOrEqual(t, time.Since(start), 70*time.Millisecond)

	ctx2, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	pt2 := newPhaseTimer(cancel2, time.Hour, time.Now().Add(time.Hour))
	pt2.arm(10*time.Millisecond, phaseConnect)
	pt2.stop()
	time.Sleep(50 * time.Millisecond)
	assert.NoError(t, ctx2.Err(), "a stopped timer cancelled")
}

// The total deadline cuts every phase short and names itself; a deadline
// already past cancels at once.
func TestPhaseTimerTotalDeadline(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	start := time.Now()
	pt := newPhaseTimer(cancel, time.Hour, start.Add(60*time.Millisecond))
	defer pt.stop()
	pt.arm(time.Hour, phaseTTFT)
	pt.arm(time.Hour, phaseIdle)
	pt.touch(time.Now())
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the total deadline did not fire")
	}
	assert.ErrorIs(t, context.Cause(ctx), errDeadline)
	assert.GreaterOrEqual(t, time.Since(start), 55*time.Millisecond)

	ctx2, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	pt2 := newPhaseTimer(cancel2, time.Hour, time.Now().Add(-time.Second))
	defer pt2.stop()
	pt2.arm(time.Hour, phaseConnect)
	select {
	case <-ctx2.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a past deadline did not cancel")
	}
	assert.ErrorIs(t, context.Cause(ctx2), errDeadline)
}

// The CPU meter reports the process's CPU use over the last second as a
// fraction of GOMAXPROCS: a goroutine spinning for a second shows up.
func TestCPUMeter(t *testing.T) {
	var m cpuMeter
	start := time.Now()
	_, ok := m.sample(start)
	if _, known := processCPU(); !known {
		t.Skip("no process CPU time here")
	}
	assert.False(t, ok, "one sample gives no rate")
	for time.Since(start) < 1100*time.Millisecond {
	}
	u, ok := m.sample(time.Now())
	require.True(t, ok)
	assert.Greater(t, u, 0.05/float64(runtime.GOMAXPROCS(0)), "a second of spinning: at least 5 % of one core even on a busy machine")
	assert.LessOrEqual(t, u, 1.05)
	again, _ := m.sample(time.Now())
	assert.Equal(t, u, again, "within a second the last value stands")
}
