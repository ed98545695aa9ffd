package loadgen

import (
	"container/heap"
	"math"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"gonum.org/v1/gonum/stat/distuv"
)

// segment is a piece of the load profile: the target goes linearly from r0
// at t0 to r1 at t1 (seconds since the run's start). The last segment has
// t1 = +Inf and r0 == r1.
type segment struct{ t0, t1, r0, r1 float64 }

// Profile is the target (request rate, or virtual users) over time.
type Profile []segment

func NewProfile(a config.ArrivalConfig) Profile {
	base := a.Rate
	if a.Type == config.ArrivalConcurrency {
		base = float64(a.Concurrency)
	}
	var p Profile
	t, r := 0.0, base
	for _, s := range a.Stages {
		d := s.Duration.Seconds()
		p = append(p, segment{t0: t, t1: t + d, r0: r, r1: s.Target})
		t, r = t+d, s.Target
	}
	return append(p, segment{t0: t, t1: math.Inf(1), r0: r, r1: r})
}

// At returns the target At time t (seconds).
func (p Profile) At(t float64) float64 {
	for _, s := range p {
		if t < s.t1 {
			if math.IsInf(s.t1, 1) {
				return s.r0
			}
			return s.r0 + (s.r1-s.r0)*(t-s.t0)/(s.t1-s.t0)
		}
	}
	return p[len(p)-1].r1
}

// Advance returns the time at which the integral of the rate from t reaches
// w (the inversion method of a non-homogeneous arrival process), or +Inf if
// the rate stays 0.
func (p Profile) Advance(t, w float64) float64 {
	for _, s := range p {
		if t >= s.t1 {
			continue
		}
		a := p.At(t)
		if math.IsInf(s.t1, 1) {
			if a <= 0 {
				return math.Inf(1)
			}
			return t + w/a
		}
		k := (s.r1 - s.r0) / (s.t1 - s.t0)
		span := s.t1 - t
		area := a*span + k*span*span/2
		if w > area {
			w -= area
			t = s.t1
			continue
		}
		if x, ok := rampOffset(a, k, w); ok {
			return t + x
		}
		return s.t1
	}
	return math.Inf(1)
}

// rampOffset solves a·x + k·x²/2 = w for x, the time a ramp starting at
// rate a with slope k takes to cover work w, in a form that stays stable
// when k is 0 or negative; false when it has no positive solution.
func rampOffset(a, k, w float64) (float64, bool) {
	disc := a*a + 2*k*w
	if disc < 0 {
		disc = 0
	}
	den := a + math.Sqrt(disc)
	if den <= 0 {
		return 0, false
	}
	return 2 * w / den, true
}

// OpenLoop draws the start times of an open-loop arrival process: the unit
// work between two arrivals is 1 (constant), Exp(1) (poisson) or
// Gamma(b, b) (gamma, mean 1, burstiness b); the rate profile turns work
// into time.
type OpenLoop struct {
	prof Profile
	unit interface{ Rand() float64 }
	t    float64 // seconds since start of the last arrival
}

func NewOpenLoop(a config.ArrivalConfig, r *Rand64) *OpenLoop {
	o := &OpenLoop{prof: NewProfile(a)}
	switch a.Type {
	case config.ArrivalPoisson:
		o.unit = distuv.Exponential{Rate: 1, Src: r.Source}
	case config.ArrivalGamma:
		o.unit = distuv.Gamma{Alpha: a.Burstiness, Beta: a.Burstiness, Src: r.Source}
	default:
		o.unit = constDist(1)
	}
	return o
}

// Next returns the Next arrival time (seconds since start), +Inf when the
// profile has ended at rate 0.
func (o *OpenLoop) Next() float64 {
	o.t = o.prof.Advance(o.t, o.unit.Rand())
	return o.t
}

// ClosedLoop simulates virtual users: each issues a request, waits for it to
// end, thinks, and issues the next. The number of users follows the
// profile; users above the target retire when they would issue next.
type ClosedLoop struct {
	prof   Profile
	think  distuv.Exponential
	thinks bool
	users  userHeap
	active int
	tick   float64 // next time the user count is compared with the target
}

const closedLoopTick = 0.1 // seconds between checks for added users

func NewClosedLoop(a config.ArrivalConfig, r *Rand64) *ClosedLoop {
	c := &ClosedLoop{prof: NewProfile(a)}
	if a.ThinkTime > 0 {
		c.thinks = true
		c.think = distuv.Exponential{Rate: 1 / a.ThinkTime.Seconds(), Src: r.Source}
	}
	c.Grow(0)
	return c
}

func (c *ClosedLoop) Target(t float64) int { return int(math.Floor(c.prof.At(t) + 1e-9)) }

func (c *ClosedLoop) Grow(t float64) {
	for c.active < c.Target(t) {
		heap.Push(&c.users, t)
		c.active++
	}
	c.tick = t + closedLoopTick
}

// Next returns the time the next user issues a request, +Inf when no user
// is left and the profile stays at 0.
func (c *ClosedLoop) Next() float64 {
	for {
		if len(c.users) == 0 || c.users[0] > c.tick {
			if len(c.users) == 0 && c.prof[len(c.prof)-1].r1 < 1 && c.tick > c.prof[len(c.prof)-1].t0 {
				return math.Inf(1)
			}
			c.Grow(c.tick)
			continue
		}
		t := heap.Pop(&c.users).(float64)
		if c.active > c.Target(t) {
			c.active--
			continue
		}
		return t
	}
}

// Done tells the loop that the request issued at start ended at end
// (seconds); the user thinks and issues again.
func (c *ClosedLoop) Done(end float64) {
	if c.thinks {
		end += c.think.Rand()
	}
	heap.Push(&c.users, end)
}

type userHeap []float64

func (h userHeap) Len() int           { return len(h) }
func (h userHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h userHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *userHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *userHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// At is the offered request rate at t.
func (o *OpenLoop) At(t float64) float64 { return o.prof.At(t) }

// At is the target number of users at t.
func (c *ClosedLoop) At(t float64) float64 { return c.prof.At(t) }
