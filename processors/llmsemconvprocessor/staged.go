package llmsemconvprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Staging: with remove_originals, the values a pass writes wait in the
// scratch's own map (s.out) while the originals they come from stay where
// they are, so that their storage can be moved into the new values; once
// the originals are removed, the staged entries move into the item's map,
// into the room the removed ones left. Appending them to the item's map
// directly would mean growing it first (a new array for every normalized
// span, the largest allocation of a pass).

// derivedRoom is how many attributes finishSpan adds at most: time to
// first chunk, time per output token, output tokens per second and the
// three cost attributes.
const derivedRoom = 6

// stage starts staging the writes of this pass.
func (s *scratch) stage() {
	if s.out == (pcommon.Map{}) {
		s.out = pcommon.NewMap()
	}
	s.staged = true
}

// dest is the map this pass writes to.
func (s *scratch) dest(it *item) pcommon.Map {
	if s.staged {
		return s.out
	}
	return it.attrs
}

// get reads an attribute as this pass sees it: a staged write, else the
// item's own.
func (s *scratch) get(it *item, k string) (pcommon.Value, bool) {
	if s.staged {
		if v, ok := s.out.Get(k); ok {
			return v, true
		}
	}
	return it.attrs.Get(k)
}

// unstage moves the staged entries into the item's map (replacing a value
// of the same key) and empties the stage, keeping its storage.
func (s *scratch) unstage(it *item) {
	if !s.staged {
		return
	}
	s.staged = false
	if s.out.Len() == 0 {
		return
	}
	// The map has room for as many entries as it held before the pass
	// (len(s.vals)). Where the staged entries need more, it grows once,
	// with room for what finishSpan derives on an inference span.
	need := it.attrs.Len() + s.out.Len()
	if need > len(s.vals) {
		if it.isSpan && s.inference(it) {
			need += derivedRoom
		}
		it.attrs.EnsureCapacity(need)
	}
	s.out.Range(func(k string, v pcommon.Value) bool {
		v.MoveTo(it.attrs.PutEmpty(k))
		return true
	})
	s.out.RemoveIf(func(string, pcommon.Value) bool { return true })
}

// inference reports whether the item's operation, as this pass wrote it,
// is one finishSpan derives values for.
func (s *scratch) inference(it *item) bool {
	v, ok := s.get(it, attrOperationName)
	return ok && genai.IsInference(v.Str(), genai.WithEmbeddings)
}
