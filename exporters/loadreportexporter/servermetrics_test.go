package loadreportexporter

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/servermetrics"
)

// scrape turns Prometheus exposition text into the metrics the prometheus
// receiver makes of it: one metric per family under the family's name,
// counters as cumulative monotonic sums, gauges and untyped as gauges,
// histograms as cumulative explicit-bucket histograms, labels as
// attributes, all at time at.
func scrape(t testing.TB, text string, at time.Time) pmetric.Metrics {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	ts := pcommon.NewTimestampFromTime(at)
	for _, n := range names {
		f := fams[n]
		if len(f.Metric) == 0 {
			continue // a family with HELP and TYPE only makes no metric
		}
		m := ms.AppendEmpty()
		m.SetName(n)
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			sum := m.SetEmptySum()
			sum.SetIsMonotonic(true)
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			for _, x := range f.Metric {
				dp := sum.DataPoints().AppendEmpty()
				dp.SetTimestamp(ts)
				dp.SetDoubleValue(x.GetCounter().GetValue())
				putLabels(dp.Attributes(), x)
			}
		case dto.MetricType_HISTOGRAM:
			h := m.SetEmptyHistogram()
			h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			for _, x := range f.Metric {
				dp := h.DataPoints().AppendEmpty()
				dp.SetTimestamp(ts)
				hx := x.GetHistogram()
				dp.SetCount(hx.GetSampleCount())
				dp.SetSum(hx.GetSampleSum())
				prev := uint64(0)
				for _, b := range hx.GetBucket() {
					if math.IsInf(b.GetUpperBound(), 1) {
						continue
					}
					dp.ExplicitBounds().Append(b.GetUpperBound())
					dp.BucketCounts().Append(b.GetCumulativeCount() - prev)
					prev = b.GetCumulativeCount()
				}
				dp.BucketCounts().Append(hx.GetSampleCount() - prev)
				putLabels(dp.Attributes(), x)
			}
		case dto.MetricType_SUMMARY:
			m.SetEmptySummary()
		default:
			g := m.SetEmptyGauge()
			for _, x := range f.Metric {
				dp := g.DataPoints().AppendEmpty()
				dp.SetTimestamp(ts)
				v := x.GetGauge().GetValue()
				if x.Untyped != nil {
					v = x.GetUntyped().GetValue()
				}
				dp.SetDoubleValue(v)
				putLabels(dp.Attributes(), x)
			}
		}
	}
	return md
}

func putLabels(m pcommon.Map, x *dto.Metric) {
	for _, l := range x.GetLabel() {
		m.PutStr(l.GetName(), l.GetValue())
	}
}

