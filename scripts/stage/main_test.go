package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// feed runs lines through a parser and returns its report.
func feed(t *testing.T, code int, lines ...string) (string, *parser) {
	t.Helper()
	var text, events bytes.Buffer
	p := newParser(&text, &events)
	for _, l := range lines {
		p.line(l)
	}
	p.finish()
	var out bytes.Buffer
	report(&out, "unit", p, code, 192*time.Second, ".tools/logs/unit.log")
	return out.String(), p
}

func TestReportPassing(t *testing.T) {
	out, p := feed(t, 0,
		`{"Action":"start","Package":"a"}`,
		`{"Action":"run","Package":"a","Test":"TestA"}`,
		`{"Action":"output","Package":"a","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"run","Package":"a","Test":"TestA/sub"}`,
		`{"Action":"pass","Package":"a","Test":"TestA/sub"}`,
		`{"Action":"pass","Package":"a","Test":"TestA"}`,
		`{"Action":"skip","Package":"a","Test":"TestB"}`,
		`{"Action":"pass","Package":"a"}`,
		`{"Action":"skip","Package":"nothing"}`,
		"go: downloading example.com/x v1.0.0",
	)
	if want := "== unit: ok (2 tests in 1 packages, 1 skipped, 3m12s; log .tools/logs/unit.log)\n"; out != want {
		t.Errorf("report:\n%s\nwant:\n%s", out, want)
	}
	if p.passed != 1 || p.skipped != 1 || p.failed != 0 {
		t.Errorf("counts %d/%d/%d", p.passed, p.failed, p.skipped)
	}
}

func TestReportFailingTests(t *testing.T) {
	out, _ := feed(t, 1,
		`{"Action":"run","Package":"a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"a","Test":"TestOK"}`,
		`{"Action":"run","Package":"a","Test":"TestBad"}`,
		`{"Action":"output","Package":"a","Test":"TestBad","Output":"=== RUN   TestBad\n"}`,
		`{"Action":"run","Package":"a","Test":"TestBad/case"}`,
		`{"Action":"output","Package":"a","Test":"TestBad/case","Output":"    bad_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"a","Test":"TestBad/case"}`,
		`{"Action":"fail","Package":"a","Test":"TestBad"}`,
		`{"Action":"run","Package":"b","Test":"TestHang"}`,
		`{"Action":"output","Package":"b","Output":"panic: test timed out after 1m0s\n"}`,
		`{"Action":"fail","Package":"a"}`,
		`{"Action":"fail","Package":"b"}`,
	)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, want := range []string{
		"--- FAIL: TestBad/case (a)",
		"--- FAIL: TestBad (a)",
		"--- FAIL: TestHang (b) [did not finish]",
		"=== output of TestBad (a):",
	} {
		if lines[i] != want {
			t.Errorf("line %d: %q, want %q\n%s", i, lines[i], want, out)
		}
	}
	if !strings.Contains(out, "bad_test.go:9: boom") || !strings.Contains(out, "panic: test timed out") {
		t.Errorf("the failing tests' output is missing:\n%s", out)
	}
	if want := "== unit: FAILED (2 of 3 tests failed, 3m12s; log .tools/logs/unit.log)"; lines[len(lines)-1] != want {
		t.Errorf("summary %q, want %q", lines[len(lines)-1], want)
	}
}

func TestReportBuildFailure(t *testing.T) {
	out, _ := feed(t, 1,
		`{"ImportPath":"a [a.test]","Action":"build-output","Output":"a/x.go:3:1: syntax error\n"}`,
		`{"ImportPath":"a [a.test]","Action":"build-fail"}`,
		`{"Action":"fail","Package":"a","FailedBuild":"a [a.test]"}`,
	)
	if !strings.HasPrefix(out, "--- FAIL: a [build failed]\n") || !strings.Contains(out, "syntax error") {
		t.Errorf("report:\n%s", out)
	}
	if !strings.HasSuffix(out, "== unit: FAILED (exit status 1, 3m12s; log .tools/logs/unit.log)\n") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestReportNotGoTest(t *testing.T) {
	out, _ := feed(t, 1, "vet: x.go:1: something", "gofmt needed on:", "./x.go")
	want := "=== end of the log:\nvet: x.go:1: something\ngofmt needed on:\n./x.go\n== unit: FAILED (exit status 1, 3m12s; log .tools/logs/unit.log)\n"
	if out != want {
		t.Errorf("report:\n%s\nwant:\n%s", out, want)
	}
}

func TestReportFuzz(t *testing.T) {
	out, p := feed(t, 1,
		"fuzzing 2 targets for 5000x each",
		"ok    internal/genai.FuzzParse                                       3s  execs: 5000",
		"FAIL  processors/x.FuzzY",
		"      --- FAIL: FuzzY (0.01s)",
	)
	if !strings.HasPrefix(out, "--- FAIL: FuzzY (processors/x)\n") || !strings.Contains(out, "--- FAIL: FuzzY (0.01s)") {
		t.Errorf("report:\n%s", out)
	}
	if !strings.HasSuffix(out, "== unit: FAILED (1 of 2 fuzz targets failed, 3m12s; log .tools/logs/unit.log)\n") || p.passed != 1 {
		t.Errorf("report:\n%s", out)
	}
}

func TestTotals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name+".counts"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lint", "run=7 passed=0 failed=0 skipped=0\n")
	write("unit", "run=7 passed=400 failed=0 skipped=0\n")
	write("e2e", "run=7 passed=58 failed=0 skipped=3\n")
	write("old", "run=6 passed=1 failed=0 skipped=0\n")
	var out bytes.Buffer
	if code := printTotals(&out, dir, "7", []string{"lint", "unit"}); code != 0 || out.String() != "400 passed, 0 failed\n" {
		t.Errorf("totals %d %q", code, out.String())
	}
	out.Reset()
	if code := printTotals(&out, dir, "7", []string{"lint", "unit", "e2e"}); code != 0 || out.String() != "458 passed, 0 failed, 3 skipped\n" {
		t.Errorf("totals %d %q", code, out.String())
	}
	if code := printTotals(&out, dir, "7", []string{"unit", "old"}); code == 0 {
		t.Error("counts of another run were summed")
	}
	if code := printTotals(&out, dir, "7", []string{"missing"}); code == 0 {
		t.Error("a stage that did not run was summed")
	}
}

func TestReportPackageFailsOutsideTests(t *testing.T) {
	out, _ := feed(t, 1,
		`{"Action":"run","Package":"a","Test":"TestA"}`,
		`{"Action":"pass","Package":"a","Test":"TestA"}`,
		`{"Action":"output","Package":"a","Output":"goleak: Errors on successful test run: found unexpected goroutines:\n"}`,
		`{"Action":"fail","Package":"a"}`,
	)
	if !strings.HasPrefix(out, "--- FAIL: a [failed outside its tests]\n=== output of a outside its tests:\ngoleak: Errors") {
		t.Errorf("report:\n%s", out)
	}
	if !strings.HasSuffix(out, "== unit: FAILED (exit status 1, none of 1 tests failed, 3m12s; log .tools/logs/unit.log)\n") {
		t.Errorf("summary:\n%s", out)
	}
}
