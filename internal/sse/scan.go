package sse

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
)

// ChunkSummary is what a load generator needs from one chunk: the response
// id and model, how many choices it carries, whether any of them carries
// generated content, its finish reason, the usage and an in-stream error.
// Its byte slices point into the event data or into the summary's own
// storage and are valid until the next ScanChunk with the same summary.
type ChunkSummary struct {
	ID    []byte
	Model []byte
	// Choices is the number of entries of "choices".
	Choices int
	// Content is true when a choice carries text, content or reasoning
	// (reasoning_content, or Ollama's and others' reasoning) that is not
	// empty, or tool-call deltas; Answer when it carries any of them but
	// reasoning (a reasoning model's answer, after its thinking).
	Content bool
	Answer  bool
	// Finish is the first non-empty finish_reason of the choices.
	Finish []byte
	// HasUsage is true when the chunk carries a usage object (or, without
	// one, Groq's x_groq.usage), kept in Usage.
	HasUsage bool
	Usage    UsageCounts
	// Error is the in-stream error object, nil for a chunk.
	Error *APIError

	chunk Chunk // the fallback's decoding
	str   []byte
}

// ScanChunk parses one event's data as a chunk, as DecodeChunk does, and
// summarizes it. Chunks of the usual shape (no escapes in the strings it
// returns, no duplicate or case-folded member names, no error member) are
// scanned without allocating; anything else, including every malformed
// chunk, is decoded by DecodeChunk, so the errors and the accepted inputs
// are exactly DecodeChunk's.
func ScanChunk(data []byte, s *ChunkSummary) error {
	if scanChunk(data, s) {
		return nil
	}
	if err := DecodeChunk(data, &s.chunk); err != nil {
		*s = ChunkSummary{str: s.str[:0]}
		return err
	}
	s.fromChunk(&s.chunk)
	return nil
}

// fromChunk summarizes a decoded chunk.
func (s *ChunkSummary) fromChunk(c *Chunk) {
	b := append(s.str[:0], c.ID...)
	b = append(b, c.Model...)
	f := c.FinishReason()
	b = append(b, f...)
	s.str = b
	s.ID = b[:len(c.ID):len(c.ID)]
	s.Model = b[len(c.ID) : len(c.ID)+len(c.Model) : len(c.ID)+len(c.Model)]
	s.Finish = b[len(c.ID)+len(c.Model):]
	s.Choices = len(c.Choices)
	n, tools := c.ContentLen()
	s.Content = n > 0 || tools
	s.Answer = n > c.ReasoningLen() || tools
	u := c.usage()
	s.HasUsage = u != nil
	s.Usage = UsageCounts{}
	if u != nil {
		s.Usage = u.Counts()
	}
	s.Error = c.Error
}

// Member names of the decoded objects. encoding/json matches names without
// regard to case; a member whose name folds to one of these without being
// it is left to the fallback.
var (
	chunkNames  = [][]byte{[]byte("id"), []byte("object"), []byte("created"), []byte("model"), []byte("choices"), []byte("usage"), []byte("error"), []byte("x_groq")}
	choiceNames = [][]byte{[]byte("index"), []byte("delta"), []byte("text"), []byte("finish_reason")}
	deltaNames  = [][]byte{[]byte("role"), []byte("content"), []byte("reasoning_content"), []byte("reasoning"), []byte("tool_calls")}
	usageNames  = [][]byte{[]byte("prompt_tokens"), []byte("completion_tokens"), []byte("total_tokens"), []byte("completion_tokens_details"), []byte("prompt_tokens_details")}
	groqNames   = [][]byte{[]byte("usage")}
)

// scanChunk is the fast path. It returns false when it cannot vouch for its
// result: invalid JSON, a shape encoding/json would reject or decode
// differently, or anything it does not handle.
func scanChunk(d []byte, s *ChunkSummary) bool {
	*s = ChunkSummary{str: s.str}
	i := jsonscan.SkipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(d, i+1)
	if i >= len(d) || d[i] == '}' {
		return false // {} has neither choices nor error
	}
	var st chunkScan
	var seen uint8
	for {
		key, j, ok := scanKey(d, i)
		if !ok {
			return false
		}
		var bit uint8
		if i, bit, ok = st.member(d, key, j, s); !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if i, ok = nextMember(d, i); !ok {
			return false
		}
		if d[i] == '}' {
			break
		}
	}
	if !s.HasUsage && st.hasGroq {
		s.HasUsage, s.Usage = true, st.groq
	}
	// Nothing but white space may follow, and a chunk must have choices.
	return jsonscan.SkipSpace(d, i+1) == len(d) && st.choices
}

