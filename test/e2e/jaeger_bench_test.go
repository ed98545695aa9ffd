//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The explosion on a real Jaeger, side by side in one run
// (bench/jaeger/compare.sh runs it; `make e2e` runs no benchmark). Each
// variant gets a fresh Jaeger (in-memory store, max_traces 100,000) and the
// same load, the explosion test's generator at full size: one runaway agent
// trace of JAEGER_BENCH_AGENT_SPANS spans (default 1,000,000) in requests of
// 5,000 spans, then JAEGER_BENCH_STREAMS (default 100) per-token traces of
// JAEGER_BENCH_TOKENS (default 2,000) token spans. The variants
// (JAEGER_BENCH_VARIANTS):
//
//	direct         the load straight into Jaeger's OTLP receiver
//	no_span_guard  through builtin:gateway without span_guard
//	gateway        through builtin:gateway as shipped (10,000 spans per trace over 30 s)
//	gateway_1000   through builtin:gateway with OTELCOL_LLM_TRACE_MAX_SPANS=1000
//
// Jaeger's RSS is sampled from /proc every 250 ms from its start to the end
// of the fetches; once Jaeger has stored everything sent to it (its storage
// exporter's own count), the largest trace is fetched JAEGER_BENCH_FETCHES
// times (default 3) from /api/traces/{id}, the Jaeger UI's call, and once
// from /api/v3/traces/{id}, each with a deadline of JAEGER_BENCH_FETCH_TIMEOUT
// (default 5m).

// fetched is one fetch of the largest trace: how long the whole answer
// took, and its size.
type fetched struct {
	elapsed time.Duration
	bytes   int
}

// explosionResult is one variant's measurements.
type explosionResult struct {
	variant    string
	sent       int
	stored     float64
	sending    time.Duration // until the last request was accepted
	settled    time.Duration // until Jaeger had stored everything
	rss        *RSSSampler
	start      time.Time
	fetchStart time.Time
	finished   time.Time
	rssLoad    []int64 // after each quarter of the load was sent
	rssStored  int64   // when everything was stored, before any fetch
	gatewayRSS int64   // the gateway's peak (0: no gateway)
	ui         []fetched
	uiErr      error
	uiSpans    int
	v3         fetched
	v3Err      error
	summary    string // span_guard's summary of the largest trace, as the UI model has it
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, name)
	return n
}

func BenchmarkJaegerExplosion(b *testing.B) {
	load := explosionLoad{
		streams:    envInt(b, "JAEGER_BENCH_STREAMS", 100),
		tokens:     envInt(b, "JAEGER_BENCH_TOKENS", 2000),
		agentSpans: envInt(b, "JAEGER_BENCH_AGENT_SPANS", 1_000_000),
		perRequest: 5000,
	}
	fetches := envInt(b, "JAEGER_BENCH_FETCHES", 3)
	fetchTimeout := 5 * time.Minute
	if v := os.Getenv("JAEGER_BENCH_FETCH_TIMEOUT"); v != "" {
		var err error
		fetchTimeout, err = time.ParseDuration(v)
		require.NoError(b, err, "JAEGER_BENCH_FETCH_TIMEOUT")
	}
	variants := strings.Fields(os.Getenv("JAEGER_BENCH_VARIANTS"))
	all := []string{"direct", "no_span_guard", "gateway", "gateway_1000"}
	if len(variants) == 0 {
		variants = all
	}
	var results []explosionResult
	for _, v := range variants {
		require.Contains(b, all, v, "JAEGER_BENCH_VARIANTS")
		b.Run(v, func(b *testing.B) {
			res := runJaegerExplosion(b, v, load, fetches, fetchTimeout)
			b.ReportMetric(float64(res.rss.Peak())/mib, "jaeger-peak-MiB")
			b.ReportMetric(float64(median(res.ui))/1e6, "fetch-ms")
			results = append(results, res)
		})
	}
	printExplosionTable(os.Stdout, results, load)
}

