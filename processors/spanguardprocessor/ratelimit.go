package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/collector/client"
)

// overflowKey is the bucket shared by keys beyond rate_limit.max_keys.
const overflowKey = "\x00overflow"

// rateLimiter keeps one token bucket (spans and bytes) per service or tenant.
// A request is admitted whole or refused whole, so a retry never duplicates
// part of it.
type rateLimiter struct {
	source, name         string
	spanRate, byteRate   float64
	spanBurst, byteBurst float64
	maxKeys              int
	buckets              map[string]*bucket
}

type bucket struct {
	spans, bytes float64
	last         time.Time
}

type need struct {
	key   string
	spans float64
	bytes float64
}

func newRateLimiter(cfg RateLimitConfig) *rateLimiter {
	if !cfg.enabled() {
		return nil
	}
	source, name, _ := parseRateKey(cfg.Key)
	r := &rateLimiter{source: source, name: name, spanRate: cfg.SpansPerSecond, byteRate: cfg.BytesPerSecond,
		spanBurst: cfg.BurstSpans, byteBurst: cfg.BurstBytes, maxKeys: cfg.MaxKeys, buckets: map[string]*bucket{}}
	if r.spanBurst == 0 {
		r.spanBurst = r.spanRate
	}
	if r.byteBurst == 0 {
		r.byteBurst = r.byteRate
	}
	return r
}

// needs groups the request's spans and bytes by bucket key.
func (r *rateLimiter) needs(ctx context.Context, sc *scan) []need {
	if r.source == rateKeyMetadata {
		n := need{key: strings.Join(client.FromContext(ctx).Metadata.Get(r.name), ",")}
		for _, res := range sc.resources {
			n.spans += float64(res.spans)
			n.bytes += float64(res.bytes)
		}
		return []need{n}
	}
	var out []need
	for _, res := range sc.resources {
		key := ""
		if v, ok := res.rs.Resource().Attributes().Get(r.name); ok {
			key = v.AsString()
		}
		found := false
		for i := range out {
			if out[i].key == key {
				out[i].spans += float64(res.spans)
				out[i].bytes += float64(res.bytes)
				found = true
				break
			}
		}
		if !found {
			out = append(out, need{key: key, spans: float64(res.spans), bytes: float64(res.bytes)})
		}
	}
	return out
}

func (r *rateLimiter) bucket(key string, now time.Time) *bucket {
	b, ok := r.buckets[key]
	if !ok {
		if len(r.buckets) >= r.maxKeys {
			key = overflowKey
			if b, ok = r.buckets[key]; ok {
				return r.refill(b, now)
			}
		}
		b = &bucket{spans: r.spanBurst, bytes: r.byteBurst, last: now}
		r.buckets[key] = b
		return b
	}
	return r.refill(b, now)
}

func (r *rateLimiter) refill(b *bucket, now time.Time) *bucket {
	dt := now.Sub(b.last).Seconds()
	if dt > 0 {
		b.spans = min(r.spanBurst, b.spans+dt*r.spanRate)
		b.bytes = min(r.byteBurst, b.bytes+dt*r.byteRate)
		b.last = now
	}
	return b
}

// allow admits the whole request if every bucket it touches has the tokens
// (a request larger than a bucket's burst passes when that bucket is full,
// leaving it in debt), and takes them.
func (r *rateLimiter) allow(ctx context.Context, sc *scan, now time.Time) bool {
	needs := r.needs(ctx, sc)
	buckets := make([]*bucket, len(needs))
	for i, n := range needs {
		b := r.bucket(n.key, now)
		buckets[i] = b
		if r.spanRate > 0 && b.spans < min(n.spans, r.spanBurst) {
			return false
		}
		if r.byteRate > 0 && b.bytes < min(n.bytes, r.byteBurst) {
			return false
		}
	}
	for i, n := range needs {
		if r.spanRate > 0 {
			buckets[i].spans -= n.spans
		}
		if r.byteRate > 0 {
			buckets[i].bytes -= n.bytes
		}
	}
	return true
}
