package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// One report per run: data whose resource carries llm_loadgen.run.id goes
// to the state of that run (its shards merged there) and is written to
// <directory>/run-<id>/; data without a run id keeps the report in
// <directory> itself.

func runIDOf(res pcommon.Map) string {
	if v, ok := res.Get(genai.AttrLoadgenRunID); ok {
		return v.AsString()
	}
	return ""
}

// stateFor returns the state of a run id ("" is the main state). Beyond
// shards.max_runs run ids, further ones go to the main state.
func (e *reportExporter) stateFor(runID string) *state {
	if runID == "" {
		return e.st
	}
	if st, ok := e.runs[runID]; ok {
		return st
	}
	if len(e.runs) >= e.cfg.Shards.MaxRuns {
		return e.st
	}
	if e.runs == nil {
		e.runs = map[string]*state{}
	}
	st := newState(e.cfg, e.st.now, e.st.jn)
	st.runID, st.baseline = runID, e.st.baseline
	st.dir = filepath.Join(e.cfg.Directory, runDir(runID))
	e.runs[runID] = st
	return st
}

// consumeTracesByRun routes the resources of td to the states of their runs.
func (e *reportExporter) consumeTracesByRun(td ptrace.Traces) map[string]int64 {
	rss := td.ResourceSpans()
	ids := map[string]bool{}
	for i := 0; i < rss.Len(); i++ {
		ids[runIDOf(rss.At(i).Resource().Attributes())] = true
	}
	if len(ids) <= 1 {
		for id := range ids {
			return e.stateFor(id).consumeTraces(td)
		}
		return e.st.consumeTraces(td)
	}
	parts := map[string]ptrace.Traces{}
	for i := 0; i < rss.Len(); i++ {
		id := runIDOf(rss.At(i).Resource().Attributes())
		p, ok := parts[id]
		if !ok {
			p = ptrace.NewTraces()
			parts[id] = p
		}
		rss.At(i).CopyTo(p.ResourceSpans().AppendEmpty())
	}
	out := map[string]int64{}
	for id, p := range parts {
		for k, v := range e.stateFor(id).consumeTraces(p) {
			out[k] += v
		}
	}
	return out
}

// consumeMetricsByRun routes the resources of md to the states of their runs.
func (e *reportExporter) consumeMetricsByRun(md pmetric.Metrics) map[string]int64 {
	rms := md.ResourceMetrics()
	ids := map[string]bool{}
	for i := 0; i < rms.Len(); i++ {
		ids[runIDOf(rms.At(i).Resource().Attributes())] = true
	}
	if len(ids) <= 1 {
		for id := range ids {
			return e.stateFor(id).consumeMetrics(md)
		}
		return e.st.consumeMetrics(md)
	}
	parts := map[string]pmetric.Metrics{}
	for i := 0; i < rms.Len(); i++ {
		id := runIDOf(rms.At(i).Resource().Attributes())
		p, ok := parts[id]
		if !ok {
			p = pmetric.NewMetrics()
			parts[id] = p
		}
		rms.At(i).CopyTo(p.ResourceMetrics().AppendEmpty())
	}
	out := map[string]int64{}
	for id, p := range parts {
		for k, v := range e.stateFor(id).consumeMetrics(p) {
			out[k] += v
		}
	}
	return out
}

// states returns the main state and every run's, runs sorted by id.
func (e *reportExporter) states() []*state {
	ids := make([]string, 0, len(e.runs))
	for id := range e.runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := []*state{e.st}
	for _, id := range ids {
		out = append(out, e.runs[id])
	}
	return out
}

// takePending returns and clears what every state has for the exporter's
// own telemetry.
func (e *reportExporter) takePending() pending {
	var p pending
	if e.st.jn != nil {
		p.joined, p.unjoined = e.st.jn.takeTelemetry()
	}
	for _, st := range e.states() {
		q := st.tel
		st.tel = pending{}
		p.errorTypesFolded += q.errorTypesFolded
		p.gpusFolded += q.gpusFolded
		p.csvWritten += q.csvWritten
		p.csvDropped += q.csvDropped
		for k, n := range q.ignored {
			if p.ignored == nil {
				p.ignored = map[[2]string]int64{}
			}
			p.ignored[k] += n
		}
	}
	return p
}