// chunkScan is what scanChunk learns beside the summary: whether choices
// came, and Groq's usage.
type chunkScan struct {
	choices, hasGroq bool
	groq             UsageCounts
}

// member scans the value at d[i] of the chunk's member key into s and
// returns the index after it and the member's bit (0: one it skips); ok
// false when the fast path cannot vouch for the chunk.
func (st *chunkScan) member(d, key []byte, i int, s *ChunkSummary) (next int, bit uint8, ok bool) {
	switch string(key) {
	case "id":
		s.ID, i, ok = scanPlainStr(d, i)
		return i, 1, ok
	case "object":
		i, ok = skipStrOrNull(d, i)
		return i, 2, ok
	case "created":
		i, ok = scanInt(d, i, nil)
		return i, 4, ok
	case "model":
		s.Model, i, ok = scanPlainStr(d, i)
		return i, 8, ok
	case "choices":
		if jsonscan.IsNull(d, i) {
			return i + 4, 16, true
		}
		st.choices = true
		i, ok = scanChoices(d, i, s)
		return i, 16, ok
	case "usage":
		if jsonscan.IsNull(d, i) {
			return i + 4, 32, true
		}
		s.HasUsage = true
		i, ok = scanUsage(d, i, &s.Usage)
		return i, 32, ok
	case "error":
		// In-stream errors are decoded by encoding/json.
		return i + 4, 64, jsonscan.IsNull(d, i)
	case "x_groq":
		i, ok = scanGroq(d, i, &st.groq, &st.hasGroq)
		return i, 128, ok
	}
	if foldsTo(key, chunkNames) {
		return i, 0, false
	}
	i, ok = jsonscan.Value(d, i)
	return i, 0, ok
}

// scanChoices scans the choices array starting at d[i] == '['.
func scanChoices(d []byte, i int, s *ChunkSummary) (int, bool) {
	if i >= len(d) || d[i] != '[' {
		return i, false
	}
	i = jsonscan.SkipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, true
	}
	for {
		if jsonscan.IsNull(d, i) {
			i += 4 // a null element is a zero choice
		} else {
			var ok bool
			if i, ok = scanChoice(d, i, s); !ok {
				return i, false
			}
		}
		s.Choices++
		i = jsonscan.SkipSpace(d, i)
		if i >= len(d) {
			return i, false
		}
		if d[i] == ']' {
			return i + 1, true
		}
		if d[i] != ',' {
			return i, false
		}
		i = jsonscan.SkipSpace(d, i+1)
	}
}

// scanChoice scans one choice object starting at d[i].
func scanChoice(d []byte, i int, s *ChunkSummary) (int, bool) {
	if i >= len(d) || d[i] != '{' {
		return i, false
	}
	i = jsonscan.SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, true
	}
	var seen uint8
	for {
		key, j, ok := scanKey(d, i)
		if !ok {
			return i, false
		}
		i = j
		var bit uint8
		switch string(key) {
		case "index":
			bit = 1
			i, ok = scanInt(d, i, nil)
		case "delta":
			bit = 2
			if jsonscan.IsNull(d, i) {
				i += 4
				break
			}
			i, ok = scanDelta(d, i, s)
		case "text":
			bit = 4
			var n int
			n, i, ok = scanContent(d, i)
			if n > 0 {
				s.Content, s.Answer = true, true
			}
		case "finish_reason":
			bit = 8
			var f []byte
			f, i, ok = scanPlainStr(d, i)
			if len(f) > 0 && len(s.Finish) == 0 {
				s.Finish = f
			}
		default:
			if foldsTo(key, choiceNames) {
				return i, false
			}
			i, ok = jsonscan.Value(d, i)
		}
		if !ok || seen&bit != 0 {
			return i, false
		}
		seen |= bit
		if i, ok = nextMember(d, i); !ok {
			return i, false
		}
		if d[i] == '}' {
			return i + 1, true
		}
	}
}

