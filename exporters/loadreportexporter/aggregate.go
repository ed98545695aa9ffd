package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"math"
	"strings"
)

// overflowValue names the row, error type or dimension value that collects
// what a limit left out.
const overflowValue = "_OTHER"

// groupKey names one row of the report.
type groupKey struct {
	Target, Model, Scenario string
}

var overflowKey = groupKey{overflowValue, overflowValue, overflowValue}

// group accumulates the requests of one target/model/scenario from spans.
type group struct {
	key                 groupKey
	requests, successes int64
	cancelled           int64
	errors              map[string]int64 // error.type → count (cancelled types included)
	inputTokens         int64
	outputTokens        int64 // of successful requests
	good                int64 // successful requests meeting every goodput objective
	busy                float64
	first, last         int64 // unix nanos: earliest start, latest end
	ttft, itl, tpot     *sketch
	e2e                 *sketch
	ttfa                *sketch // reasoning models' time to first answer; nil until one is seen
	clientDelay         *sketch // the client's own delay at the first token (kernel timestamps); nil until one is seen
	generatorCPU        *sketch // the generator process's CPU use when each request ended; nil until one is seen
	spec                sketchSpec
	itlFromEvents       int64 // requests whose ITL came from chunk events
	itlFromTPOT         int64 // requests whose ITL is their mean gap (TPOT)
}

func newGroup(k groupKey, spec sketchSpec) *group {
	return &group{key: k, spec: spec, errors: map[string]int64{}, ttft: spec.newSketch(), itl: spec.newSketch(),
		tpot: spec.newSketch(), e2e: spec.newSketch(), first: math.MaxInt64}
}

// addError counts one failed request of errType, folding types beyond
// maxTypes into _OTHER. It reports whether the type was folded.
func (g *group) addError(errType string, maxTypes int) bool {
	if _, ok := g.errors[errType]; !ok && len(g.errors) >= maxTypes {
		g.errors[overflowValue]++
		return true
	}
	g.errors[errType]++
	return false
}

func (g *group) merge(o *group) {
	g.requests += o.requests
	g.successes += o.successes
	g.cancelled += o.cancelled
	for k, v := range o.errors {
		g.errors[k] += v
	}
	g.inputTokens += o.inputTokens
	g.outputTokens += o.outputTokens
	g.good += o.good
	g.busy += o.busy
	g.first = min(g.first, o.first)
	g.last = max(g.last, o.last)
	g.ttft.merge(o.ttft)
	g.itl.merge(o.itl)
	g.tpot.merge(o.tpot)
	g.e2e.merge(o.e2e)
	g.mergeInto(&g.ttfa, o.ttfa)
	g.mergeInto(&g.clientDelay, o.clientDelay)
	g.mergeInto(&g.generatorCPU, o.generatorCPU)
	g.itlFromEvents += o.itlFromEvents
	g.itlFromTPOT += o.itlFromTPOT
}

// isCancelled reports whether errType is one of the configured cancellation types.
func isCancelled(errType string, cancelled []string) bool {
	for _, c := range cancelled {
		if strings.EqualFold(c, errType) {
			return true
		}
	}
	return false
}

// tpoint is one timeline interval.
type tpoint struct {
	started, completed, errors int64
	outputTokens               int64
	busy                       float64 // request-seconds inside the interval
	targetRate                 float64 // highest offered rate seen, 0 when unknown
	cap                        float64 // highest in-flight bound seen (llm_loadgen.concurrency_cap), 0 when unknown
	ttft, e2e                  *sketch // of requests sent in the interval
}

// timeline holds run-wide points of a fixed width that doubles whenever more
// than maxPoints would be needed, so memory stays bounded for any run length.
type timeline struct {
	spec      sketchSpec
	origin    int64 // unix nanos of point 0
	res       int64 // width of a point, nanos
	maxPoints int
	points    []*tpoint
}

func newTimeline(spec sketchSpec, res int64, maxPoints int) *timeline {
	return &timeline{spec: spec, res: res, maxPoints: maxPoints}
}