// vllmScrape is a vLLM V1 /metrics page in the shape it prints (names,
// labels, buckets), with the given state.
func vllmScrape(running, waiting, kv, preempt, prompt, gen float64, ttft []float64) string {
	var b strings.Builder
	l := `{engine="0",model_name="llama"}`
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running%s %g\n", l, running)
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting%s %g\n", l, waiting)
	fmt.Fprintf(&b, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc%s %g\n", l, kv)
	fmt.Fprintf(&b, "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc%s %g\n", l, kv)
	fmt.Fprintf(&b, "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total%s %g\n", l, preempt)
	fmt.Fprintf(&b, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total%s %g\n", l, prompt)
	fmt.Fprintf(&b, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total%s %g\n", l, gen)
	bounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	b.WriteString("# TYPE vllm:time_to_first_token_seconds histogram\n")
	sum := 0.0
	for _, v := range ttft {
		sum += v
	}
	for _, ub := range bounds {
		n := 0
		for _, v := range ttft {
			if v <= ub {
				n++
			}
		}
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"%g\",model_name=\"llama\"} %d\n", ub, n)
	}
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"llama\"} %d\n", len(ttft))
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count%s %d\nvllm:time_to_first_token_seconds_sum%s %g\n", l, len(ttft), l, sum)
	return b.String()
}

func TestServerMetricsFromVLLMScrapes(t *testing.T) {
	st := newTestState(testConfig(t))
	// The server ran before the test: 5 preemptions and 10 TTFTs already.
	before := []float64{0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03}
	ttft := append([]float64(nil), before...)
	for i := 0; i < 40; i++ {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		kv := math.Min(0.3+0.02*float64(i), 1)
		preempt := 5.0
		if i >= 30 {
			preempt += float64(i - 29)
		}
		if i > 0 {
			ttft = append(ttft, 0.3+float64(i)*0.01)
		}
		out := st.consumeMetrics(scrape(t, vllmScrape(8, float64(i), kv, preempt, 1000*float64(i), 500*float64(i), ttft), at))
		assert.Zero(t, out[pointWrongType])
	}
	td := ptrace.NewTraces()
	addReq(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(),
		req{at: 0, dur: time.Second, ttft: 300 * time.Millisecond, out: 10, target: "t", model: "llama", scenario: "chat"})
	st.consumeTraces(td)
	r := st.build(true)
	sv := r.Server
	require.NotNil(t, sv)
	assert.Equal(t, "vllm", sv.Server)
	assert.Equal(t, "vllm:kv_cache_usage_perc", sv.Names[srvKVCache], "the V1 name wins over the deprecated one")
	assert.Equal(t, 10.0, sv.Counters[srvPreemptions], "the increase during the run, not the server's total")
	assert.Equal(t, 39000.0, sv.Counters[srvPromptTokens])
	require.Len(t, sv.Histograms, 1)
	h := sv.Histograms[0]
	assert.Equal(t, 39.0, h.Count, "the TTFTs of the run only")
	assert.InDelta(t, (0.3*39+0.01*780)/39, h.Mean, 1e-9)
	assert.True(t, h.P50 > 0.25 && h.P50 <= 0.5, "p50 %v interpolated in (0.25, 0.5]", h.P50)
	assert.NotNil(t, h.Client)
	gauges := map[string]GaugeSummary{}
	for _, g := range sv.Gauges {
		gauges[g.Role] = g
	}
	assert.Equal(t, 1.0, gauges[srvKVCache].Max)
	assert.Equal(t, 39.0, gauges[srvWaiting].Last)
	assert.InDelta(t, 0.2, *gauges[srvWaiting].SlopePerS, 1e-9, "one more waiting request every 5 s")
	assert.Len(t, sv.Timeline, 40)
	kinds := map[string]SaturationWarning{}
	for _, w := range r.Saturation {
		kinds[w.Kind] = w
	}
	require.Contains(t, kinds, warnKVCacheFull)
	assert.InDelta(t, 5*33, *kinds[warnKVCacheFull].StartedAtS, 5.01, "0.3+0.02i reaches 0.95 at the 33rd scrape")
	require.Contains(t, kinds, warnPreemptions)
	assert.InDelta(t, 150, *kinds[warnPreemptions].StartedAtS, 1e-9)
	require.Contains(t, kinds, warnQueueGrowing)
	assert.Contains(t, kinds[warnQueueGrowing].Message, "to 39.0 at the end")
}

func TestServerMetricsBelowCapacityGiveNoWarning(t *testing.T) {
	st := newTestState(testConfig(t))
	for i := 0; i < 40; i++ {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		waiting := float64(i % 2) // noise around zero, no trend
		st.consumeMetrics(scrape(t, vllmScrape(4, waiting, 0.4+0.05*math.Sin(float64(i)), 2, 100*float64(i), 50*float64(i), []float64{0.1}), at))
	}
	r := st.build(true)
	require.NotNil(t, r.Server)
	assert.Empty(t, r.Saturation)
}

// realScrapeRoles is what each real /metrics page of
// testdata/servermetrics/real (SOURCES.md there) must yield: its server and
// every role with a value on the page (NAMES.md).
var realScrapeRoles = map[string]struct {
	server string
	roles  []string
}{
	"vllm-v0-0.7-2025-01-aibrix-runtime-doc.prom": {"vllm", []string{srvKVCache, srvRunning, srvWaiting, srvPreemptions, srvPromptTokens, srvGenTokens}},
	// Registered, never set: HELP and TYPE lines without samples.
	"vllm-v0-0.5-2024-10-help-type-only.prom":         {"", nil},
	"vllm-v1-0.8-2025-03-production-stack-318.prom":   {"vllm", []string{srvKVCache, srvRunning, srvWaiting}},
	"sglang-0.4-2024-12-docs-production-metrics.prom": {"sglang", []string{srvKVCache, srvRunning, srvWaiting, srvPrefixHitRate, srvPromptTokens, srvGenTokens, srvTTFT, srvITL, srvE2E}},
	"sglang-0.3.5-2024-11-pr1853-name-label.prom":     {"sglang", []string{srvPromptTokens}},
	// IBM's vLLM fork under TGI's names.
	"tgis-vllm-adapter-2024-04-ibm-vllm-pr18.prom":  {"tgi", []string{srvRunning, srvWaiting}},
	"llamacpp-2025-01-pr11512-requests-gauges.prom": {"llamacpp", []string{srvRunning, srvWaiting}},
	"llamacpp-2025-06-pr13196-no-kv-cache.prom":     {"llamacpp", []string{srvPromptTokens, srvGenTokens}},
	// The frontend's model gauges only (limits, not load): nothing to read.
	"dynamo-2026-04-kthena913-frontend-model-gauges.prom": {"", nil},
}

// TestServerMetricsFromRealScrapes reads the real /metrics pages: each is
// recognised as its server, and each role the page carries has a value.
func TestServerMetricsFromRealScrapes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "servermetrics", "real", "*.prom"))
	require.NoError(t, err)
	require.Len(t, files, len(realScrapeRoles), "every real page has its expectation")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, ok := realScrapeRoles[filepath.Base(f)]
			require.True(t, ok, "no expectation for %s", f)
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			st := newTestState(testConfig(t))
			out := st.consumeMetrics(scrape(t, string(data), t0))
			assert.Zero(t, out[pointWrongType], "every known name has the instrument the table expects")
			if want.server == "" {
				assert.Nil(t, st.server, "nothing of the table on this page")
				return
			}
			require.NotNil(t, st.server, "no name of the table in %s", f)
			assert.Equal(t, want.server, st.server.server)
			var got []string
			for _, role := range append(append(append([]string(nil), servermetrics.GaugeRoles...), servermetrics.CounterRoles...), servermetrics.HistogramRoles...) {
				if g := st.server.gauges[role]; (g != nil && len(g.pts) > 0) || len(st.server.counters[role]) > 0 || len(st.server.hists[role]) > 0 {
					got = append(got, role)
				}
			}
			assert.ElementsMatch(t, want.roles, got)
			// What the report makes of the page: names by role, values.
			sm := st.build(true).Server
			require.NotNil(t, sm)
			js, err := json.MarshalIndent(sm, "", "  ")
			require.NoError(t, err)
			golden(t, filepath.Join("servermetrics", strings.TrimSuffix(filepath.Base(f), ".prom")+".json"), append(js, '\n'))
		})
	}
}

