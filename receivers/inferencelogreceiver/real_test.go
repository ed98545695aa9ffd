package inferencelogreceiver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

// realFloor is, per server, the share of records of the real excerpts in
// testdata/real/<server>/ that the preset parses (no parse error); the test
// fails below it, so a change can only raise it. README.md gives the
// numbers.
var realFloor = map[string]float64{
	"vllm":     0.914,
	"tgi":      0.741,
	"sglang":   0.963,
	"ollama":   0.961,
	"llamacpp": 0.983,
}

// TestRealSamples runs every preset over the verbatim excerpts of real
// server output in testdata/real/<server>/ (each listed with its source in
// the folder's SOURCES.md): every line comes out exactly once (continuation
// lines folded into their record), and the parsed share stays at or above
// the preset's floor.
func TestRealSamples(t *testing.T) {
	for _, name := range presetNames {
		t.Run(name, func(t *testing.T) {
			dir := testdataPath("real", name)
			files, err := filepath.Glob(filepath.Join(dir, "*.log"))
			require.NoError(t, err)
			require.NotEmpty(t, files, "no real samples for %s", name)
			sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
			require.NoError(t, err, "every folder of real samples names its sources")
			want, lines := 0, 0
			for _, f := range files {
				assert.Contains(t, string(sources), filepath.Base(f), "SOURCES.md lists %s", filepath.Base(f))
				want += expectedRecords(t, name, f)
				lines += countLines(t, f)
			}
			s := startReceiver(t, testConfig(name, filepath.Join(dir, "*.log")), componenttest.NewNopHost())
			s.waitRecords(t, want)
			s.stop(t)
			require.Equal(t, want, s.logs.LogRecordCount(), "every line once (continuation lines folded), none dropped")

			parsed, reasons, examples := 0, map[string]int{}, []string{}
			for _, ld := range s.logs.AllLogs() {
				for i := 0; i < ld.ResourceLogs().Len(); i++ {
					sls := ld.ResourceLogs().At(i).ScopeLogs()
					for j := 0; j < sls.Len(); j++ {
						lrs := sls.At(j).LogRecords()
						for k := 0; k < lrs.Len(); k++ {
							if v, bad := lrs.At(k).Attributes().Get(attrParseError); bad {
								reasons[v.Str()]++
								if len(examples) < 12 {
									examples = append(examples, truncate(lrs.At(k).Body().Str(), 160))
								}
							} else {
								parsed++
							}
						}
					}
				}
			}
			share := float64(parsed) / float64(want)
			t.Logf("%s: %d files, %d lines, %d records, %d parsed (%.1f %%), %d metric points; unparsed by reason: %v",
				name, len(files), lines, want, parsed, 100*share, s.metrics.DataPointCount(), reasons)
			for _, e := range examples {
				t.Logf("  unparsed: %q", e)
			}
			assert.GreaterOrEqual(t, share, realFloor[name], "parsed share of %s's real samples fell below its floor", name)
		})
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
