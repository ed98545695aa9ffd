package loadreportexporter // import "github.com/otelcol-llm/otelcol-llm/exporters/loadreportexporter"

import (
	"fmt"
	"os"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// state is everything the exporter has learnt about the run. It is guarded
// by the exporter's lock.
type state struct {
	cfg          *Config
	spec         sketchSpec // sketches of the rows
	timelineSpec sketchSpec // smaller sketches of the timeline points
	now          func() time.Time

	groups   map[groupKey]*group
	timeline *timeline
	workload workloadState
	// baseline is baseline.path's report, loaded at start (nil: none).
	baseline *Report

	spansSeen        int64 // spans other than span_guard summaries
	summaries        int64
	summaryReceived  int64
	summaryDropped   int64
	summaryFolded    int64
	summaryDroppedBy map[string]int64

	streams map[string]*stream
	gpus    map[string]*gpuState

	firstArrival, lastArrival time.Time // wall clock, for exit.stop_after / stop_when_idle

	tel pending

	// runID is the llm_loadgen.run.id of the run this state reports ("" for
	// data without one); dist follows the run's shards (shards.go).
	runID string
	dist  *distState

	// facts are the GenAI facts of the span consumeSpan read last (reused
	// from span to span).
	facts genai.SpanFacts
	// key is the row key of the request span consumeSpan counted last.
	key groupKey

	// inherit holds, during one consumeTraces call, the scenario of each
	// trace that names one on any of its spans.
	inherit map[pcommon.TraceID]string

	// jn is the exporter's join of client and server spans (shared by every
	// run's state); joinSt this run's side of it (decompose.go).
	jn     *joiner
	joinSt *joinState
	// server is what the inference server's /metrics said (servermetrics.go).
	server *serverState

	// dir is the folder of this state's report; csv its requests.csv rows
	// (nil when the csv format is off).
	dir string
	csv *requestTable
}

func newState(cfg *Config, now func() time.Time, jn *joiner) *state {
	spec := sketchSpec{relativeAccuracy: cfg.Limits.RelativeAccuracy, maxBins: cfg.Limits.MaxSketchBins}
	tspec := spec
	tspec.maxBins = min(spec.maxBins, 512)
	return &state{
		cfg:              cfg,
		spec:             spec,
		timelineSpec:     tspec,
		now:              now,
		groups:           map[groupKey]*group{},
		timeline:         newTimeline(tspec, int64(cfg.Limits.TimelineResolution), cfg.Limits.MaxTimelinePoints),
		summaryDroppedBy: map[string]int64{},
		streams:          map[string]*stream{},
		gpus:             map[string]*gpuState{},
		dir:              cfg.Directory,
		csv:              newRequestTable(cfg),
		jn:               jn,
	}
}

func newRequestTable(cfg *Config) *requestTable {
	if !slices.Contains(cfg.Formats, FormatCSV) {
		return nil
	}
	return &requestTable{}
}

// flushCSV appends the buffered requests.csv rows to the file. Rows that
// cannot be written are dropped (the buffer stays bounded) and counted.
func (s *state) flushCSV() error {
	if s.csv == nil {
		return nil
	}
	rows := s.csv.pendingRows()
	err := os.MkdirAll(s.dir, 0o755)
	if err == nil {
		err = s.csv.flush(s.dir)
	}
	if err != nil {
		s.csv.discard()
		s.tel.csvDropped += rows
		return fmt.Errorf("writing %s: %w", csvFileName, err)
	}
	s.tel.csvWritten += rows
	return nil
}

func (s *state) observeArrival() {
	t := s.now()
	if s.firstArrival.IsZero() {
		s.firstArrival = t
	}
	s.lastArrival = t
}

// requestsSeen is the number of requests counted so far, from spans or, when
// there are none, from the llm.requests metric.
func (s *state) requestsSeen() int64 {
	var n int64
	for _, g := range s.groups {
		n += g.requests
	}
	if n > 0 {
		return n
	}
	for _, st := range s.streams {
		if st.role == roleRequests {
			n += int64(st.value)
		}
	}
	return n
}
