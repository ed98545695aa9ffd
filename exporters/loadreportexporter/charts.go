package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The charts are drawn here as inline SVG (no script, no external file), so
// that report.html is one self-contained file.

const (
	chartW, chartH         = 720, 280
	padL, padR, padT, padB = 64, 16, 28, 44
	plotW                  = chartW - padL - padR
	plotH                  = chartH - padT - padB
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"}

type xy struct{ x, y float64 }

type series struct {
	name   string
	class  string // extra CSS class of the line, e.g. "target"
	color  string
	dashed bool
	points []xy // NaN y breaks the line
}

type marker struct {
	x, y  float64
	label string
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	// The last tick is at or above hi, so that it can be the top of the axis.
	var ticks []float64
	last := math.Ceil(hi/step-1e-9) * step
	for v := math.Ceil(lo/step) * step; v <= last+step*1e-9; v += step {
		ticks = append(ticks, v)
	}
	return ticks
}

// within keeps the ticks inside [lo, hi].
func within(ticks []float64, lo, hi float64) []float64 {
	out := ticks[:0]
	for _, t := range ticks {
		if t >= lo-1e-9*math.Abs(hi-lo) && t <= hi+1e-9*math.Abs(hi-lo) {
			out = append(out, t)
		}
	}
	return out
}

func fmtTick(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.4g", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

type svgBuilder struct{ b strings.Builder }

func (s *svgBuilder) f(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func openSVG(id, title string) *svgBuilder {
	s := &svgBuilder{}
	s.f(`<svg id="%s" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		id, chartW, chartH, chartW, chartH, html.EscapeString(title))
	s.f(`<title>%s</title>`, html.EscapeString(title))
	s.f(`<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`, chartW, chartH)
	return s
}

func (s *svgBuilder) axes(xTicks, yTicks []float64, sx, sy func(float64) float64, xLabel, yLabel string) {
	for _, t := range yTicks {
		y := sy(t)
		s.f(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`, padL, y, padL+plotW, y)
		s.f(`<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#444">%s</text>`, padL-6, y+4, fmtTick(t))
	}
	for _, t := range xTicks {
		x := sx(t)
		s.f(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#bbb"/>`, x, padT+plotH, x, padT+plotH+4)
		s.f(`<text x="%.1f" y="%d" font-size="11" text-anchor="middle" fill="#444">%s</text>`, x, padT+plotH+16, fmtTick(t))
	}
	s.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`, padL, padT+plotH, padL+plotW, padT+plotH)
	s.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`, padL, padT, padL, padT+plotH)
	s.f(`<text x="%d" y="%d" font-size="12" text-anchor="middle" fill="#222">%s</text>`, padL+plotW/2, chartH-6, html.EscapeString(xLabel))
	s.f(`<text x="14" y="%d" font-size="12" text-anchor="middle" fill="#222" transform="rotate(-90 14 %d)">%s</text>`,
		padT+plotH/2, padT+plotH/2, html.EscapeString(yLabel))
}

func (s *svgBuilder) close() string {
	s.f(`</svg>`)
	return s.b.String()
}

func emptyChart(id, title, why string) string {
	s := openSVG(id, title)
	s.f(`<text class="empty" x="%d" y="%d" font-size="14" text-anchor="middle" fill="#777">%s</text>`, chartW/2, chartH/2, html.EscapeString(why))
	return s.close()
}

// lineChart draws series on linear axes; markers are circled and labelled.
func lineChart(id, title, xLabel, yLabel string, ss []series, marks []marker) string {
	xmin, xmax, ymax, ok := lineBounds(ss)
	if !ok {
		return emptyChart(id, title, "no data")
	}
	yTicks := niceTicks(0, ymax*1.05, 5)
	ytop := yTicks[len(yTicks)-1]
	xTicks := within(niceTicks(xmin, xmax, 8), xmin, xmax)
	sx := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*plotW }
	sy := func(y float64) float64 { return padT + plotH - y/ytop*plotH }
	s := openSVG(id, title)
	s.axes(xTicks, yTicks, sx, sy, xLabel, yLabel)
	for i, se := range ss {
		s.line(se, sx, sy)
		// legend
		lx := padL + 8 + i*140
		s.f(`<rect x="%d" y="8" width="12" height="4" fill="%s"/><text x="%d" y="14" font-size="11" fill="#222">%s</text>`,
			lx, se.color, lx+16, html.EscapeString(se.name))
	}
	for _, m := range marks {
		s.f(`<circle class="knee" cx="%.1f" cy="%.1f" r="7" fill="none" stroke="#d62728" stroke-width="2"/>`, sx(m.x), sy(m.y))
		s.f(`<text x="%.1f" y="%.1f" font-size="12" fill="#d62728">%s</text>`, sx(m.x)+10, sy(m.y)-10, html.EscapeString(m.label))
	}
	return s.close()
}

// lineBounds is the x range and the y maximum of the series' points, widened
// so that neither axis is empty; ok is false when no point has a y.
func lineBounds(ss []series) (xmin, xmax, ymax float64, ok bool) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, se := range ss {
		for _, p := range se.points {
			if math.IsNaN(p.y) {
				continue
			}
			xmin, xmax, ymax = math.Min(xmin, p.x), math.Max(xmax, p.x), math.Max(ymax, p.y)
			ok = true
		}
	}
	if xmax <= xmin {
		xmin, xmax = xmin-0.5, xmax+0.5
	}
	if ymax <= 0 {
		ymax = 1
	}
	return xmin, xmax, ymax, ok
}

