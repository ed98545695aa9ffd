package spanguardprocessor

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzSpanGuard sends random forests of spans (random parents, including
// unknown ones and cycles, errors, durations, names and payloads, split
// into random requests) through a processor with random small limits. It
// must not panic, the conservation law must hold, and no batch may exceed
// max_batch_bytes or max_batch_spans.
func FuzzSpanGuard(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1 << 40, 977} {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], seed)
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var seed [16]byte
		copy(seed[:], data)
		r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])^uint64(len(data))))
		h := newHarness(t, func(c *Config) {
			c.MaxBatchSpans = 1 + r.IntN(200)
			c.MaxBatchBytes = 1024 + r.IntN(64<<10)
			c.TraceBudget.MaxSpans = r.IntN(60)
			c.TraceBudget.MaxBytes = int64(r.IntN(32 << 10))
			c.TraceBudget.MaxTraces = 1 + r.IntN(4)
			c.Compression.Enabled = r.IntN(4) != 0
			c.Compression.MinRun = 2 + r.IntN(3)
			c.SpanLimits.MaxAttributeBytes = r.IntN(2048)
			if c.SpanLimits.MaxAttributeBytes > 0 && c.SpanLimits.MaxAttributeBytes <= len(c.SpanLimits.TruncationMarker) {
				c.SpanLimits.MaxAttributeBytes = 0
			}
			c.SpanLimits.MaxAttributes = r.IntN(8)
			if r.IntN(2) == 0 {
				c.SpanLimits.Apply = limitsAlways
			}
		})
		names := []string{"chunk", "tool", "llm", "step"}
		sent := 0
		for tr := 0; tr < 1+r.IntN(5); tr++ {
			b := newTraceBuilder(byte(tr+1), []string{"a", "b"}[r.IntN(2)])
			n := 1 + r.IntN(400)
			ids := make([]uint64, 0, n)
			specs := make([]spanSpec, 0, n)
			for i := 0; i < n; i++ {
				id := b.id()
				var parent uint64
				switch k := r.IntN(10); {
				case k == 0 || len(ids) == 0:
				case k == 1:
					parent = r.Uint64() // unknown parent
				case k == 2:
					parent = id + 1 + uint64(r.IntN(3)) // a later span (or a cycle)
				default:
					parent = ids[r.IntN(len(ids))]
				}
				s := spanSpec{id: id, parent: parent, name: names[r.IntN(len(names))],
					start: time.Duration(r.IntN(1000)) * time.Millisecond, dur: time.Duration(r.IntN(200)) * time.Millisecond,
					err: r.IntN(20) == 0}
				if r.IntN(8) == 0 {
					s.attrs = map[string]any{"payload": strings.Repeat("p", r.IntN(80<<10)), "k": r.IntN(5)}
				}
				ids = append(ids, id)
				specs = append(specs, s)
			}
			r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
			for len(specs) > 0 {
				k := 1 + r.IntN(len(specs))
				td, spans := b.request()
				for _, s := range specs[:k] {
					b.put(spans, s)
				}
				require.NoError(t, h.g.ConsumeTraces(context.Background(), td))
				sent += k
				specs = specs[k:]
				if r.IntN(4) == 0 {
					h.g.onTick(time.Now().Add(time.Duration(r.IntN(60)) * time.Second))
				}
			}
		}
		h.shutdown() // checks conservation and batch limits
		assert.Equal(t, int64(sent), h.sum("otelcol_span_guard_spans_received"))
		assert.Zero(t, h.sum("otelcol_span_guard_trace_state_bytes"), "state released")
	})
}

// TestRandomTreesStayConnected sends 200 random well-formed trees (one root,
// every parent a span of the trace), in random order and random request
// splits, through small budgets. Whatever the ladder drops or folds, every
// forwarded span's parent must be forwarded too.
func TestRandomTreesStayConnected(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		h := newHarness(t, func(c *Config) {
			c.TraceBudget.MaxSpans = 1 + r.IntN(40)
			c.TraceBudget.MaxBytes = int64(2000 + r.IntN(20000))
			c.Compression.Enabled = r.IntN(2) == 0
		})
		b := newTraceBuilder(byte(seed), "svc")
		n := 1 + r.IntN(300)
		ids := []uint64{b.id()}
		specs := []spanSpec{{id: ids[0], name: "root", dur: time.Minute}}
		for i := 1; i < n; i++ {
			id := b.id()
			specs = append(specs, spanSpec{id: id, parent: ids[r.IntN(len(ids))], name: []string{"a", "b"}[r.IntN(2)],
				start: time.Duration(r.IntN(1000)) * time.Millisecond, dur: time.Duration(r.IntN(150)) * time.Millisecond,
				err: r.IntN(15) == 0})
			ids = append(ids, id)
		}
		r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
		b.send(t, h.g, specs, 1+r.IntN(n))
		h.shutdown()
		out := output(h.sink.AllTraces(), b.tid)
		for id, s := range out {
			if s.Name() == summarySpanName {
				delete(out, id)
			}
		}
		assertConnected(t, out, ids[0])
		for _, s := range specs {
			if s.err || s.parent == 0 {
				assert.Contains(t, out, s.id, "seed %d: root or error span dropped", seed)
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}
