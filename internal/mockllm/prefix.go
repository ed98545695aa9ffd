package mockllm

import (
	"container/list"
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"sync"
)

// The prefix cache (Config.PrefixCacheBlockTokens) models an engine's
// automatic prefix caching, as vLLM's does: a prompt is cut into blocks of
// that many tokens (at four bytes a token, the server's estimate), each
// block named by a hash of itself and every block before it, so a block
// is shared only where the whole prefix up to it is. A request's cached
// tokens are its leading blocks already in the cache; they cost no prefill
// time. Its full blocks then enter the cache, which forgets the least
// recently used block first, a prompt's last blocks before its first. The prompt text is the messages' contents
// in order, without roles or any template ("prompt" for completions): a
// block is a block of what the client wrote.

type prefixCache struct {
	blockBytes int
	capacity   int
	seed       maphash.Seed

	mu      sync.Mutex
	blocks  map[uint64]*list.Element
	lru     *list.List // of uint64, most recent at the front
	lookups int64
}

func newPrefixCache(blockTokens, capacity int) *prefixCache {
	if blockTokens <= 0 {
		return nil
	}
	return &prefixCache{blockBytes: 4 * blockTokens, capacity: capacity, seed: maphash.MakeSeed(),
		blocks: map[uint64]*list.Element{}, lru: list.New()}
}

// lookup returns how many leading full blocks of text were cached, and
// caches every full block of it; seq is the lookup's place in the cache's
// order (1 for the first), which concurrent requests need not follow in
// the order they arrived.
func (c *prefixCache) lookup(text []byte) (hits int, seq int64) {
	n := len(text) / c.blockBytes
	hashes := make([]uint64, n)
	var prev [8]byte
	for i := range n {
		var h maphash.Hash
		h.SetSeed(c.seed)
		_, _ = h.Write(prev[:])
		_, _ = h.Write(text[i*c.blockBytes : (i+1)*c.blockBytes])
		hashes[i] = h.Sum64()
		binary.LittleEndian.PutUint64(prev[:], hashes[i])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookups++
	seq = c.lookups
	for hits < n {
		if _, ok := c.blocks[hashes[hits]]; !ok {
			break
		}
		hits++
	}
	// Last block first, so a prompt's tail is forgotten before its head
	// (vLLM frees a request's blocks in reverse order for the same reason).
	for i := n - 1; i >= 0; i-- {
		h := hashes[i]
		if el, ok := c.blocks[h]; ok {
			c.lru.MoveToFront(el)
			continue
		}
		c.blocks[h] = c.lru.PushFront(h)
		if c.lru.Len() > c.capacity {
			old := c.lru.Remove(c.lru.Back()).(uint64)
			delete(c.blocks, old)
		}
	}
	return hits, seq
}

// promptText is the text the prefix cache hashes.
func (q *completionRequest) promptText() []byte {
	var b []byte
	for _, m := range q.Messages {
		b = appendText(b, m.Content)
	}
	return appendText(b, q.Prompt)
}

// appendText appends a JSON string's text, or the raw JSON of any other
// value (content parts).
func appendText(b []byte, raw json.RawMessage) []byte {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return append(b, s...)
	}
	return append(b, raw...)
}

// cachedTokens looks the request's prompt up in the prefix cache (0 when
// the cache is off) and counts the hit; seq is the lookup's order.
func (s *Server) cachedTokens(q *completionRequest, promptTokens int) (cached int, seq int64) {
	if s.prefix == nil {
		return 0, 0
	}
	hits, seq := s.prefix.lookup(q.promptText())
	cached = min(hits*s.cfg.PrefixCacheBlockTokens, promptTokens)
	s.prefixQueries.Add(int64(promptTokens))
	s.prefixHits.Add(int64(cached))
	return cached, seq
}