// line draws one series as a path broken at its NaN points, with a dot on
// each point when there are few.
func (s *svgBuilder) line(se series, sx, sy func(float64) float64) {
	var d strings.Builder
	pen := false
	for _, p := range se.points {
		if math.IsNaN(p.y) {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, sx(p.x), sy(p.y))
		pen = true
	}
	dash := ""
	if se.dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	class := "series"
	if se.class != "" {
		class += " " + se.class
	}
	s.f(`<path class="%s" d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, class, strings.TrimSpace(d.String()), se.color, dash)
	for _, p := range se.points {
		if !math.IsNaN(p.y) && len(se.points) <= 60 {
			s.f(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`, sx(p.x), sy(p.y), se.color)
		}
	}
}

// histogramChart draws bins as bars on a log-spaced axis (one bar per bin).
func histogramChart(id, title, xLabel string, bins []HistBin) string {
	total := 0.0
	ymax := 0.0
	for _, b := range bins {
		total += b.Count
		ymax = math.Max(ymax, b.Count)
	}
	if total == 0 {
		return emptyChart(id, title, "no data")
	}
	yTicks := niceTicks(0, ymax*1.05, 5)
	ytop := yTicks[len(yTicks)-1]
	sy := func(y float64) float64 { return padT + plotH - y/ytop*plotH }
	bw := float64(plotW) / float64(len(bins))
	s := openSVG(id, title)
	s.axes(nil, yTicks, func(float64) float64 { return 0 }, sy, xLabel, "requests / gaps")
	for i, b := range bins {
		x := padL + float64(i)*bw
		h := padT + plotH - sy(b.Count)
		s.f(`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#1f77b4"><title>%s–%s s: %s</title></rect>`,
			x+1, sy(b.Count), math.Max(bw-2, 1), h, fmtTick(b.Lo), fmtTick(b.Hi), fmtTick(b.Count))
		if i%4 == 0 || i == len(bins)-1 {
			s.f(`<text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="#444">%s</text>`, x+bw/2, padT+plotH+16, fmtTick(b.Lo))
		}
	}
	return s.close()
}