// scanDelta scans a chat delta object starting at d[i].
func scanDelta(d []byte, i int, s *ChunkSummary) (int, bool) {
	if i >= len(d) || d[i] != '{' {
		return i, false
	}
	i = jsonscan.SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, true
	}
	var seen uint8
	for {
		key, j, ok := scanKey(d, i)
		if !ok {
			return i, false
		}
		i = j
		var bit uint8
		switch string(key) {
		case "role":
			bit = 1
			i, ok = skipStrOrNull(d, i)
		case "content", "reasoning_content", "reasoning":
			bit = 2
			switch string(key) {
			case "reasoning_content":
				bit = 4
			case "reasoning":
				bit = 16
			}
			var n int
			n, i, ok = scanContent(d, i)
			if n > 0 {
				s.Content = true
				s.Answer = s.Answer || bit == 2
			}
		case "tool_calls":
			bit = 8
			if jsonscan.IsNull(d, i) {
				i += 4
				break
			}
			start := i
			if i, ok = jsonscan.Value(d, i); ok && hasToolCalls(d[start:i]) {
				s.Content, s.Answer = true, true
			}
		default:
			if foldsTo(key, deltaNames) {
				return i, false
			}
			i, ok = jsonscan.Value(d, i)
		}
		if !ok || seen&bit != 0 {
			return i, false
		}
		seen |= bit
		if i, ok = nextMember(d, i); !ok {
			return i, false
		}
		if d[i] == '}' {
			return i + 1, true
		}
	}
}

// scanUsage scans a usage object starting at d[i].
func scanUsage(d []byte, i int, u *UsageCounts) (int, bool) {
	return scanObject(d, i, usageNames, func(key []byte, i int) (int, uint8, bool) {
		switch string(key) {
		case "prompt_tokens":
			i, ok := scanInt(d, i, &u.Prompt)
			return i, 1, ok
		case "completion_tokens":
			i, ok := scanInt(d, i, &u.Completion)
			return i, 2, ok
		case "total_tokens":
			i, ok := scanInt(d, i, &u.Total)
			return i, 4, ok
		case "completion_tokens_details":
			i, ok := scanDetail(d, i, "reasoning_tokens", &u.Reasoning)
			return i, 8, ok
		case "prompt_tokens_details":
			i, ok := scanDetail(d, i, "cached_tokens", &u.Cached)
			return i, 16, ok
		}
		return i, 0, true
	})
}

// scanDetail scans a details object (or null) starting at d[i] for its
// member name, an integer.
func scanDetail(d []byte, i int, name string, v *int) (int, bool) {
	if jsonscan.IsNull(d, i) {
		return i + 4, true
	}
	names := [][]byte{[]byte(name)}
	return scanObject(d, i, names, func(key []byte, i int) (int, uint8, bool) {
		if string(key) != name {
			return i, 0, true
		}
		i, ok := scanInt(d, i, v)
		return i, 1, ok
	})
}

// scanGroq scans Groq's x_groq object starting at d[i] for its usage.
func scanGroq(d []byte, i int, u *UsageCounts, has *bool) (int, bool) {
	if jsonscan.IsNull(d, i) {
		return i + 4, true
	}
	return scanObject(d, i, groqNames, func(key []byte, i int) (int, uint8, bool) {
		if string(key) != "usage" {
			return i, 0, true
		}
		if jsonscan.IsNull(d, i) {
			return i + 4, 1, true
		}
		*has = true
		i, ok := scanUsage(d, i, u)
		return i, 1, ok
	})
}

// scanObject scans an object starting at d[i]. member scans the value at i
// of a member it knows and returns the index after it, the member's bit
// (to refuse a duplicate) and whether the scan went well; for any other
// member it returns bit 0 and the value is skipped, unless encoding/json
// would match its name to one of names (the fallback's case).
func scanObject(d []byte, i int, names [][]byte, member func(key []byte, i int) (int, uint8, bool)) (int, bool) {
	if i >= len(d) || d[i] != '{' {
		return i, false
	}
	i = jsonscan.SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, true
	}
	var seen uint8
	for {
		key, j, ok := scanKey(d, i)
		if !ok {
			return i, false
		}
		var bit uint8
		i, bit, ok = member(key, j)
		if bit == 0 {
			if foldsTo(key, names) {
				return i, false
			}
			i, ok = jsonscan.Value(d, j)
		}
		if !ok || seen&bit != 0 {
			return i, false
		}
		seen |= bit
		if i, ok = nextMember(d, i); !ok {
			return i, false
		}
		if d[i] == '}' {
			return i + 1, true
		}
	}
}