// runJaegerExplosion runs one variant.
func runJaegerExplosion(b *testing.B, variant string, load explosionLoad, fetches int, fetchTimeout time.Duration) explosionResult {
	res := explosionResult{variant: variant, start: time.Now()}
	j := StartJaeger(b, 100_000)
	res.rss = SampleRSSOf(b, j.Pid(), 250*time.Millisecond, 2*time.Hour)
	addr := j.OTLPAddr
	var col *Collector
	var gwRSS *RSSSampler
	switch variant {
	case "no_span_guard":
		col = startGatewayTo(b, j, "--config", "file:"+writeFile(b, "no-span-guard.yaml", "service: {pipelines: {traces/guarded: {processors: []}}}\n"))
	case "gateway":
		col = startGatewayTo(b, j)
	case "gateway_1000":
		b.Setenv("OTELCOL_LLM_TRACE_MAX_SPANS", "1000")
		col = startGatewayTo(b, j)
	}
	if col != nil {
		addr = fmt.Sprintf("127.0.0.1:%d", col.OTLPGRPCPort)
		gwRSS = SampleRSS(b, col, 250*time.Millisecond, 2*time.Hour)
	}
	sender := newOTLPSenderTo(b, addr)
	r := newJaegerRun("bench-explosion")
	sent := 0
	r.explosion(load, func(td ptrace.Traces) {
		sender.send(b, td)
		sent += td.SpanCount()
		for len(res.rssLoad) < 4 && sent*4 >= load.spans()*(len(res.rssLoad)+1) {
			v, err := rssBytes(j.Pid())
			require.NoError(b, err)
			res.rssLoad = append(res.rssLoad, v)
		}
	})
	res.sent = r.total()
	require.Equal(b, load.spans(), res.sent)
	res.sending = time.Since(res.start)

	res.stored = float64(res.sent)
	switch variant {
	case "gateway", "gateway_1000":
		l := waitGatewaySettled(b, col, res.sent)
		res.stored = l.forwarded + l.summaries
	case "no_span_guard":
		_, err := waitProgress(30*time.Minute, time.Minute, func() float64 { return readLedger(selfMetrics(b, col)).exported },
			func(n float64) bool { return n >= float64(res.sent) })
		require.NoError(b, err, "the gateway did not forward every span")
	}
	j.waitStored(b, 0, res.stored)
	res.settled = time.Since(res.start)
	var err error
	res.rssStored, err = rssBytes(j.Pid())
	require.NoError(b, err)
	res.fetchStart = time.Now()

	id := traceIDHex(r.agentTrace())
	for i := 0; i < fetches; i++ {
		f, err := j.getOK("/api/traces/"+id, fetchTimeout)
		if err != nil {
			res.uiErr = err
			break
		}
		res.ui = append(res.ui, fetched{elapsed: f.Elapsed, bytes: len(f.Body)})
		if i == 0 {
			res.uiSpans, res.summary, err = uiTraceShape(f.Body)
			require.NoError(b, err)
		}
	}
	if f, err := j.getOK("/api/v3/traces/"+id, fetchTimeout); err != nil {
		res.v3Err = err
	} else {
		res.v3 = fetched{elapsed: f.Elapsed, bytes: len(f.Body)}
	}
	time.Sleep(time.Second) // a sample after the last fetch
	res.finished = time.Now()
	res.rss.Stop()
	if gwRSS != nil {
		gwRSS.Stop()
		res.gatewayRSS = gwRSS.Peak()
		require.NoError(b, col.Stop(b, time.Minute), "gateway did not exit cleanly")
	}
	j.Stop()
	return res
}

