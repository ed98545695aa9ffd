package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"math"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
)

// Where a joined request's time went. From the scheduled send, in order:
//
//	client queue   llm_loadgen.queue_time (0 for other clients)
//	connection     DNS + TCP connect + TLS (0 on a reused connection)
//	network        client TTFT − client queue − connection − server TTFT:
//	               the request upload, the network and any gateway both ways,
//	               and the server's work before its clock starts
//	server queue   gen_ai.latency.time_in_queue
//	server other   server TTFT − server queue − prefill (scheduling, tokenizing)
//	prefill        gen_ai.latency.time_in_model_prefill (else the server TTFT
//	               after its queue)
//	decode         client E2E − client TTFT (the stream after the first token)
//
// The first six add up to the client's TTFT and all seven to its E2E. Each
// side's durations are differences on its own clock, so the offset between
// the two clocks does not enter; the network part also holds what the two
// sides count differently (the server's TTFT starts when its engine takes
// the request and ends when it produces the token, not when it is sent).
// A network part below zero is taken as 0 and counted.

// Parts of a request's time, in order.
const (
	partClientQueue = iota
	partConnection
	partNetwork
	partServerQueue
	partServerOther
	partPrefill
	partDecode
	numParts
	numTTFTParts = partDecode // the parts before decode add up to TTFT
)

var partNames = [numParts]string{"client_queue", "connection", "network", "server_queue", "server_other", "prefill", "decode"}

// joinState is one run's joined requests and its unjoined client spans.
type joinState struct {
	clientSpans    int64 // client model calls offered to the join
	waitingClients int64
	joined         int64
	joinedByTrace  int64
	decomposed     int64
	noTTFT         int64 // joined, but either side has no TTFT
	negativeNet    int64
	unjoinedClient map[string]int64

	parts      [numParts]*sketch
	serverTTFT *sketch
	serverE2E  *sketch
	ttft, e2e  stackBins
}

func (s *state) joinState() *joinState {
	if s.joinSt == nil {
		js := &joinState{unjoinedClient: map[string]int64{}, serverTTFT: s.spec.newSketch(), serverE2E: s.spec.newSketch()}
		for i := range js.parts {
			js.parts[i] = s.spec.newSketch()
		}
		gamma := (1 + s.spec.relativeAccuracy) / (1 - s.spec.relativeAccuracy)
		js.ttft, js.e2e = newStackBins(gamma), newStackBins(gamma)
		s.joinSt = js
	}
	return s.joinSt
}

// add decomposes one joined request.
func (js *joinState) add(c *clientSide, sv *serverSide) {
	if !math.IsNaN(sv.e2e) {
		js.serverE2E.add(sv.e2e)
	}
	if math.IsNaN(c.ttft) || math.IsNaN(sv.ttft) {
		js.noTTFT++
		return
	}
	js.serverTTFT.add(sv.ttft)
	var p [numParts]float64
	p[partClientQueue] = max(c.queue, 0)
	p[partConnection] = max(c.connect, 0)
	p[partServerQueue] = nanTo(sv.queue, 0)
	p[partServerQueue] = min(p[partServerQueue], sv.ttft)
	p[partPrefill] = sv.ttft - p[partServerQueue]
	if !math.IsNaN(sv.prefill) && sv.prefill >= 0 && sv.prefill <= p[partPrefill] {
		p[partPrefill] = sv.prefill
	}
	// Below a nanosecond the difference is the float sum's rounding.
	if p[partServerOther] = sv.ttft - p[partServerQueue] - p[partPrefill]; p[partServerOther] < 1e-9 {
		p[partServerOther] = 0
	}
	p[partNetwork] = c.ttft - p[partClientQueue] - p[partConnection] - sv.ttft
	if p[partNetwork] < 0 {
		js.negativeNet++
		p[partNetwork] = 0
	}
	p[partDecode] = max(c.e2e-c.ttft, 0)
	for i, v := range p {
		js.parts[i].add(v)
	}
	js.decomposed++
	js.ttft.add(c.ttft, p[:numTTFTParts])
	js.e2e.add(c.ttft+p[partDecode], p[:])
}

