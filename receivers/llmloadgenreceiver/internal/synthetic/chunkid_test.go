package synthetic

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChunkSpanIDDistinct: a chunk span's id differs from its parent's, for
// every value of the parent's low bytes, and from every sibling's. The
// former derivation overwrote bytes 6 and 7 with (i, i>>8^0x80), so chunk 27
// of a parent ending in 1b 80 carried its parent's id (about one chat span
// in 2,000 with 32 chunk spans): a span that is its own parent.
func TestChunkSpanIDDistinct(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		parent := [8]byte{0xa7, 0xf1, 0xbd, 0x69, 0x24, 0x6e, byte(b >> 8), byte(b)}
		for i := 0; i < 64; i++ {
			if id := chunkSpanID(parent, i); id == parent {
				t.Fatalf("chunk %d of %x has its parent's id", i, parent)
			}
		}
	}
	for _, parent := range [][8]byte{
		{0xa7, 0xf1, 0xbd, 0x69, 0x24, 0x6e, 0x1b, 0x80},
		{0x01, 0, 0, 0, 0, 0, 0, 0},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		seen := map[[8]byte]bool{parent: true}
		for i := 0; i < 70000; i++ {
			id := chunkSpanID(parent, i)
			if seen[id] {
				t.Fatalf("chunk %d of %x repeats an id of its family", i, parent)
			}
			seen[id] = true
		}
	}
	// Deterministic, and the parent's first bytes (hence its odd first byte:
	// never an all-zero id) are kept.
	p := [8]byte{0xa7, 0xf1, 0xbd, 0x69, 0x24, 0x6e, 0x1b, 0x80}
	assert.Equal(t, chunkSpanID(p, 27), chunkSpanID(p, 27))
	far := chunkSpanID(p, 70000)
	assert.Equal(t, p[:5], far[:5])
}
