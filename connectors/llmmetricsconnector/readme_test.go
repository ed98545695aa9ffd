package llmmetricsconnector

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.yaml.in/yaml/v3"
)

// promNames returns the Prometheus series and label names md turns into
// under the exporter's default UnderscoreEscapingWithSuffixes strategy, for
// the units and types this connector emits.
func promNames(md pmetric.Metrics) (series, labels map[string]bool) {
	series, labels = map[string]bool{}, map[string]bool{"le": true}
	escape := func(s string) string { return strings.NewReplacer(".", "_", "-", "_").Replace(s) }
	addLabels := func(m pcommon.Map) {
		for k := range m.All() {
			labels[escape(k)] = true
		}
	}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		addLabels(rm.Resource().Attributes())
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			base := escape(m.Name())
			if m.Unit() == "s" {
				base += "_seconds"
			}
			switch m.Type() {
			case pmetric.MetricTypeHistogram:
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					series[base+s] = true
				}
			case pmetric.MetricTypeSum:
				series[base+"_total"] = true
			default:
				series[base] = true
			}
			for p := 0; p < dataPointCount(m); p++ {
				addLabels(dataPointAttrs(m, p))
			}
		}
	}
	return series, labels
}

// TestReadmeRecordingRules parses the recording rules the README shows and
// checks that each one is valid PromQL over series and labels the connector
// really produces.
func TestReadmeRecordingRules(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "### Prometheus recording rules")
	require.True(t, ok)
	_, block, ok := strings.Cut(after, "```yaml\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	var rules struct {
		Groups []struct {
			Rules []struct{ Record, Expr string }
		}
	}
	require.NoError(t, yaml.Unmarshal([]byte(block), &rules))
	require.NotEmpty(t, rules.Groups)

	sink := new(consumertest.MetricsSink)
	c, clk, _ := newTestConnector(t, goldenConfig(), sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), recordedSpans(t)))
	clk.t = clk.t.Add(time.Second)
	c.flush(context.Background())
	series, labels := promNames(sink.AllMetrics()[0])
	// The exporter adds these from the resource's service attributes.
	labels["job"], labels["instance"] = true, true

	p := parser.NewParser(parser.Options{})
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			expr, err := p.ParseExpr(r.Expr)
			require.NoError(t, err, r.Record)
			parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
				switch x := node.(type) {
				case *parser.VectorSelector:
					assert.True(t, series[x.Name], "%s: series %s is not produced", r.Record, x.Name)
					for _, m := range x.LabelMatchers {
						if m.Name != "__name__" {
							assert.True(t, labels[m.Name], "%s: label %s is not produced", r.Record, m.Name)
						}
					}
				case *parser.AggregateExpr:
					for _, l := range x.Grouping {
						assert.True(t, labels[l], "%s: grouping label %s is not produced", r.Record, l)
					}
				}
				return nil
			})
		}
	}
	assert.GreaterOrEqual(t, n, 7)
}