func nanTo(v, d float64) float64 {
	if math.IsNaN(v) {
		return d
	}
	return v
}

// stackBins holds, per logarithmic bin of a total (TTFT or E2E), the count
// and the sums of the parts of the requests in it, so that the parts of the
// requests at a percentile can be read back: bounded memory (a bin per
// relative-accuracy step of the range actually seen, ~1,200 for 1 µs to
// 3 h at 1 %) and parts that add up to the total.
type stackBins struct {
	logGamma float64
	bins     map[int32]*stackBin
	count    int64
}

type stackBin struct {
	n     int64
	total float64
	parts [numParts]float64
}

func newStackBins(gamma float64) stackBins {
	return stackBins{logGamma: math.Log(gamma), bins: map[int32]*stackBin{}}
}

func (b *stackBins) add(total float64, parts []float64) {
	idx := int32(math.MinInt32) // totals of a microsecond or less share one bin
	if total > 1e-6 {
		idx = int32(math.Ceil(math.Log(total) / b.logGamma))
	}
	bin := b.bins[idx]
	if bin == nil {
		bin = &stackBin{}
		b.bins[idx] = bin
	}
	bin.n++
	bin.total += total
	for i, v := range parts {
		bin.parts[i] += v
	}
	b.count++
}

// at returns the bin of the request of rank q·(n−1) by total.
func (b *stackBins) at(q float64) *stackBin {
	if b.count == 0 {
		return nil
	}
	keys := make([]int32, 0, len(b.bins))
	for k := range b.bins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	rank := int64(math.Floor(q * float64(b.count-1)))
	var seen int64
	for _, k := range keys {
		seen += b.bins[k].n
		if seen > rank {
			return b.bins[k]
		}
	}
	return b.bins[keys[len(keys)-1]]
}

// stacksAt are the percentiles the report decomposes.
var stacksAt = []float64{50, 95, 99}

func (b *stackBins) report(nParts int) []Stack {
	var out []Stack
	for _, pct := range stacksAt {
		bin := b.at(pct / 100)
		if bin == nil {
			return nil
		}
		st := Stack{Percentile: pct, TotalS: round(bin.total / float64(bin.n)), Requests: bin.n}
		best := -1
		for i := 0; i < nParts; i++ {
			v := bin.parts[i] / float64(bin.n)
			st.Parts = append(st.Parts, StackPart{Part: partNames[i], S: round(v), Share: round(ratio(v, bin.total/float64(bin.n)))})
			if best < 0 || v > bin.parts[best]/float64(bin.n) {
				best = i
			}
		}
		st.Dominant = partNames[best]
		out = append(out, st)
	}
	return out
}

// serverSideReport is the run's join for the report; nil when no server
// span reached the exporter (the join has nothing to say).
func (s *state) serverSideReport(j *joiner, final bool) *ServerSide {
	if !j.enabled() || j.serverSpans == 0 {
		return nil
	}
	js := s.joinState()
	r := &ServerSide{
		ClientSpans: js.clientSpans, ServerSpans: j.serverSpans, Joined: js.joined, JoinedByTrace: js.joinedByTrace,
		JoinedRatio: round(ratio(float64(js.joined), float64(js.clientSpans))), Decomposed: js.decomposed,
		WithoutTTFT: js.noTTFT, NetworkBelowZero: js.negativeNet,
		UnjoinedClient: copyCounts(js.unjoinedClient), UnjoinedServer: copyCounts(j.unjoinedServer),
		WaitingClient: js.waitingClients, WaitingServer: j.serverWaiting,
		HoldS: j.cfg.Hold.Seconds(), ServerTTFT: latencyOf(js.serverTTFT), ServerE2E: latencyOf(js.serverE2E),
		TTFT: js.ttft.report(numTTFTParts), E2E: js.e2e.report(numParts), Note: joinNote,
	}
	for i, sk := range js.parts {
		if l := latencyOf(sk); l != nil {
			r.Parts = append(r.Parts, PartLatency{Part: partNames[i], Latency: *l})
		}
	}
	r.Dominant = dominantSentence(r.TTFT)
	return r
}

