package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	texttemplate "text/template"

	"github.com/otelcol-llm/otelcol-llm/internal/humanfmt"
)

//go:embed templates/report.md.tmpl templates/report.html.tmpl
var templateFS embed.FS

// File names written in the report directory, by format.
var fileNames = map[string]string{FormatJSON: "report.json", FormatMarkdown: "report.md", FormatHTML: "report.html", FormatCSV: csvFileName}

type namedLatency struct {
	Name string
	L    *Latency
}

func templateFuncs(cancelled []string) map[string]any {
	opt := func(f func(float64) string) func(*float64) string {
		return func(p *float64) string {
			if p == nil {
				return "n/a"
			}
			return f(*p)
		}
	}
	ms := func(v float64) string { return humanfmt.Sig(v * 1000) }
	return map[string]any{
		"num":            humanfmt.Sig,
		"int":            humanfmt.Int,
		"pct":            humanfmt.Percent,
		"ms":             ms,
		"secs":           humanfmt.Seconds,
		"mib":            func(v float64) string { return humanfmt.Sig(v / (1 << 20)) },
		"optnum":         opt(humanfmt.Sig),
		"optms":          opt(ms),
		"optpct":         opt(humanfmt.Percent),
		"quantity":       sloLabel,
		"csvIn":          func(files []string) bool { return slices.Contains(files, csvFileName) },
		"sloValue":       sloValueText,
		"latencies":      rowLatencies,
		"cancelledTypes": func() string { return strings.Join(cancelled, "`, `") },
		"partcells":      partCells,
		"pctl":           func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
		"partnames":      func() []string { return partNames[:] },
		"counts":         countsText,
		"amounts":        amountsText,
	}
}

// sloValueText is an SLO's measured value, n/a when there is none.
func sloValueText(s SLOResult) string {
	if s.Value == nil {
		return "n/a"
	}
	return fmtSLOValue(s.Unit, *s.Value)
}

// rowLatencies are the latencies a row has, in the order of the tables.
func rowLatencies(r Row) []namedLatency {
	var out []namedLatency
	for _, l := range []namedLatency{{"TTFT", r.TTFT}, {"first answer", r.TimeToFirstAnswer}, {"ITL", r.ITL}, {"TPOT", r.TPOT}, {"E2E", r.E2E}, {"client delay", r.ClientDelay}} {
		if l.L != nil {
			out = append(out, l)
		}
	}
	return out
}

type renderer struct {
	md   *texttemplate.Template
	html *htmltemplate.Template
}

func newRenderer(cancelled []string) (*renderer, error) {
	funcs := templateFuncs(cancelled)
	md, err := texttemplate.New("report.md.tmpl").Funcs(funcs).ParseFS(templateFS, "templates/report.md.tmpl")
	if err != nil {
		return nil, err
	}
	html, err := htmltemplate.New("report.html.tmpl").Funcs(funcs).ParseFS(templateFS, "templates/report.html.tmpl")
	if err != nil {
		return nil, err
	}
	return &renderer{md: md, html: html}, nil
}

func (rd *renderer) render(format string, r *Report) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	case FormatMarkdown:
		if err := rd.md.Execute(&buf, r); err != nil {
			return nil, err
		}
	case FormatHTML:
		svg := map[string]htmltemplate.HTML{}
		for k, v := range charts(r) {
			svg[k] = htmltemplate.HTML(v) //nolint:gosec // built by charts.go, every text escaped there
		}
		if err := rd.html.Execute(&buf, struct {
			R      *Report
			Charts map[string]htmltemplate.HTML
		}{r, svg}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown format %q", format)
	}
	return buf.Bytes(), nil
}

// writeAtomic writes data to dir/name through a temporary file and a rename,
// so that a reader never sees a half-written report.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err = tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
