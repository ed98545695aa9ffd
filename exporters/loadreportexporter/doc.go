// Package loadreportexporter implements the load_report exporter: it turns the
// client spans of a load run (and/or the GenAI metrics derived from them, the
// span_guard loss counters and GPU metrics) into a load-test report with SLO
// verdicts, written as report.json, report.md and a self-contained
// report.html with inline SVG charts.
package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"