// barChart draws labelled horizontal bars (error breakdown).
func barChart(id, title string, labels []string, values []float64, colors []string) string {
	if len(values) == 0 {
		return emptyChart(id, title, "no errors")
	}
	vmax := 0.0
	for _, v := range values {
		vmax = math.Max(vmax, v)
	}
	rowH := math.Min(28, float64(plotH)/float64(len(values)))
	s := openSVG(id, title)
	for i, v := range values {
		y := padT + float64(i)*rowH
		w := v / vmax * (plotW - 160)
		s.f(`<text x="%d" y="%.1f" font-size="12" text-anchor="end" fill="#222">%s</text>`, padL+110, y+rowH*0.65, html.EscapeString(labels[i]))
		s.f(`<rect class="bar" x="%d" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, padL+116, y+2, math.Max(w, 1), rowH-4, colors[i])
		s.f(`<text x="%.1f" y="%.1f" font-size="12" fill="#222">%s</text>`, float64(padL+120)+w, y+rowH*0.65, fmtTick(v))
	}
	return s.close()
}

func nanIfNil(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// charts returns the report's SVG charts by name.
func charts(r *Report) map[string]string {
	pts := r.Timeline.Points
	out := map[string]string{
		"latency_over_time": latencyOverTimeChart(pts),
		"ttft_histogram":    histogramChart("ttft-histogram", "TTFT distribution", "time to first token (s, log-spaced bins)", r.Histograms.TTFT),
		"itl_histogram":     histogramChart("itl-histogram", "ITL distribution", "inter-token latency (s, log-spaced bins)", r.Histograms.ITL),
		"rate":              rateChart(pts),
		"load_curve":        loadCurveChart(r.LoadCurve),
		"errors":            errorsChart(r.Total.ErrorsByType),
	}
	if sv := r.Server; sv != nil && len(sv.Timeline) > 0 {
		out["server_gauges"] = serverGaugeChart(sv)
	}
	if r.ServerSide != nil {
		out["server_side"] = stackedChart("server-side", "Where the time went: client and server parts at TTFT and E2E percentiles", r.ServerSide)
	}
	return out
}

// latencyOverTimeChart draws the latency percentiles over time: TTFT when
// measured, else E2E.
func latencyOverTimeChart(pts []TimePoint) string {
	ttft := false
	for _, p := range pts {
		if p.TTFTP50 != nil {
			ttft = true
			break
		}
	}
	pick := func(p TimePoint) [3]*float64 {
		if ttft {
			return [3]*float64{p.TTFTP50, p.TTFTP95, p.TTFTP99}
		}
		return [3]*float64{p.E2EP50, p.E2EP95, p.E2EP99}
	}
	name := "E2E"
	if ttft {
		name = "TTFT"
	}
	var lat []series
	for qi, q := range []string{"p50", "p95", "p99"} {
		se := series{name: name + " " + q, color: palette[qi]}
		for _, p := range pts {
			se.points = append(se.points, xy{p.OffsetS, nanIfNil(pick(p)[qi])})
		}
		lat = append(lat, se)
	}
	return lineChart("latency-over-time", name+" percentiles over time", "seconds since start", "seconds", lat, nil)
}

// rateChart draws the achieved request rate against the target.
func rateChart(pts []TimePoint) string {
	achieved := series{name: "achieved (sent/s)", color: palette[0]}
	target := series{name: "target", class: "target", color: palette[1], dashed: true}
	for _, p := range pts {
		achieved.points = append(achieved.points, xy{p.OffsetS, p.AchievedRPS})
		target.points = append(target.points, xy{p.OffsetS, nanIfNil(p.TargetRPS)})
	}
	return lineChart("rate", "Achieved vs target request rate", "seconds since start", "requests / s", []series{achieved, target}, nil)
}

// loadCurveChart draws a sweep's latency against its offered load, the knee
// circled; lc is nil when the run was not a sweep.
func loadCurveChart(lc *LoadCurve) string {
	if lc == nil {
		return emptyChart("load-curve", "Latency vs offered load", "fewer than three load levels: not a sweep")
	}
	curve := series{name: lc.Points[0].Latency + " p95", color: palette[0]}
	for _, p := range lc.Points {
		curve.points = append(curve.points, xy{p.OfferedRPS, p.LatencyP95})
	}
	var marks []marker
	if lc.Knee != nil {
		marks = append(marks, marker{lc.Knee.OfferedRPS, lc.Knee.LatencyP95, fmt.Sprintf("knee %s req/s", fmtTick(lc.Knee.OfferedRPS))})
	}
	return lineChart("load-curve", "Latency vs offered load", "offered load (requests / s, "+lc.Basis+")", "seconds", []series{curve}, marks)
}

// errorsChart draws the errors by type, cancellations in orange.
func errorsChart(errs []ErrorCount) string {
	var labels []string
	var values []float64
	var colors []string
	for _, e := range errs {
		labels = append(labels, e.Type)
		values = append(values, float64(e.Count))
		c := "#d62728"
		if e.Cancelled {
			c = "#ff7f0e"
		}
		colors = append(colors, c)
	}
	return barChart("errors", "Errors by error.type (cancelled in orange)", labels, values, colors)
}
