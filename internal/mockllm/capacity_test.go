package mockllm

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor polls cond for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 2*time.Millisecond, what)
}

type asyncResult struct {
	resp *http.Response
	err  error
}

// sendAsync posts body with the tag in tracestate (so the ground truth can
// be found even when no response header came back) and delivers the
// response once its headers arrive.
func sendAsync(ctx context.Context, t *testing.T, url, tag, body string, hdr map[string]string) <-chan asyncResult {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("tracestate", "t="+tag)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	out := make(chan asyncResult, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		out <- asyncResult{resp, err}
	}()
	return out
}

// recordOf waits for the finished ground truth of the request tagged tag.
func recordOf(t *testing.T, s *Server, tag string) Record {
	t.Helper()
	var rec Record
	waitFor(t, "record "+tag, func() bool {
		for _, r := range s.Records() {
			if r.Tracestate == "t="+tag {
				rec = r
				return true
			}
		}
		return false
	})
	return rec
}

func finish(t *testing.T, r asyncResult) {
	t.Helper()
	require.NoError(t, r.err)
	_, _ = io.Copy(io.Discard, r.resp.Body)
	r.resp.Body.Close()
}

const streamBody = `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`

// TestQueueWaitIsPartOfTTFT: with one slot, the second request's TTFT clock
// starts only after the first has sent its last token, whatever the speed
// of the machine.
func TestQueueWaitIsPartOfTTFT(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxRunning = 1; c.OutputTokens = 50; c.ITL = 20 * time.Millisecond })
	url := s.URL() + "/v1/chat/completions"
	a := sendAsync(context.Background(), t, url, "a", streamBody, nil)
	waitFor(t, "a running", func() bool { return s.Stats().Running == 1 })
	b := sendAsync(context.Background(), t, url, "b", streamBody, map[string]string{HeaderOutputTokens: "2"})
	finish(t, <-a)
	finish(t, <-b)
	ra, rb := recordOf(t, s, "a"), recordOf(t, s, "b")
	require.Len(t, ra.ChunkTimes, 50)
	lastA := ra.ChunkTimes[len(ra.ChunkTimes)-1]
	admittedB := rb.Received.Add(rb.QueueWait)
	assert.False(t, admittedB.Before(lastA), "b got the slot before a's last token")
	assert.True(t, rb.FirstContentAt.After(lastA))
	assert.GreaterOrEqual(t, rb.TTFT(), rb.QueueWait+rb.PlannedTTFT, "the queue wait is part of the TTFT")
	if rb.Received.Before(lastA) { // b arrived while a decoded: it queued
		assert.Positive(t, rb.QueueWait)
		assert.EqualValues(t, 1, s.Stats().MaxQueued)
	}
	waitFor(t, "slot free", func() bool { st := s.Stats(); return st.Running == 0 && st.Queued == 0 })
}

// TestQueueFullAndClientGone: one slot held, one request queued, the third
// is refused at once with the overloaded 503; the queued client leaving
// empties the queue; embeddings never wait.
func TestQueueFullAndClientGone(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxRunning = 1; c.MaxQueue = 1 })
	url := s.URL() + "/v1/chat/completions"
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	a := sendAsync(ctxA, t, url, "a", streamBody, map[string]string{HeaderTTFT: "600000"})
	ra := <-a
	require.NoError(t, ra.err)
	defer ra.resp.Body.Close()
	require.Equal(t, http.StatusOK, ra.resp.StatusCode)

	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	b := sendAsync(ctxB, t, url, "b", `{"messages":[]}`, nil) // unary requests queue too
	waitFor(t, "b queued", func() bool { return s.Stats().Queued == 1 })

	c := post(t, url, streamBody, map[string]string{"tracestate": "t=c"})
	assert.Equal(t, http.StatusServiceUnavailable, c.StatusCode)
	raw, _ := io.ReadAll(c.Body)
	assert.Contains(t, string(raw), "currently overloaded")
	rc := recordOf(t, s, "c")
	assert.True(t, rc.QueueFull)
	assert.Empty(t, rc.Fault)
	st := s.Stats()
	assert.EqualValues(t, 1, st.Rejected)
	assert.EqualValues(t, 0, st.Faults)

	emb := post(t, s.URL()+"/v1/embeddings", `{"input":"x"}`, nil)
	assert.Equal(t, http.StatusOK, emb.StatusCode, "embeddings take no slot")

	cancelB()
	rb := <-b
	require.Error(t, rb.err)
	waitFor(t, "b left the queue", func() bool { return s.Stats().Queued == 0 })
	recB := recordOf(t, s, "b")
	assert.True(t, recB.ClientGone)
	assert.Positive(t, recB.QueueWait)
	assert.Zero(t, recB.Status)

	cancelA()
	waitFor(t, "a released its slot", func() bool { return s.Stats().Running == 0 })
	st = s.Stats()
	assert.EqualValues(t, 2, st.ClientGone)
	assert.EqualValues(t, 1, st.MaxQueued)
}

