package live

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
)

// maxProgressSamples bounds the latency samples one progress window keeps.
const maxProgressSamples = 1 << 16

// liveProgress prints, every progress_interval, one line for the person
// watching the run: elapsed time, offered vs achieved rate, requests in
// flight, TTFT and ITL of the requests that finished in the window, and
// errors by type since the start. Everything but sent is touched by the
// output goroutine only.
type liveProgress struct {
	out   io.Writer // nil: no console output
	start time.Time
	prof  loadgen.Profile // offered rate over time; nil in a closed loop
	sent  atomic.Int64

	lastAt             time.Time
	lastSent, lastDone int64
	done, ok           int64
	errs               map[string]int64
	ttft, itl          []float64 // seconds, of the current window
}

func (p *liveProgress) init(out io.Writer, start time.Time, a config.ArrivalConfig) {
	p.out, p.start, p.lastAt = out, start, start
	if a.Type != config.ArrivalConcurrency {
		p.prof = loadgen.NewProfile(a)
	}
	p.errs = map[string]int64{}
}

func (p *liveProgress) add(res *liveResult) {
	p.done++
	if res.ErrorType != "" {
		p.errs[res.ErrorType]++
		return
	}
	p.ok++
	if !res.FirstToken.IsZero() && len(p.ttft) < maxProgressSamples {
		p.ttft = append(p.ttft, res.ttft().Seconds())
	}
	for _, g := range res.Gaps {
		if len(p.itl) >= maxProgressSamples {
			break
		}
		p.itl = append(p.itl, g)
	}
	if len(res.Gaps) == 0 {
		if d := res.tpot(); d > 0 && len(p.itl) < maxProgressSamples {
			p.itl = append(p.itl, d.Seconds())
		}
	}
}

// line renders the progress of the window that ends at now and starts the
// next one.
func (p *liveProgress) line(now time.Time) string {
	elapsed := now.Sub(p.start).Seconds()
	win := now.Sub(p.lastAt).Seconds()
	sent := p.sent.Load()
	var b strings.Builder
	fmt.Fprintf(&b, "%6.0fs ", elapsed)
	if p.prof != nil {
		fmt.Fprintf(&b, " offered %s", humanfmt.Rate(p.offered(p.lastAt.Sub(p.start).Seconds(), elapsed)))
	}
	if win > 0 {
		fmt.Fprintf(&b, "  sent %s  done %s", humanfmt.Rate(float64(sent-p.lastSent)/win), humanfmt.Rate(float64(p.done-p.lastDone)/win))
	}
	fmt.Fprintf(&b, "  in flight %d", max(sent-p.done, 0))
	fmt.Fprintf(&b, "  TTFT p50 %s p95 %s  ITL p50 %s", pctl(p.ttft, 0.5), pctl(p.ttft, 0.95), pctl(p.itl, 0.5))
	fmt.Fprintf(&b, "  errors %s", p.errors())
	p.lastAt, p.lastSent, p.lastDone = now, sent, p.done
	p.ttft, p.itl = p.ttft[:0], p.itl[:0]
	return b.String()
}

// offered is the schedule's mean rate over [from, to] seconds since the
// start, so that it compares with the sent and done rates of the same window.
func (p *liveProgress) offered(from, to float64) float64 {
	from, to = max(from, 0), max(to, 0)
	if to <= from {
		return p.prof.At(to)
	}
	const n = 16 // the profile is piecewise linear: the trapezoid rule is exact but at a stage's corner
	sum := (p.prof.At(from) + p.prof.At(to)) / 2
	for i := 1; i < n; i++ {
		sum += p.prof.At(from + (to-from)*float64(i)/n)
	}
	return sum / n
}

// errors is the error count since the start with its split by error.type,
// largest first: "3 (rate_limit 2, timeout 1)".
func (p *liveProgress) errors() string {
	var total int64
	types := make([]string, 0, len(p.errs))
	for t, n := range p.errs {
		total += n
		types = append(types, t)
	}
	if total == 0 {
		return "0"
	}
	sort.Slice(types, func(i, j int) bool {
		if p.errs[types[i]] != p.errs[types[j]] {
			return p.errs[types[i]] > p.errs[types[j]]
		}
		return types[i] < types[j]
	})
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s %d", t, p.errs[t])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

func pctl(v []float64, q float64) string {
	if len(v) == 0 {
		return "-"
	}
	sort.Float64s(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1 // nearest rank
	return humanfmt.Seconds(v[max(0, min(len(v)-1, i))])
}

// print writes s as one line when console output is on.
func (p *liveProgress) print(s string) {
	if p.out != nil {
		fmt.Fprintln(p.out, s)
	}
}

// describeArrival says in words how requests are scheduled, for the line
// printed when the run starts: "poisson 5 → 60 req/s over 1m0s".
func describeArrival(a config.ArrivalConfig, requests int64, duration time.Duration) string {
	var b strings.Builder
	unit := " req/s"
	start := a.Rate
	if a.Type == config.ArrivalConcurrency {
		unit, start = " users", float64(a.Concurrency)
	}
	b.WriteString(a.Type + " " + humanfmt.Sig(start))
	var d time.Duration
	for _, s := range a.Stages {
		b.WriteString(" → " + humanfmt.Sig(s.Target))
		d += s.Duration
	}
	b.WriteString(unit)
	if d > 0 {
		b.WriteString(" over " + d.String())
	}
	if duration > 0 {
		b.WriteString(", for " + duration.String())
	}
	if requests > 0 {
		b.WriteString(", at most " + humanfmt.Int(requests) + " requests")
	}
	return b.String()
}
