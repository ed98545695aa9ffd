package loadreportexporter

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// joinReq is one request seen from both sides, in seconds.
type joinReq struct {
	n                  uint64 // ids: trace n, client span n, server span n+1<<32
	at                 time.Duration
	queue, connect     float64 // client queue, TCP connect
	ttft, e2e          float64 // client, from the scheduled send
	sQueue, sPrefill   float64 // server queue and prefill
	sTTFT, sE2E        float64
	serverParent       uint64 // 0: the client span
	noServer, noClient bool
}

func traceID(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], n)
	id[0] = 1
	return id
}

func spanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

func addClientSpan(ss ptrace.SpanSlice, r joinReq) {
	sp := ss.AppendEmpty()
	sp.SetName("chat llama")
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetTraceID(traceID(r.n))
	sp.SetSpanID(spanID(r.n))
	start := t0.Add(r.at)
	sp.SetStartTimestamp(ptsOf(start))
	sp.SetEndTimestamp(ptsOf(start.Add(time.Duration(r.e2e * float64(time.Second)))))
	a := sp.Attributes()
	a.PutStr(genai.AttrOperationName, genai.OpChat)
	a.PutStr(genai.AttrRequestModel, "llama")
	a.PutStr(genai.AttrServerAddress, "127.0.0.1")
	a.PutInt(genai.AttrUsageOutputTokens, 50)
	a.PutDouble(genai.AttrTimeToFirstChunk, r.ttft)
	a.PutDouble(genai.AttrLoadgenQueueTime, r.queue)
	a.PutDouble(genai.AttrLoadgenConnectTime, r.connect)
	a.PutDouble(genai.AttrLoadgenE2E, r.e2e)
}

// addServerSpan writes a vLLM request span: no gen_ai.operation.name, the
// latencies as gen_ai.latency.* (TTFT renamed by llm_semconv or not).
func addServerSpan(ss ptrace.SpanSlice, r joinReq) {
	sp := ss.AppendEmpty()
	sp.SetName(genai.ServerSpanNameVLLM)
	sp.SetKind(ptrace.SpanKindServer)
	sp.SetTraceID(traceID(r.n))
	sp.SetSpanID(spanID(r.n + 1<<32))
	parent := r.n
	if r.serverParent != 0 {
		parent = r.serverParent
	}
	sp.SetParentSpanID(spanID(parent))
	start := t0.Add(r.at + time.Duration((r.queue+r.connect)*float64(time.Second)))
	sp.SetStartTimestamp(ptsOf(start))
	sp.SetEndTimestamp(ptsOf(start.Add(time.Duration(r.sE2E * float64(time.Second)))))
	a := sp.Attributes()
	a.PutStr("gen_ai.response.model", "llama")
	a.PutDouble(genai.ServerAttrTimeInQueue, r.sQueue)
	a.PutDouble(genai.VLLMAttrTimeToFirstToken, r.sTTFT)
	a.PutDouble(genai.ServerAttrTimeInPrefill, r.sPrefill)
	a.PutDouble(genai.ServerAttrE2E, r.sE2E)
}

type joinRun struct {
	st  *state
	now time.Time
}

func newJoinRun(t *testing.T, mut func(*JoinConfig)) *joinRun {
	cfg := testConfig(t)
	if mut != nil {
		mut(&cfg.Join)
	}
	require.NoError(t, cfg.Validate())
	jr := &joinRun{now: t0}
	jr.st = newState(cfg, func() time.Time { return jr.now }, newJoiner(cfg.Join))
	return jr
}

// send consumes the client and the server spans of rs in one batch each.
func (jr *joinRun) send(rs []joinReq, server bool) map[string]int64 {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, r := range rs {
		switch {
		case server && !r.noServer:
			addServerSpan(ss, r)
		case !server && !r.noClient:
			addClientSpan(ss, r)
		}
	}
	return jr.st.consumeTraces(td)
}

func (jr *joinRun) report(final bool) *ServerSide {
	if final {
		jr.st.jn.giveUpAll(unjoinedRunEnd)
	}
	return jr.st.build(final).ServerSide
}

// known is a request with every part set: TTFT 0.300 = client queue 0.010 +
// connection 0.005 + network 0.015 + server queue 0.100 + server other 0.020
// + prefill 0.150; E2E 1.300 (decode 1.000).
var known = joinReq{n: 7, queue: 0.010, connect: 0.005, ttft: 0.300, e2e: 1.300,
	sQueue: 0.100, sPrefill: 0.150, sTTFT: 0.270, sE2E: 1.265}

func partsOf(st Stack) map[string]float64 {
	m := map[string]float64{}
	for _, p := range st.Parts {
		m[p.Part] = p.S
	}
	return m
}