const joinNote = "Client and server parts are each measured on their own clock (durations, so the clocks' offset does not enter). " +
	"network = client TTFT − client queue − connection − server TTFT: the upload, the network and gateways both ways, and what the server does before its TTFT clock starts; values below 0 are counted and taken as 0."

func copyCounts(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

// dominantSentence names the largest part of the TTFT at p95.
func dominantSentence(stacks []Stack) string {
	for _, st := range stacks {
		if st.Percentile != 95 {
			continue
		}
		for _, p := range st.Parts {
			if p.Part == st.Dominant {
				return fmt.Sprintf("At TTFT p95 (%s) the largest part is %s: %s (%.0f %%).",
					humanfmt.Seconds(st.TotalS), p.Part, humanfmt.Seconds(p.S), p.Share*100)
			}
		}
	}
	return ""
}

// Readers of the two sides.

// isServerInference reports whether a SERVER span is an inference request:
// a model-call operation, or a server's gen_ai.latency.* timing (vLLM's
// request span has no gen_ai.operation.name).
func isServerInference(sp ptrace.Span, op string) bool {
	if sp.Kind() != ptrace.SpanKindServer {
		return false
	}
	if op != "" {
		return isModelCall(op)
	}
	found := false
	sp.Attributes().Range(func(k string, _ pcommon.Value) bool {
		found = genai.IsServerLatencyAttr(k)
		return !found
	})
	return found
}

// readClient reads a client model call's timings; TTFT is facts' (the time
// to first chunk from the span's start), else llm_loadgen's own.
func (s *state) readClient(sp ptrace.Span) *clientSide {
	a := sp.Attributes()
	c := &clientSide{st: s, spanID: sp.SpanID(), ttft: math.NaN()}
	if s.facts.TTFT.OK {
		c.ttft = s.facts.TTFT.S
	} else if v, ok := floatAttr(a, genai.AttrLoadgenTTFT); ok {
		c.ttft = v
	}
	c.e2e = float64(int64(sp.EndTimestamp())-int64(sp.StartTimestamp())) / 1e9
	if v, ok := floatAttr(a, genai.AttrLoadgenE2E); ok && v > 0 {
		c.e2e = v
	}
	c.queue, _ = floatAttr(a, genai.AttrLoadgenQueueTime)
	for _, k := range []string{genai.AttrLoadgenDNSTime, genai.AttrLoadgenConnectTime, genai.AttrLoadgenTLSTime} {
		if v, ok := floatAttr(a, k); ok && v > 0 {
			c.connect += v
		}
	}
	return c
}

// readServer reads a server span's timings: the gen_ai.latency.* attributes,
// with the span's duration as its E2E when it names none.
func (s *state) readServer(sp ptrace.Span) *serverSide {
	a := sp.Attributes()
	sv := &serverSide{parent: sp.ParentSpanID(), ttft: math.NaN()}
	if s.facts.TTFT.OK {
		sv.ttft = s.facts.TTFT.S
	}
	get := func(k string) float64 {
		if v, ok := floatAttr(a, k); ok && v >= 0 && !math.IsInf(v, 0) {
			return v
		}
		return math.NaN()
	}
	sv.queue, sv.prefill, sv.decode = get(genai.ServerAttrTimeInQueue), get(genai.ServerAttrTimeInPrefill), get(genai.ServerAttrTimeInDecode)
	sv.e2e = get(genai.ServerAttrE2E)
	if math.IsNaN(sv.e2e) && sp.EndTimestamp() > sp.StartTimestamp() {
		sv.e2e = float64(sp.EndTimestamp()-sp.StartTimestamp()) / 1e9
	}
	return sv
}

// Rendering helpers.

// partColors colours the parts in every chart and table of the section.
var partColors = [numParts]string{"#7f7f7f", "#bcbd22", "#17becf", "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"}

// partCells formats a stack's parts as table cells, one per part in order
// ("—" for decode in a TTFT stack): milliseconds and the share of the total.
func partCells(st Stack) []string {
	out := make([]string, numParts)
	for i := range out {
		out[i] = "—"
	}
	for i, p := range st.Parts {
		out[i] = fmt.Sprintf("%s (%s)", humanfmt.Sig(p.S*1000), humanfmt.Percent(p.Share))
	}
	return out
}

// countsText formats unjoined counts by reason, "none" when there are none.
func countsText(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%s %d", k, m[k])
	}
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

// stackedChart draws one horizontal bar per stack (TTFT and E2E at p50, p95
// and p99), split into the parts, on one time axis, with a legend.
func stackedChart(id, title string, ss *ServerSide) string {
	bars := stackBars(ss)
	if len(bars) == 0 {
		return emptyChart(id, title, "no joined request with a TTFT on both sides")
	}
	vmax := 0.0
	for _, b := range bars {
		vmax = math.Max(vmax, partSum(b.st))
	}
	ticks := within(niceTicks(0, vmax, 6), 0, math.Inf(1))
	top := ticks[len(ticks)-1]
	const left = padL + 40
	width := float64(chartW - left - padR)
	sx := func(v float64) float64 { return left + v/top*width }
	rowH := math.Min(30, float64(plotH-24)/float64(len(bars)))
	s := openSVG(id, title)
	for _, t := range ticks {
		s.f(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, sx(t), padT, sx(t), float64(padT)+rowH*float64(len(bars)))
		s.f(`<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#444">%s</text>`, sx(t), float64(padT)+rowH*float64(len(bars))+14, fmtTick(t))
	}
	for i, b := range bars {
		y := float64(padT) + float64(i)*rowH
		s.f(`<text x="%d" y="%.1f" font-size="12" text-anchor="end" fill="#222">%s</text>`, left-6, y+rowH*0.65, b.label)
		x := 0.0
		for pi, p := range b.st.Parts {
			if p.S > 0 {
				s.f(`<rect class="part %s" x="%.1f" y="%.1f" width="%.2f" height="%.1f" fill="%s"><title>%s %s (%s)</title></rect>`,
					p.Part, sx(x), y+3, p.S/top*width, rowH-6, partColors[pi], p.Part, humanfmt.Seconds(p.S), humanfmt.Percent(p.Share))
			}
			x += p.S
		}
	}
	s.partLegend()
	s.f(`<text x="%d" y="%d" font-size="11" text-anchor="end" fill="#444">seconds</text>`, chartW-padR, chartH-24)
	return s.close()
}

// stackBar is one bar of the stacked chart.
type stackBar struct {
	label string
	st    Stack
}

// stackBars are the bars of the stacked chart: the TTFT stacks, then the
// E2E ones.
func stackBars(ss *ServerSide) []stackBar {
	var bars []stackBar
	for _, st := range ss.TTFT {
		bars = append(bars, stackBar{fmt.Sprintf("TTFT p%g", st.Percentile), st})
	}
	for _, st := range ss.E2E {
		bars = append(bars, stackBar{fmt.Sprintf("E2E p%g", st.Percentile), st})
	}
	return bars
}

// partLegend draws the legend of the parts along the bottom of a chart.
func (s *svgBuilder) partLegend() {
	lx := float64(padL)
	ly := float64(chartH - 10)
	for i, n := range partNames {
		s.f(`<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/><text x="%.1f" y="%.1f" font-size="11" fill="#222">%s</text>`, lx, ly-9, partColors[i], lx+13, ly, n)
		lx += 13 + 7*float64(len(n)) + 12
	}
}

func partSum(st Stack) float64 {
	v := 0.0
	for _, p := range st.Parts {
		v += p.S
	}
	return v
}