// arrivals returns the first and last arrival over every state.
func (e *reportExporter) arrivals() (first, last time.Time) {
	for _, st := range e.states() {
		if st.firstArrival.IsZero() {
			continue
		}
		if first.IsZero() || st.firstArrival.Before(first) {
			first = st.firstArrival
		}
		if st.lastArrival.After(last) {
			last = st.lastArrival
		}
	}
	return first, last
}

func (s *state) hasData() bool {
	return s.spansSeen > 0 || s.summaries > 0 || len(s.groups) > 0 || len(s.streams) > 0 || len(s.gpus) > 0 || s.dist != nil
}

// runDir is the folder of a run's report: run-<id> with every character
// outside [A-Za-z0-9._-] replaced by _.
func runDir(id string) string {
	var b strings.Builder
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return "run-" + b.String()
}

// write builds every report (the main one when it has data or no run has
// been seen, and one per run id) and writes them. It returns the report
// with the worst verdict, which gates the exit status.
func (e *reportExporter) write(ctx context.Context, final bool) (*Report, error) {
	e.mu.Lock()
	jobs, errs := e.buildLocked(final)
	p := e.takePending()
	e.mu.Unlock()
	e.tel.flushPending(ctx, &p)
	worst, werrs := e.writeJobs(ctx, jobs, final)
	errs = append(errs, werrs...)
	e.logVerdict(worst)
	if err := errors.Join(errs...); err != nil {
		e.logger.Error("Load report not written", zap.Error(err))
		return worst, err
	}
	return worst, nil
}

// reportJob is one report to write and its folder.
type reportJob struct {
	dir string
	r   *Report
}

// buildLocked settles the joins due (all of them when final), flushes the
// request CSVs and builds the reports to write.
func (e *reportExporter) buildLocked(final bool) ([]reportJob, []error) {
	var jobs []reportJob
	var errs []error
	if jn := e.st.jn; jn.enabled() {
		jn.expire(e.now())
		if final {
			jn.giveUpAll(unjoinedRunEnd)
		}
	}
	for _, st := range e.states() {
		if err := st.flushCSV(); err != nil {
			errs = append(errs, err)
		}
		switch {
		case st.runID == "" && (len(e.runs) == 0 || st.hasData()):
			jobs = append(jobs, reportJob{e.cfg.Directory, st.build(final)})
		case st.runID != "":
			jobs = append(jobs, reportJob{filepath.Join(e.cfg.Directory, runDir(st.runID)), st.build(final)})
		}
	}
	return jobs, errs
}

// writeJobs writes the reports and returns the one with the worst verdict
// among those written.
func (e *reportExporter) writeJobs(ctx context.Context, jobs []reportJob, final bool) (worst *Report, errs []error) {
	for _, j := range jobs {
		if j.dir != e.cfg.Directory {
			if err := os.MkdirAll(j.dir, 0o755); err != nil {
				errs = append(errs, fmt.Errorf("run %s: %w", j.r.RunID, err))
				continue
			}
		}
		if err := e.writeReport(ctx, j.dir, j.r, final); err != nil {
			errs = append(errs, err)
		}
		// With runs, a main report without requests (the gateway's own
		// metrics, say) does not gate: its NO_DATA verdict says nothing
		// about a run.
		if j.r.RunID == "" && len(jobs) > 1 && j.r.Total.Requests == 0 {
			continue
		}
		if worst == nil || worse(j.r.Verdict, worst.Verdict) {
			worst = j.r
		}
	}
	return worst, errs
}

// logVerdict logs the worst verdict when it changed.
func (e *reportExporter) logVerdict(worst *Report) {
	if worst == nil || worst.Verdict == e.lastVerdict {
		return
	}
	fields := []zap.Field{zap.String("verdict", worst.Verdict), zap.String("summary", worst.describe())}
	if worst.RunID != "" {
		fields = append(fields, zap.String("run_id", worst.RunID))
	}
	e.logger.Info("Load report verdict", fields...)
	e.lastVerdict = worst.Verdict
}