func TestJoinDecomposesOneRequest(t *testing.T) {
	for _, order := range []string{"client first", "server first"} {
		t.Run(order, func(t *testing.T) {
			jr := newJoinRun(t, nil)
			var out map[string]int64
			if order == "client first" {
				jr.send([]joinReq{known}, false)
				out = jr.send([]joinReq{known}, true)
			} else {
				out = jr.send([]joinReq{known}, true)
				jr.send([]joinReq{known}, false)
			}
			assert.Equal(t, int64(1), out[spanServer], "a vLLM span without gen_ai.operation.name is a server span")
			ss := jr.report(true)
			require.NotNil(t, ss)
			assert.Equal(t, int64(1), ss.Joined)
			assert.Equal(t, int64(0), ss.JoinedByTrace)
			assert.Equal(t, int64(1), ss.Decomposed)
			assert.Equal(t, 1.0, ss.JoinedRatio)
			assert.Empty(t, ss.UnjoinedClient)
			assert.Empty(t, ss.UnjoinedServer)
			require.Len(t, ss.TTFT, 3)
			p := partsOf(ss.TTFT[1])
			want := map[string]float64{"client_queue": 0.010, "connection": 0.005, "network": 0.015,
				"server_queue": 0.100, "server_other": 0.020, "prefill": 0.150}
			for k, v := range want {
				assert.InDelta(t, v, p[k], 1e-9, k)
			}
			assert.InDelta(t, 0.300, ss.TTFT[1].TotalS, 1e-9)
			assert.InDelta(t, ss.TTFT[1].TotalS, partSum(ss.TTFT[1]), 1e-6, "the parts add up to TTFT")
			assert.Equal(t, "prefill", ss.TTFT[1].Dominant)
			assert.Contains(t, ss.Dominant, "prefill")
			require.Len(t, ss.E2E, 3)
			assert.InDelta(t, 1.000, partsOf(ss.E2E[0])["decode"], 1e-9)
			assert.InDelta(t, 1.300, partSum(ss.E2E[0]), 1e-6, "the parts add up to E2E")
			require.NotNil(t, ss.ServerTTFT)
			assert.InDelta(t, 0.270, ss.ServerTTFT.P50, 0.270*0.011)
		})
	}
}

func TestJoinByTraceWhenAProxySpanIsBetween(t *testing.T) {
	jr := newJoinRun(t, nil)
	r := known
	r.serverParent = 999 // a gateway's span
	jr.send([]joinReq{r}, false)
	jr.send([]joinReq{r}, true)
	ss := jr.report(true)
	assert.Equal(t, int64(1), ss.Joined)
	assert.Equal(t, int64(1), ss.JoinedByTrace)
}

func TestJoinNegativeNetworkIsCountedAndZero(t *testing.T) {
	jr := newJoinRun(t, nil)
	r := known
	r.sTTFT = 0.320 // the server says more than the client saw
	jr.send([]joinReq{r}, false)
	jr.send([]joinReq{r}, true)
	ss := jr.report(true)
	assert.Equal(t, int64(1), ss.NetworkBelowZero)
	assert.Equal(t, 0.0, partsOf(ss.TTFT[0])["network"])
}

func TestJoinTimeoutEvictionAndRunEnd(t *testing.T) {
	jr := newJoinRun(t, func(c *JoinConfig) { c.Hold = 10 * time.Second; c.MaxPending = 3 })
	rs := make([]joinReq, 5)
	for i := range rs {
		rs[i] = known
		rs[i].n = uint64(100 + i)
	}
	// Five clients into room for three: the two oldest are given up.
	jr.send(rs, false)
	ss := jr.report(false)
	assert.Nil(t, ss, "no server span yet: no section")
	jr.send([]joinReq{rs[4]}, true) // joins the newest
	ss = jr.report(false)
	require.NotNil(t, ss)
	assert.Equal(t, map[string]int64{unjoinedEvicted: 2}, ss.UnjoinedClient)
	assert.Equal(t, int64(1), ss.Joined)
	assert.Equal(t, int64(2), ss.WaitingClient)
	// Past the hold the two left time out; a late server span then waits.
	jr.now = jr.now.Add(11 * time.Second)
	jr.send([]joinReq{rs[0]}, true)
	ss = jr.report(false)
	assert.Equal(t, map[string]int64{unjoinedEvicted: 2, unjoinedTimeout: 2}, ss.UnjoinedClient)
	assert.Equal(t, int64(1), ss.WaitingServer)
	// At the end it is given up.
	ss = jr.report(true)
	assert.Equal(t, map[string]int64{unjoinedRunEnd: 1}, ss.UnjoinedServer)
	assert.Equal(t, int64(0), ss.WaitingServer)
	assert.Equal(t, int64(5), ss.ClientSpans)
	assert.Equal(t, int64(2), ss.ServerSpans)
	joined, unjoined := jr.st.jn.takeTelemetry()
	assert.Equal(t, int64(1), joined)
	assert.Equal(t, map[[2]string]int64{{"client", unjoinedEvicted}: 2, {"client", unjoinedTimeout}: 2, {"server", unjoinedRunEnd}: 1}, unjoined)
}