// TestGoldenServerSide is a run that overloads a vLLM server: 40 joined
// requests whose server queue grows, and the server's scrapes every 5 s
// with the KV cache filling, preemptions and a growing queue.
func TestGoldenServerSide(t *testing.T) {
	jr := newJoinRun(t, nil)
	var rs []joinReq
	for i := 0; i < 40; i++ {
		q := 0.005 * float64(i)
		rs = append(rs, joinReq{n: uint64(i + 1), at: time.Duration(i) * 5 * time.Second,
			queue: 0.002, connect: 0.001, ttft: 0.170 + q, e2e: 1.170 + q,
			sQueue: q, sPrefill: 0.150, sTTFT: 0.160 + q, sE2E: 1.160 + q})
	}
	jr.send(rs, false)
	jr.send(rs, true)
	var ttft []float64
	for i := 0; i < 40; i++ {
		ttft = append(ttft, 0.160+0.005*float64(i))
		preempt := math.Max(0, float64(i-29))
		jr.st.consumeMetrics(scrape(t, vllmScrape(8, float64(i), math.Min(0.3+0.02*float64(i), 1), preempt, 1000*float64(i), 500*float64(i), ttft), t0.Add(time.Duration(i)*5*time.Second)))
	}
	jr.st.jn.giveUpAll(unjoinedRunEnd)
	rd, err := newRenderer(nil)
	require.NoError(t, err)
	r := jr.st.build(true)
	md, err := rd.render(FormatMarkdown, r)
	require.NoError(t, err)
	golden(t, "server.md", md)
	page, err := rd.render(FormatHTML, r)
	require.NoError(t, err)
	for _, id := range []string{`id="server-side"`, `id="server-gauges"`, `id="server-histograms"`, "first scrape (0 s into the run) to the last (195 s)"} {
		assert.Contains(t, string(page), id)
	}
}
