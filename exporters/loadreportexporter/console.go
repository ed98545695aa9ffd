package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// reportDir is the folder a report was written to.
func (e *reportExporter) reportDir(r *Report) string {
	if r.RunID == "" {
		return e.cfg.Directory
	}
	return filepath.Join(e.cfg.Directory, runDir(r.RunID))
}

// consoleSummary is what print_summary prints when the run is over: the
// verdict with its reason, the SLO table, the run in one line, the notes,
// and where the report files are.
func consoleSummary(r *Report, dir string, formats []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nload_report: %s — %s\n", r.Verdict, r.Summary.Reason)
	writeSLOTable(&b, r.SLOs)
	fmt.Fprintf(&b, "  %s\n", r.Summary.Headline)
	if r.Summary.KeyMetric != "" && !strings.Contains(r.Summary.Reason, r.Summary.KeyValue) {
		fmt.Fprintf(&b, "  %s: %s\n", r.Summary.KeyMetric, r.Summary.KeyValue)
	}
	for _, n := range r.Summary.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	writeReportFiles(&b, dir, formats)
	return b.String()
}

// writeSLOTable writes one aligned line per SLO: value, objective, verdict.
func writeSLOTable(b *strings.Builder, slos []SLOResult) {
	if len(slos) == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SLO\tvalue\tobjective\tverdict")
	for _, s := range slos {
		v := "n/a"
		if s.Value != nil {
			v = fmtSLOValue(s.Unit, *s.Value)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Name, v, s.Objective, s.Verdict)
	}
	_ = tw.Flush()
}

// writeReportFiles names the written reports: the HTML one as the report
// to open, the others after it.
func writeReportFiles(b *strings.Builder, dir string, formats []string) {
	files := make([]string, 0, len(formats))
	main := ""
	for _, f := range formats {
		name := fileNames[f]
		if f == FormatHTML {
			main = filepath.Join(dir, name)
			continue
		}
		files = append(files, name)
	}
	if main != "" {
		fmt.Fprintf(b, "  report: %s (also %s)\n", main, strings.Join(files, ", "))
	} else {
		fmt.Fprintf(b, "  report in %s: %s\n", dir, strings.Join(files, ", "))
	}
}