// TestQueueIsFIFO: the slot a finished request frees goes to the oldest
// waiter.
func TestQueueIsFIFO(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxRunning = 1 })
	url := s.URL() + "/v1/chat/completions"
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	ra := <-sendAsync(ctxA, t, url, "a", streamBody, map[string]string{HeaderTTFT: "600000"})
	require.NoError(t, ra.err)
	defer ra.resp.Body.Close()
	tags := []string{"b", "c", "d"}
	var pending []<-chan asyncResult
	for i, tag := range tags {
		pending = append(pending, sendAsync(context.Background(), t, url, tag, streamBody, nil))
		waitFor(t, tag+" queued", func() bool { return s.Stats().Queued == int64(i+1) })
	}
	cancelA()
	for _, p := range pending {
		finish(t, <-p)
	}
	prev := recordOf(t, s, "a")
	for _, tag := range tags {
		rec := recordOf(t, s, tag)
		assert.True(t, rec.DoneSent, tag)
		assert.True(t, rec.Received.Add(rec.QueueWait).After(prev.Received.Add(prev.QueueWait)), "%s admitted before the request ahead of it", tag)
		if len(prev.ChunkTimes) > 0 {
			assert.False(t, rec.Received.Add(rec.QueueWait).Before(prev.ChunkTimes[len(prev.ChunkTimes)-1]), tag)
		}
		prev = rec
	}
	assert.EqualValues(t, 3, s.Stats().MaxQueued)
}

// TestBatchSlowdown: with a full batch every gap is (1+BatchSlowdown)·ITL,
// a lower bound that holds on any machine.
func TestBatchSlowdown(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxRunning = 1; c.ITL = time.Millisecond; c.BatchSlowdown = 20 })
	resp := post(t, s.URL()+"/v1/chat/completions", streamBody, nil)
	res := readStream(resp.Body)
	require.True(t, res.done)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, ok := s.Record(ctx, resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	require.Len(t, rec.ChunkTimes, 8)
	firstDue := rec.Received.Add(rec.QueueWait + rec.PlannedTTFT)
	decode := rec.ChunkTimes[7].Sub(firstDue)
	assert.GreaterOrEqual(t, decode, 7*21*time.Millisecond)
}

func TestEngineSlowdownAndFIFO(t *testing.T) {
	e := newEngine(4, 0, 0)
	assert.InDelta(t, 1.0, e.slowdown(1), 1e-12)
	_, r1, err := e.admitKV(context.Background(), 0)
	require.NoError(t, err)
	_, r2, err := e.admitKV(context.Background(), 0)
	require.NoError(t, err)
	assert.InDelta(t, 1.5, e.slowdown(1), 1e-12)
	assert.InDelta(t, 1.0, e.slowdown(0), 1e-12)
	r1.release()
	r2.release()
	assert.EqualValues(t, 0, e.running.Load())
	assert.InDelta(t, 1.0, newEngine(0, 0, 0).slowdown(5), 1e-12, "no slowdown without a slot limit")

	one := newEngine(1, 0, 0)
	_, release, err := one.admitKV(context.Background(), 0)
	require.NoError(t, err)
	order := make(chan int, 5)
	for i := 0; i < 5; i++ {
		go func() {
			_, rel, err := one.admitKV(context.Background(), 0)
			if err == nil {
				order <- i
				rel.release()
			}
		}()
		waitFor(t, "queued", func() bool { return one.queued.Load() == int64(i+1) })
	}
	release.release()
	for i := 0; i < 5; i++ {
		assert.Equal(t, i, <-order)
	}
	waitFor(t, "all released", func() bool { return one.running.Load() == 0 })
}

func TestCapacityConfigValidate(t *testing.T) {
	c := DefaultConfig()
	assert.Zero(t, c.MaxRunning, "unlimited by default")
	c.MaxRunning, c.MaxQueue, c.BatchSlowdown = -1, -2, -0.5
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{"max_running: must be >= 0", "max_queue: must be >= 0", "batch_slowdown: must be a finite number >= 0"} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestPrefillSlowsWithTheBatch: a request that joins a full batch prefills
// at the batch's pace: with batch_slowdown 1 and every slot taken, its TTFT
// is twice the planned one.
func TestPrefillSlowsWithTheBatch(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.MaxRunning, c.BatchSlowdown, c.TTFT, c.ITL, c.OutputTokens = 4, 1, 60*time.Millisecond, 5*time.Millisecond, 400
	})
	for i := 0; i < 3; i++ {
		go func() {
			resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[]}`))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	waitFor(t, "three running", func() bool { return s.Stats().Running == 3 })
	resp := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"messages":[]}`, map[string]string{HeaderOutputTokens: "2"})
	readStream(resp.Body)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, ok := s.Record(ctx, resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	assert.GreaterOrEqual(t, rec.TTFT(), 2*60*time.Millisecond, "4 of 4 slots taken: prefill at half speed")
	forced := post(t, s.URL()+"/v1/chat/completions", `{"stream":true,"messages":[]}`, map[string]string{HeaderOutputTokens: "2", HeaderTTFT: "30"})
	readStream(forced.Body)
	frec, ok := s.Record(ctx, forced.Header.Get(HeaderRequestID))
	require.True(t, ok)
	assert.Less(t, frec.TTFT(), 60*time.Millisecond, "a TTFT the request forces is not slowed")
}