// uiTraceShape reads an /api/traces answer for its span count and the
// counts of its span_guard summaries.
func uiTraceShape(body []byte) (spans int, summary string, err error) {
	var resp struct {
		Data []struct {
			Spans []struct {
				OperationName string       `json:"operationName"`
				Tags          []uiKeyValue `json:"tags"`
			} `json:"spans"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return 0, "", err
	}
	if len(resp.Data) != 1 {
		return 0, "", fmt.Errorf("%d traces in the answer", len(resp.Data))
	}
	var sums []string
	for _, s := range resp.Data[0].Spans {
		if s.OperationName != summarySpanName {
			continue
		}
		var parts []string
		for _, k := range summaryCounts {
			for _, tag := range s.Tags {
				if tag.Key == k {
					parts = append(parts, fmt.Sprintf("%s %.0f", strings.TrimPrefix(k, "span_guard.spans."), tag.Value))
				}
			}
		}
		sums = append(sums, strings.Join(parts, ", "))
	}
	return len(resp.Data[0].Spans), strings.Join(sums, "; "), nil
}

// median is the median duration of the fetches (0 when none succeeded).
func median(fs []fetched) time.Duration {
	if len(fs) == 0 {
		return 0
	}
	d := make([]time.Duration, len(fs))
	for i, f := range fs {
		d[i] = f.elapsed
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func printExplosionTable(w io.Writer, results []explosionResult, load explosionLoad) {
	mb := func(v int64) string { return fmt.Sprintf("%.0f MiB", float64(v)/mib) }
	fmt.Fprintf(w, "\nload: one agent trace of %d spans + %d per-token traces of %d spans, the same in every variant (%s)\n\n",
		load.agentSpans, load.streams, load.tokens+2, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintln(w, "| | spans sent | spans Jaeger stored | Jaeger RSS after ¼, ½, ¾, all of the load sent | Jaeger RSS, everything stored | Jaeger RSS peak | largest trace from /api/traces (UI): spans, size | fetch time (median of fetches) | /api/v3/traces: size, time | gateway RSS peak |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|---:|---|---:|")
	for _, r := range results {
		ui := "failed: " + fmt.Sprint(r.uiErr)
		fetch := "—"
		if r.uiErr == nil && len(r.ui) > 0 {
			ui = fmt.Sprintf("%d spans, %.1f MiB", r.uiSpans, float64(r.ui[0].bytes)/mib)
			fetch = fmt.Sprintf("%v (%d)", median(r.ui).Round(time.Millisecond), len(r.ui))
		}
		v3 := "failed: " + fmt.Sprint(r.v3Err)
		if r.v3Err == nil {
			v3 = fmt.Sprintf("%.1f MiB, %v", float64(r.v3.bytes)/mib, r.v3.elapsed.Round(time.Millisecond))
		}
		gw := "—"
		if r.gatewayRSS > 0 {
			gw = mb(r.gatewayRSS)
		}
		load := make([]string, len(r.rssLoad))
		for i, v := range r.rssLoad {
			load[i] = fmt.Sprintf("%.0f", float64(v)/mib)
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %s MiB | %s | %s | %s | %s | %s | %s |\n", r.variant, r.sent, r.stored,
			strings.Join(load, ", "), mb(r.rssStored), mb(r.rss.Peak()), ui, fetch, v3, gw)
	}
	fmt.Fprintln(w)
	for _, r := range results {
		// About a dozen points from Jaeger's start to the end of the fetches.
		step := max(r.finished.Sub(r.start)/12, 250*time.Millisecond).Round(250 * time.Millisecond)
		fmt.Fprintf(w, "%s: sent in %v, all stored at %v, fetches from %v to %v; Jaeger RSS every %v:", r.variant,
			r.sending.Round(100*time.Millisecond), r.settled.Round(100*time.Millisecond),
			r.fetchStart.Sub(r.start).Round(100*time.Millisecond), r.finished.Sub(r.start).Round(100*time.Millisecond), step)
		for at := r.start; at.Before(r.finished.Add(step)); at = at.Add(step) {
			fmt.Fprintf(w, " %.0f", float64(r.rss.At(at))/mib)
		}
		fmt.Fprintln(w, " MiB")
		if r.summary != "" {
			fmt.Fprintf(w, "%s: the largest trace's span_guard summary in Jaeger: %s\n", r.variant, r.summary)
		}
	}
	var base, guard *explosionResult
	for i := range results {
		switch results[i].variant {
		case "direct":
			base = &results[i]
		case "gateway":
			guard = &results[i]
		}
	}
	if base != nil && guard != nil && len(base.ui) > 0 && len(guard.ui) > 0 {
		fmt.Fprintf(w, "\ndirect / gateway as shipped: Jaeger RSS peak %.1f×, RSS with everything stored %.1f×, fetch time of the largest trace %.0f×, its size %.0f×\n",
			float64(base.rss.Peak())/float64(guard.rss.Peak()), float64(base.rssStored)/float64(guard.rssStored),
			float64(median(base.ui))/float64(median(guard.ui)), float64(base.ui[0].bytes)/float64(guard.ui[0].bytes))
	}
}
