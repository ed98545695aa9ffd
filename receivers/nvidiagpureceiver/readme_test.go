package nvidiagpureceiver

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEMetricTable keeps the README's metric table in step with the
// metric definitions: every metric has a row with its unit, instrument and
// default, and no row names a metric that does not exist.
func TestREADMEMetricTable(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	text := string(raw)
	start, end := strings.Index(text, "\n## Metrics\n"), strings.Index(text, "\n## Logs")
	require.True(t, start >= 0 && end > start, "README needs a Metrics section followed by a Logs section")
	rows := map[string]string{}
	for _, line := range strings.Split(text[start:end], "\n") {
		if strings.HasPrefix(line, "| `hw.") || strings.HasPrefix(line, "| `nvidia.gpu.") {
			name := strings.Trim(strings.SplitN(line, "|", 3)[1], " `")
			rows[name] = line
		}
	}
	for _, d := range metricDefs {
		row, ok := rows[d.name]
		if !assert.True(t, ok, "README has no row for %s", d.name) {
			continue
		}
		assert.Contains(t, row, fmt.Sprintf("| `%s` |", d.unit), d.name)
		assert.Contains(t, row, "| "+d.inst.String()+" (", d.name)
		def := "| on |"
		if !d.enabled {
			def = "| **off** |"
		}
		assert.Contains(t, row, def, d.name)
		for _, a := range d.attributes {
			assert.Contains(t, row, "`"+a+"`", d.name)
		}
		delete(rows, d.name)
	}
	assert.Empty(t, rows, "README rows without a metric definition")
}
