// Command stage runs one stage of `make test` (lint, unit, fuzz-short, e2e,
// deploy-test) and prints one summary line at its end:
//
//	== unit: ok (412 tests in 38 packages, 3m12s; log .tools/logs/unit.log)
//	== e2e: FAILED (2 of 61 tests failed, 7m01s; log .tools/logs/e2e.log)
//
// On failure the failing tests come first, one `--- FAIL: TestX (pkg)` line
// each, then their output (or, where no test failed, the end of the log),
// then the summary line. The whole output is kept in <logs>/<stage>.log, as
// `go test -v` would have printed it (the raw `go test -json` events in
// <stage>.json), and the stage's counts in <stage>.counts, from which
//
//	stage -total lint unit fuzz-short e2e deploy-test
//
// prints the last line of `make test`: `N passed, 0 failed` (`, K skipped`
// when tests were skipped). The stage exits with its command's status.
//
// Tests are counted from `go test -json` events (top-level tests; a
// subtest's failure is listed but counted in its test) and from the
// `ok`/`FAIL` lines scripts/fuzz.sh prints per fuzz target; a stage without
// either (go vet, gofmt, promtool) is summarized by its exit status.
// STAGE_VERBOSE=1 also streams the output while the stage runs; STAGE_RUN
// names the run (make test sets it once) so that -total reads only counts
// of this run.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Bounds on what a failure report prints; the log keeps everything.
const (
	maxTestLines = 150 // per failing test
	maxTailLines = 80  // of the log, where no test failed
	keepLines    = 2000
)

func main() {
	logs := flag.String("logs", ".tools/logs", "folder for the stage's log, events and counts")
	total := flag.Bool("total", false, "print the totals of the named stages of this run instead of running one")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: stage [-logs DIR] NAME -- COMMAND [ARG...]\n       stage [-logs DIR] -total NAME...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if *total {
		if len(args) == 0 {
			flag.Usage()
			os.Exit(2)
		}
		os.Exit(printTotals(os.Stdout, *logs, os.Getenv("STAGE_RUN"), args))
	}
	if len(args) < 3 || args[1] != "--" {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(args[0], *logs, args[2:]))
}

// run runs the stage's command and reports it.
func run(name, logs string, command []string) int {
	if err := os.MkdirAll(logs, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "stage %s: %v\n", name, err)
		return 1
	}
	base := filepath.Join(logs, name)
	logFile, err := os.Create(base + ".log")
	if err != nil {
		fmt.Fprintf(os.Stderr, "stage %s: %v\n", name, err)
		return 1
	}
	defer logFile.Close()
	events := &lazyFile{path: base + ".json"}
	defer events.Close()
	var text io.Writer = logFile
	if os.Getenv("STAGE_VERBOSE") == "1" {
		text = io.MultiWriter(logFile, os.Stdout)
	}

	start := time.Now()
	// Ctrl-C reaches the command too (same process group); the stage waits
	// for it to end and still reports.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	pr, pw, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "stage %s: %v\n", name, err)
		return 1
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr = pw, pw
	p := newParser(text, events)
	code := 0
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		p.line(fmt.Sprintf("stage %s: %v", name, err))
		code = 127
	} else {
		pw.Close()
		r := bufio.NewReaderSize(pr, 1<<16)
		for {
			b, err := r.ReadBytes('\n')
			if len(b) > 0 {
				p.line(strings.TrimSuffix(string(b), "\n"))
			}
			if err != nil {
				break
			}
		}
		pr.Close()
		code = exitCode(cmd.Wait())
	}
	p.finish()
	logPath := relPath(logFile.Name())
	report(os.Stdout, name, p, code, time.Since(start), logPath)
	writeCounts(base+".counts", os.Getenv("STAGE_RUN"), p)
	return code
}

// lazyFile is created at its first write (a stage without `go test -json`
// events leaves none); a stale one of an earlier run is removed.
type lazyFile struct {
	path string
	f    *os.File
	err  error
}

func (l *lazyFile) Write(b []byte) (int, error) {
	if l.f == nil && l.err == nil {
		l.f, l.err = os.Create(l.path)
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.f.Write(b)
}

func (l *lazyFile) Close() {
	if l.f == nil {
		os.Remove(l.path)
		return
	}
	l.f.Close()
}

// exitCode is the status to exit with for the command's end.
func exitCode(err error) int {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr) && exitErr.ExitCode() > 0:
		return exitErr.ExitCode()
	default:
		return 1
	}
}

func relPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}

// event is one `go test -json` event (cmd/test2json), build events included.
type event struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// testID names a test (Test "" is the package itself).
type testID struct{ pkg, test string }

func (id testID) top() testID {
	if i := strings.IndexByte(id.test, '/'); i >= 0 {
		return testID{id.pkg, id.test[:i]}
	}
	return id
}

// failure is one line of the failure list.
type failure struct {
	id   testID
	note string // "", "did not finish", "build failed", "failed outside its tests"
}