// at returns the point that covers t (unix nanos), growing or coarsening the
// timeline as needed.
func (tl *timeline) at(t int64) *tpoint {
	if len(tl.points) == 0 {
		tl.origin = t - t%tl.res
		tl.points = append(tl.points, &tpoint{})
	}
	if t < tl.origin {
		k := int((tl.origin - t + tl.res - 1) / tl.res)
		if k+len(tl.points) > 4*tl.maxPoints {
			// Far in the past: coarsen first so that prepending stays bounded.
			for k+len(tl.points) > tl.maxPoints && tl.coarsen() {
				k = int((tl.origin - t + tl.res - 1) / tl.res)
			}
		}
		pre := make([]*tpoint, k, k+len(tl.points))
		for i := range pre {
			pre[i] = &tpoint{}
		}
		tl.points = append(pre, tl.points...)
		tl.origin -= int64(k) * tl.res
	}
	idx := int((t - tl.origin) / tl.res)
	for idx >= 4*tl.maxPoints && tl.coarsen() {
		idx = int((t - tl.origin) / tl.res)
	}
	for len(tl.points) <= idx {
		tl.points = append(tl.points, &tpoint{})
	}
	for len(tl.points) > tl.maxPoints && tl.coarsen() {
	}
	return tl.points[int((t-tl.origin)/tl.res)]
}

// coarsen doubles the point width, merging neighbours. It reports false when
// the width cannot grow any more.
func (tl *timeline) coarsen() bool {
	if tl.res > math.MaxInt64/4 {
		return false
	}
	// Keep points aligned to multiples of the new width.
	if (tl.origin/tl.res)%2 != 0 {
		tl.points = append([]*tpoint{{}}, tl.points...)
		tl.origin -= tl.res
	}
	merged := make([]*tpoint, 0, (len(tl.points)+1)/2)
	for i := 0; i < len(tl.points); i += 2 {
		p := tl.points[i]
		if i+1 < len(tl.points) {
			p.merge(tl.points[i+1], tl.spec)
		}
		merged = append(merged, p)
	}
	tl.points = merged
	tl.res *= 2
	return true
}

func (p *tpoint) merge(o *tpoint, spec sketchSpec) {
	p.started += o.started
	p.completed += o.completed
	p.errors += o.errors
	p.outputTokens += o.outputTokens
	p.busy += o.busy
	p.targetRate = max(p.targetRate, o.targetRate)
	p.cap = max(p.cap, o.cap)
	if o.ttft != nil {
		p.sketchTTFT(spec).merge(o.ttft)
	}
	if o.e2e != nil {
		p.sketchE2E(spec).merge(o.e2e)
	}
}

func (p *tpoint) sketchTTFT(spec sketchSpec) *sketch {
	if p.ttft == nil {
		p.ttft = spec.newSketch()
	}
	return p.ttft
}

func (p *tpoint) sketchE2E(spec sketchSpec) *sketch {
	if p.e2e == nil {
		p.e2e = spec.newSketch()
	}
	return p.e2e
}

// addBusy spreads a request's time [start, end) over the points it overlaps
// (Little's law: the mean concurrency of a point is its busy time / width).
func (tl *timeline) addBusy(start, end int64) {
	if end <= start {
		return
	}
	tl.at(start)
	tl.at(end - 1)
	for i := int((start - tl.origin) / tl.res); i < len(tl.points); i++ {
		lo := tl.origin + int64(i)*tl.res
		hi := lo + tl.res
		if lo >= end {
			break
		}
		overlap := min(hi, end) - max(lo, start)
		if overlap > 0 {
			tl.points[i].busy += float64(overlap) / 1e9
		}
	}
}

// addTo adds v to the sketch *p of a latency only some requests have,
// creating it on first use.
func (g *group) addTo(p **sketch, v float64) {
	if *p == nil {
		*p = g.spec.newSketch()
	}
	(*p).add(v)
}

// mergeInto merges o, when there is one, into the sketch *p.
func (g *group) mergeInto(p **sketch, o *sketch) {
	if o == nil {
		return
	}
	if *p == nil {
		*p = g.spec.newSketch()
	}
	(*p).merge(o)
}