func TestJoinOffWithoutPending(t *testing.T) {
	jr := newJoinRun(t, func(c *JoinConfig) { c.MaxPending = 0 })
	jr.send([]joinReq{known}, false)
	jr.send([]joinReq{known}, true)
	assert.Nil(t, jr.report(true))
}

func TestJoinConfigErrorsNameTheField(t *testing.T) {
	cfg := testConfig(t)
	cfg.Join = JoinConfig{Hold: 0, MaxPending: -1}
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "join.hold")
	assert.Contains(t, err.Error(), "join.max_pending")
}

// TestJoinManyOutOfOrder: 100,000 requests whose server spans arrive in
// another order, in other batches, 1 % of them never; the server queue
// grows with the request number so that the percentiles' parts are known.
func TestJoinManyOutOfOrder(t *testing.T) {
	const n = 100_000
	jr := newJoinRun(t, nil)
	rs, perm, missing := joinLoad(n)
	jr.feed(rs, perm)
	ss := jr.report(true)
	assert.Equal(t, int64(n-missing), ss.Joined)
	assert.Equal(t, int64(n), ss.ClientSpans)
	assert.Equal(t, int64(missing), ss.UnjoinedClient[unjoinedTimeout]+ss.UnjoinedClient[unjoinedRunEnd])
	assert.Empty(t, ss.UnjoinedServer)
	assert.Equal(t, 0, jr.st.jn.waiting)
	assert.Empty(t, jr.st.jn.byTrace)
	assert.LessOrEqual(t, len(jr.st.jn.fifo), 2*1000+1024, "the FIFO drops joined entries")
	// At p95 of TTFT the server queue is ~0.95 s of ~1.0 s.
	p95 := partsOf(ss.TTFT[1])
	assert.InDelta(t, 0.95, p95["server_queue"], 0.95*0.03)
	assert.Equal(t, "server_queue", ss.TTFT[1].Dominant)
	assert.InDelta(t, 0.002, p95["network"], 1e-6)
	for _, st := range append(ss.TTFT, ss.E2E...) {
		assert.InDelta(t, st.TotalS, partSum(st), st.TotalS*1e-5, "p%g", st.Percentile)
	}
	assert.Less(t, len(jr.st.joinSt.ttft.bins), 1500, "stack bins stay bounded")
	assert.False(t, math.IsNaN(ss.TTFT[0].TotalS))
}

func TestJoinRendersWhereTheTimeWent(t *testing.T) {
	jr := newJoinRun(t, nil)
	jr.send([]joinReq{known}, false)
	jr.send([]joinReq{known}, true)
	r := jr.st.build(true)
	rd, err := newRenderer(nil)
	require.NoError(t, err)
	md, err := rd.render(FormatMarkdown, r)
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Where did the time go?")
	assert.Contains(t, string(md), "| TTFT p95 | 300 |")
	assert.Contains(t, string(md), "150 (50.0 %)")
	page, err := rd.render(FormatHTML, r)
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="server-side"`)
	assert.Equal(t, 6*3+7*3, strings.Count(string(page), `class="part `), "one rect per part of each bar")
}

// joinLoad is n requests whose server queue grows with the request number
// (0 to 1 s), 1 % without a server span, and a permutation that shuffles
// the server spans up to 2,500 places.
func joinLoad(n int) (rs []joinReq, perm []int, missing int) {
	rs = make([]joinReq, n)
	for i := range rs {
		q := float64(i) / float64(n)
		rs[i] = joinReq{n: uint64(i + 1), at: time.Duration(i) * time.Millisecond, queue: 0.001, ttft: 0.001 + 0.002 + q + 0.05,
			e2e: 0.5 + q, sQueue: q, sPrefill: 0.05, sTTFT: q + 0.05, sE2E: 0.49 + q}
		if i%100 == 37 {
			rs[i].noServer = true
			missing++
		}
	}
	perm = make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(uint64(i)*2654435761%uint64(i+1)) % (i + 1)
		if i-j < 2500 {
			perm[i], perm[j] = perm[j], perm[i]
		}
	}
	return rs, perm, missing
}

// feed sends rs in batches of 1,000, the server spans in perm's order,
// before the batch's clients in every other batch and after them in the
// rest; the clock moves a second per batch.
func (jr *joinRun) feed(rs []joinReq, perm []int) {
	for b := 0; b < len(rs); b += 1000 {
		batch := make([]joinReq, 0, 1000)
		for _, k := range perm[b : b+1000] {
			batch = append(batch, rs[k])
		}
		if (b/1000)%2 == 0 {
			jr.send(batch, true)
			jr.send(rs[b:b+1000], false)
		} else {
			jr.send(rs[b:b+1000], false)
			jr.send(batch, true)
		}
		jr.now = jr.now.Add(time.Second)
	}
}