// tail keeps the last keepLines lines written to it.
type tail struct {
	lines   []string
	dropped int
}

func (t *tail) add(s string) {
	if len(t.lines) == keepLines {
		t.lines = t.lines[1:]
		t.dropped++
	}
	t.lines = append(t.lines, s)
}

// Lines scripts/fuzz.sh prints per fuzz target.
var (
	fuzzOK   = regexp.MustCompile(`^ok\s+(\S+)\.(Fuzz\w+)\s`)
	fuzzFAIL = regexp.MustCompile(`^FAIL\s+(\S+)\.(Fuzz\w+)$`)
)

// parser reads the command's output line by line.
type parser struct {
	text, events io.Writer

	passed, failed, skipped int
	fuzz                    bool // counts are of fuzz targets
	packages                map[string]bool
	failures                []failure
	failedTop               map[testID]bool
	running                 map[testID]bool
	failedPkgs              []event          // package-level fail events
	output                  map[testID]*tail // per top-level test; Test "" for the package
	buildOut                map[string]*tail
	log                     tail // the text log, for the tail of a failure
}

func newParser(text, events io.Writer) *parser {
	return &parser{
		text: text, events: events,
		packages:  map[string]bool{},
		failedTop: map[testID]bool{},
		running:   map[testID]bool{},
		output:    map[testID]*tail{},
		buildOut:  map[string]*tail{},
	}
}

func (p *parser) line(s string) {
	if strings.HasPrefix(s, "{") {
		var e event
		if err := json.Unmarshal([]byte(s), &e); err == nil && e.Action != "" {
			fmt.Fprintln(p.events, s)
			p.event(e)
			return
		}
	}
	p.write(s + "\n")
	switch {
	case fuzzOK.MatchString(s):
		m := fuzzOK.FindStringSubmatch(s)
		p.fuzz = true
		p.packages[m[1]] = true
		p.passed++
	case fuzzFAIL.MatchString(s):
		m := fuzzFAIL.FindStringSubmatch(s)
		p.fuzz = true
		p.packages[m[1]] = true
		p.failed++
		p.failures = append(p.failures, failure{id: testID{m[1], m[2]}})
	}
}

// write adds text to the log as it would have been printed.
func (p *parser) write(s string) {
	io.WriteString(p.text, s)
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			p.log.add(strings.TrimSuffix(l, "\n"))
		}
	}
}

func (p *parser) out(id testID) *tail {
	t := p.output[id]
	if t == nil {
		t = &tail{}
		p.output[id] = t
	}
	return t
}

func (p *parser) event(e event) {
	id := testID{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		p.write(e.Output)
		t := p.buildOut[e.ImportPath]
		if t == nil {
			t = &tail{}
			p.buildOut[e.ImportPath] = t
		}
		t.add(strings.TrimSuffix(e.Output, "\n"))
	case "output":
		p.write(e.Output)
		p.out(id.top()).add(strings.TrimSuffix(e.Output, "\n"))
	case "run":
		p.running[id] = true
	case "pass", "fail", "skip":
		if e.Test == "" {
			p.packageEnd(e)
			return
		}
		delete(p.running, id)
		if e.Action == "fail" {
			p.failures = append(p.failures, failure{id: id})
			p.failedTop[id.top()] = true
		}
		if id.top() != id {
			return // subtests count in their test
		}
		switch e.Action {
		case "pass":
			p.passed++
		case "fail":
			p.failed++
		case "skip":
			p.skipped++
		}
	}
}

// packageEnd records a package's result; a package that failed with tests
// still running (a timeout, a crash) lists them as not finished.
func (p *parser) packageEnd(e event) {
	if e.Action == "skip" { // no test files
		return
	}
	p.packages[e.Package] = true
	if e.Action != "fail" {
		return
	}
	var unfinished []testID
	for id := range p.running {
		if id.pkg == e.Package {
			unfinished = append(unfinished, id)
			delete(p.running, id)
		}
	}
	slices.SortFunc(unfinished, func(a, b testID) int { return strings.Compare(a.test, b.test) })
	for _, id := range unfinished {
		p.failures = append(p.failures, failure{id: id, note: "did not finish"})
		if id.top() == id {
			p.failed++
		}
		p.failedTop[id.top()] = true
	}
	p.failedPkgs = append(p.failedPkgs, e)
}

// finish lists the failed packages no failing test explains.
func (p *parser) finish() {
	for _, e := range p.failedPkgs {
		explained := false
		for id := range p.failedTop {
			if id.pkg == e.Package && id.test != "" {
				explained = true
			}
		}
		switch {
		case e.FailedBuild != "":
			p.failures = append(p.failures, failure{id: testID{pkg: e.Package}, note: "build failed"})
		case !explained:
			p.failures = append(p.failures, failure{id: testID{pkg: e.Package}, note: "failed outside its tests"})
		}
	}
}