// nextMember skips white space after a member's value and returns the index
// of the ',' or '}' that follows; after a ',' it returns the index of the
// next member's name.
func nextMember(d []byte, i int) (int, bool) {
	i = jsonscan.SkipSpace(d, i)
	if i >= len(d) {
		return i, false
	}
	switch d[i] {
	case '}':
		return i, true
	case ',':
		i = jsonscan.SkipSpace(d, i+1)
		return i, i < len(d) && d[i] == '"'
	}
	return i, false
}

// scanKey scans a member name and the ':' after it, returning the name and
// the index of the value. Names with escapes are refused.
func scanKey(d []byte, i int) ([]byte, int, bool) {
	if i >= len(d) || d[i] != '"' {
		return nil, i, false
	}
	start := i + 1
	end, esc, ok := jsonscan.String(d, i)
	if !ok || esc {
		return nil, i, false
	}
	i = jsonscan.SkipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return nil, i, false
	}
	return d[start : end-1], jsonscan.SkipSpace(d, i+1), true
}

// scanPlainStr scans a string or null whose value the caller keeps. It
// refuses strings that decoding would change (escapes, invalid UTF-8).
func scanPlainStr(d []byte, i int) ([]byte, int, bool) {
	if jsonscan.IsNull(d, i) {
		return nil, i + 4, true
	}
	if i >= len(d) || d[i] != '"' {
		return nil, i, false
	}
	end, esc, ok := jsonscan.String(d, i)
	if !ok || esc {
		return nil, i, false
	}
	v := d[i+1 : end-1 : end-1]
	for _, c := range v {
		if c >= utf8.RuneSelf {
			if !utf8.Valid(v) {
				return nil, i, false
			}
			break
		}
	}
	return v, end, true
}

// scanContent scans a string or null holding generated text and returns the
// length of its raw form (0 for null and ""; any other string decodes to at
// least one byte).
func scanContent(d []byte, i int) (int, int, bool) {
	if jsonscan.IsNull(d, i) {
		return 0, i + 4, true
	}
	if i >= len(d) || d[i] != '"' {
		return 0, i, false
	}
	end, _, ok := jsonscan.String(d, i)
	return end - i - 2, end, ok
}

func skipStrOrNull(d []byte, i int) (int, bool) {
	if jsonscan.IsNull(d, i) {
		return i + 4, true
	}
	if i >= len(d) || d[i] != '"' {
		return i, false
	}
	end, _, ok := jsonscan.String(d, i)
	return end, ok
}

// scanInt scans an integer that fits an int64, or null (which leaves *v
// alone, as encoding/json does). v may be nil.
func scanInt(d []byte, i int, v *int) (int, bool) {
	if jsonscan.IsNull(d, i) {
		return i + 4, true
	}
	end, integer, ok := jsonscan.Number(d, i)
	if !ok || !integer {
		return i, false
	}
	lit := d[i:end]
	var n int64
	if len(lit) <= 18 {
		neg := lit[0] == '-'
		if neg {
			lit = lit[1:]
		}
		for _, c := range lit {
			n = 10*n + int64(c-'0')
		}
		if neg {
			n = -n
		}
	} else {
		var err error
		if n, err = strconv.ParseInt(string(lit), 10, 64); err != nil {
			return i, false
		}
	}
	if v != nil {
		*v = int(n)
	}
	return end, true
}

// foldsTo reports whether name equals one of names under encoding/json's
// case folding (bytes.EqualFold) without being exactly it.
func foldsTo(name []byte, names [][]byte) bool {
	ascii := true
	for _, c := range name {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	for _, n := range names {
		if ascii && len(n) != len(name) {
			continue
		}
		if bytes.EqualFold(name, n) {
			return true
		}
	}
	return false
}