// report prints the failure list and output (on failure) and the summary line.
func report(w io.Writer, name string, p *parser, code int, elapsed time.Duration, logPath string) {
	tests := p.passed + p.failed + p.skipped
	noun := "tests"
	if p.fuzz {
		noun = "fuzz targets"
	}
	var counts string
	if tests > 0 {
		counts = fmt.Sprintf("%d %s in %d packages, ", tests, noun, len(p.packages))
		if p.skipped > 0 {
			counts = fmt.Sprintf("%d %s in %d packages, %d skipped, ", tests, noun, len(p.packages), p.skipped)
		}
	}
	if code == 0 && p.failed == 0 {
		fmt.Fprintf(w, "== %s: ok (%s%s; log %s)\n", name, counts, duration(elapsed), logPath)
		return
	}

	for _, f := range p.failures {
		switch {
		case f.id.test == "":
			fmt.Fprintf(w, "--- FAIL: %s [%s]\n", f.id.pkg, f.note)
		case f.note != "":
			fmt.Fprintf(w, "--- FAIL: %s (%s) [%s]\n", f.id.test, f.id.pkg, f.note)
		default:
			fmt.Fprintf(w, "--- FAIL: %s (%s)\n", f.id.test, f.id.pkg)
		}
	}
	printed := map[testID]bool{}
	shown := false
	for _, f := range p.failures {
		id := f.id.top()
		if printed[id] {
			continue
		}
		printed[id] = true
		var t *tail
		var what string
		switch {
		case f.note == "build failed":
			t, what = p.buildOut[p.failedBuild(id.pkg)], "build output of "+id.pkg
		case id.test == "":
			t, what = p.output[id], "output of "+id.pkg+" outside its tests"
		default:
			t, what = p.output[id], "output of "+id.test+" ("+id.pkg+")"
		}
		if t != nil && len(t.lines) > 0 {
			printTail(w, what, t.lines, t.dropped, maxTestLines)
			shown = true
		}
		// What ended a test that did not finish (a timeout's panic, a
		// crash) is the package's output, outside any test.
		if pkg := (testID{pkg: id.pkg}); f.note == "did not finish" && !printed[pkg] {
			printed[pkg] = true
			if t := p.output[pkg]; t != nil && len(t.lines) > 0 {
				printTail(w, "output of "+id.pkg+" outside its tests", t.lines, t.dropped, maxTestLines)
				shown = true
			}
		}
	}
	if !shown {
		printTail(w, "end of the log", p.log.lines, p.log.dropped, maxTailLines)
	}

	var status string
	switch {
	case tests > 0:
		status = fmt.Sprintf("%d of %d %s failed", p.failed, tests, noun)
		if p.failed == 0 {
			status = fmt.Sprintf("exit status %d, none of %d %s failed", code, tests, noun)
		}
		if p.skipped > 0 {
			status += fmt.Sprintf(", %d skipped", p.skipped)
		}
	default:
		status = fmt.Sprintf("exit status %d", code)
	}
	fmt.Fprintf(w, "== %s: FAILED (%s, %s; log %s)\n", name, status, duration(elapsed), logPath)
}

// failedBuild is the import path whose build failed the package.
func (p *parser) failedBuild(pkg string) string {
	for _, e := range p.failedPkgs {
		if e.Package == pkg && e.FailedBuild != "" {
			return e.FailedBuild
		}
	}
	return pkg
}

func printTail(w io.Writer, what string, lines []string, dropped, most int) {
	if len(lines) > most {
		dropped += len(lines) - most
		lines = lines[len(lines)-most:]
	}
	if dropped > 0 {
		fmt.Fprintf(w, "=== %s (last %d lines; %d before them are in the log):\n", what, len(lines), dropped)
	} else {
		fmt.Fprintf(w, "=== %s:\n", what)
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// duration prints 38.2s, 3m12s or 1h02m05s.
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm%02ds", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
}

// writeCounts keeps the stage's counts for -total.
func writeCounts(path, runID string, p *parser) {
	s := fmt.Sprintf("run=%s passed=%d failed=%d skipped=%d\n", runID, p.passed, p.failed, p.skipped)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "stage: %v\n", err)
	}
}

// printTotals prints `N passed, F failed` (and `, K skipped`) over the
// named stages' counts of run runID; it fails when a stage has no counts of
// that run or a test failed.
func printTotals(w io.Writer, logs, runID string, names []string) int {
	var passed, failed, skipped int
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(logs, name+".counts"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "stage -total: stage %s has not run: %v\n", name, err)
			return 1
		}
		c := map[string]string{}
		for _, f := range strings.Fields(string(b)) {
			if k, v, ok := strings.Cut(f, "="); ok {
				c[k] = v
			}
		}
		if c["run"] != runID {
			fmt.Fprintf(os.Stderr, "stage -total: the counts of stage %s are of run %q, not of this run %q\n", name, c["run"], runID)
			return 1
		}
		n := func(k string) int { v, _ := strconv.Atoi(c[k]); return v }
		passed, failed, skipped = passed+n("passed"), failed+n("failed"), skipped+n("skipped")
	}
	if skipped > 0 {
		fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	} else {
		fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return 1
	}
	return 0
}
