// Package tokenize counts and cuts text in a model's own tokens, from the
// model's Hugging Face tokenizer.json, its SentencePiece tokenizer.model,
// or one of OpenAI's tiktoken encodings
// (embedded, no download), so that live prompts can be built to exact token
// counts instead of the four-bytes-a-token estimate.
package tokenize // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/tokenize"

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// Config names the tokenizer.
type Config struct {
	// Path is a Hugging Face tokenizer.json (BPE, WordPiece or Unigram
	// models) or a SentencePiece BPE model file (tokenizer.model: Gemma,
	// Llama 2, Mistral), told apart by content; empty: no tokenizer, token
	// counts are estimates.
	Path string `mapstructure:"path"`
	// Encoding is one of OpenAI's tiktoken encodings (Encodings), for
	// OpenAI's models and servers that count with them; instead of Path.
	Encoding string `mapstructure:"encoding"`
}

// Encodings are the tiktoken encodings that can be named: o200k_base
// (GPT-4o, o-series, gpt-oss), cl100k_base (GPT-4, GPT-3.5), p50k_base
// (Codex, text-davinci-002/003) and r50k_base (GPT-2, GPT-3).
var Encodings = []string{tiktoken.MODEL_O200K_BASE, tiktoken.MODEL_CL100K_BASE, tiktoken.MODEL_P50K_BASE, tiktoken.MODEL_R50K_BASE}

// Validate checks that the file can be read or the encoding exists, naming
// the field under prefix.
func (c Config) Validate(prefix string) error {
	switch {
	case c.Path != "" && c.Encoding != "":
		return fmt.Errorf("%s: set path (a tokenizer.json) or encoding (tiktoken), not both", prefix)
	case c.Encoding != "":
		for _, e := range Encodings {
			if c.Encoding == e {
				return nil
			}
		}
		return fmt.Errorf("%s.encoding: unknown value %q; allowed values: %s", prefix, c.Encoding, strings.Join(Encodings, ", "))
	case c.Path == "":
		return nil
	}
	if _, err := os.Stat(c.Path); err != nil {
		return fmt.Errorf("%s.path: %w", prefix, err)
	}
	return nil
}

// codec is a tokenizer library: text to ids and back, without special
// tokens.
type codec interface {
	encode(s string) ([]int, error)
	// starts returns s's ids and the byte offset in s where each begins.
	starts(s string) ([]int, []int, error)
	decode(ids []int) string
}

// A Tokenizer encodes and decodes text without special tokens. It is safe
// for concurrent use.
type Tokenizer struct {
	name string
	mu   sync.Mutex // neither library is documented as concurrency safe
	c    codec
}

// Open loads the tokenizer, or returns nil when none is configured.
func Open(c Config) (*Tokenizer, error) {
	if c.Encoding != "" {
		enc, err := tiktokenEncoding(c.Encoding)
		if err != nil {
			return nil, fmt.Errorf("tiktoken encoding %s: %w", c.Encoding, err)
		}
		return &Tokenizer{name: "tiktoken/" + c.Encoding, c: tiktokenCodec{enc}}, nil
	}
	if c.Path == "" {
		return nil, nil
	}
	name := filepath.Base(filepath.Dir(c.Path)) + "/" + filepath.Base(c.Path)
	data, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if !looksLikeJSON(data) {
		sp, err := openSentencePiece(c.Path, data)
		if err != nil {
			return nil, err
		}
		return &Tokenizer{name: name, c: sp}, nil
	}
	tk, err := pretrained.FromFile(c.Path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", c.Path, err)
	}
	h := hfCodec{tk: tk}
	if err := h.readByteFallback(data); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", c.Path, err)
	}
	return &Tokenizer{name: name, c: h}, nil
}

// looksLikeJSON tells a tokenizer.json (an object) from a SentencePiece
// model (a protobuf message, whose first byte is a field tag).
func looksLikeJSON(data []byte) bool {
	t := strings.TrimLeft(string(data[:min(len(data), 64)]), " \t\r\n\ufeff")
	return strings.HasPrefix(t, "{")
}

var useOfflineRanks sync.Once

// tiktokenEncoding loads an encoding from the ranks embedded in the binary
// (tiktoken-go-loader), never from the network.
func tiktokenEncoding(name string) (*tiktoken.Tiktoken, error) {
	useOfflineRanks.Do(func() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) })
	return tiktoken.GetEncoding(name)
}

// hfCodec is a Hugging Face tokenizer.json through sugarme/tokenizer.
type hfCodec struct {
	tk *tokenizer.Tokenizer
	// fallback holds the ids of the byte tokens <0x00>..<0xFF> when the
	// model has byte_fallback (SentencePiece-derived BPE: Llama, Mistral):
	// a character outside the vocabulary becomes its UTF-8 bytes. The
	// library gives the unknown token (unk) instead, so encode replaces it.
	fallback *[256]int
	unk      int
}

// readByteFallback reads model.byte_fallback and model.unk_token from the
// tokenizer.json's data and, when set, the ids of the byte tokens.
func (h *hfCodec) readByteFallback(data []byte) error {
	var doc struct {
		Model struct {
			ByteFallback bool   `json:"byte_fallback"`
			UnkToken     string `json:"unk_token"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	if !doc.Model.ByteFallback {
		return nil
	}
	unk, ok := h.tk.TokenToId(doc.Model.UnkToken)
	if !ok {
		return fmt.Errorf("model.byte_fallback: the unknown token %q is not in the vocabulary", doc.Model.UnkToken)
	}
	ids, err := h.byteTokenIDs()
	if err != nil {
		return err
	}
	h.fallback, h.unk = ids, unk
	return nil
}

// byteTokenIDs looks up the ids of the 256 byte tokens <0x00> to <0xFF>.
func (h *hfCodec) byteTokenIDs() (*[256]int, error) {
	var ids [256]int
	for b := range ids {
		id, ok := h.tk.TokenToId(fmt.Sprintf("<0x%02X>", b))
		if !ok {
			return nil, fmt.Errorf("model.byte_fallback: the byte token <0x%02X> is not in the vocabulary", b)
		}
		ids[b] = id
	}
	return &ids, nil
}

func (h hfCodec) encode(s string) ([]int, error) {
	ids, _, err := h.starts(s)
	return ids, err
}

func (h hfCodec) starts(s string) ([]int, []int, error) {
	enc, err := h.tk.EncodeSingle(s, false)
	if err != nil {
		return nil, nil, err
	}
	ids := enc.Ids
	offs := startOffsets(enc.Offsets)
	if h.fallback == nil || !slices.Contains(ids, h.unk) {
		return ids, offs, nil
	}
	outIDs, outOffs := h.expandUnknown(s, ids, enc.Offsets, offs)
	return outIDs, outOffs, nil
}

// startOffsets is each token's start byte in the text, -1 for a token
// without an offset.
func startOffsets(offsets [][]int) []int {
	offs := make([]int, len(offsets))
	for k, off := range offsets {
		offs[k] = -1
		if len(off) == 2 {
			offs[k] = off[0]
		}
	}
	return offs
}

// expandUnknown replaces each unknown token of s by the byte tokens of its
// text (byte fallback), with the start offsets to match.
func (h hfCodec) expandUnknown(s string, ids []int, offsets [][]int, offs []int) ([]int, []int) {
	outIDs, outOffs := make([]int, 0, len(ids)+8), make([]int, 0, len(ids)+8)
	for k, id := range ids {
		off := offsets[k]
		if id != h.unk || len(off) != 2 || off[0] < 0 || off[1] > len(s) || off[0] >= off[1] {
			outIDs, outOffs = append(outIDs, id), append(outOffs, offs[k])
			continue
		}
		for i := off[0]; i < off[1]; i++ {
			start := i
			if !utf8.RuneStart(s[i]) {
				start = -1 // inside a character: no token boundary to cut at
			}
			outIDs, outOffs = append(outIDs, h.fallback[s[i]]), append(outOffs, start)
		}
	}
	return outIDs, outOffs
}

func (h hfCodec) decode(ids []int) string { return h.tk.Decode(ids, false) }

type tiktokenCodec struct{ enc *tiktoken.Tiktoken }

// encode treats special-token text as plain text, as a prompt is.
func (t tiktokenCodec) encode(s string) ([]int, error) { return t.enc.EncodeOrdinary(s), nil }

// starts adds up the bytes of each token: byte-level BPE tokens are exact
// pieces of the text.
func (t tiktokenCodec) starts(s string) ([]int, []int, error) {
	ids := t.enc.EncodeOrdinary(s)
	offs := make([]int, len(ids))
	at := 0
	for k, id := range ids {
		offs[k] = at
		at += len(t.enc.Decode([]int{id}))
	}
	if at != len(s) {
		return nil, nil, fmt.Errorf("tokens cover %d of %d bytes", at, len(s))
	}
	return ids, offs, nil
}

func (t tiktokenCodec) decode(ids []int) string { return t.enc.Decode(ids) }

// Name names the tokenizer for reports: the file and its folder (a model's
// folder, usually), or tiktoken/<encoding>.
func (t *Tokenizer) Name() string { return t.name }

// Encode returns the token ids of s.
func (t *Tokenizer) Encode(s string) ([]int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c.encode(s)
}

// Count is the number of tokens of s.
func (t *Tokenizer) Count(s string) (int, error) {
	ids, err := t.Encode(s)
	return len(ids), err
}

// Decode returns the text of ids.
func (t *Tokenizer) Decode(ids []int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c.decode(ids)
}

// ErrUnreachable is returned by a Filler when no cut of its text gives the
// count asked for (a tokenizer that merges across the cut); the text
// returned is then the nearest one below.
var ErrUnreachable = errors.New("no cut of the filler gives exactly that many tokens")

// A Filler pads text with a filler to an exact number of tokens. It cuts
// the filler only where a word starts (a space), so the filler's tokens
// before the cut are the tokens that piece encodes to, and completes the
// count with a one-token word repeated; then only the head is encoded per
// prompt. A tokenizer for which that does not hold (checked when the
// filler is made) gets the slow way: encode, compare, move the cut.
type Filler struct {
	t      *Tokenizer
	text   string
	ids    []int // the filler's tokens
	cuts   []int // token indices where a word starts
	starts []int // byte offset in text of each cut
	unit   string
	fast   bool
}

// unitWord is the one-token word that completes a count.
const unitWord = " a"

// NewFiller encodes the filler once; it must start with a space.
func NewFiller(t *Tokenizer, filler string) (*Filler, error) {
	t.mu.Lock()
	ids, offs, err := t.c.starts(filler)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	f := &Filler{t: t, text: filler, ids: ids, unit: unitWord}
	for k, off := range offs {
		if off >= 0 && off < len(filler) && filler[off] == ' ' {
			f.cuts, f.starts = append(f.cuts, k), append(f.starts, off)
		}
	}
	f.fast, err = f.selfCheck()
	return f, err
}

// selfCheck tries the fast construction on a sample of counts and keeps it
// only when every one comes out exact.
func (f *Filler) selfCheck() (bool, error) {
	if u, err := f.t.Count(unitWord + unitWord + unitWord); err != nil || u != 3 || len(f.cuts) == 0 {
		return false, err
	}
	const head = "Check."
	for _, n := range []int{3, 4, 9, 17, 64, 65, 130, 257, 511, 1000} {
		text, want, err := f.fastFit(head, n)
		if err != nil {
			return false, err
		}
		if got, err := f.t.Count(text); err != nil || got != want {
			return false, err
		}
	}
	return true, nil
}

// fastFit is the fast construction: head, the filler up to the last word
// start within the count, the unit word for the rest.
func (f *Filler) fastFit(head string, n int) (string, int, error) {
	have, err := f.t.Count(head)
	if err != nil || have >= n {
		return head, have, err
	}
	k := n - have
	i := sort.SearchInts(f.cuts, k+1) - 1 // the last cut at or before k tokens
	if i < 0 {
		return head + strings.Repeat(f.unit, k), n, nil
	}
	var sb strings.Builder
	sb.Grow(len(head) + f.starts[i] + (k-f.cuts[i])*len(f.unit))
	sb.WriteString(head)
	sb.WriteString(f.text[:f.starts[i]])
	for range k - f.cuts[i] {
		sb.WriteString(f.unit)
	}
	return sb.String(), n, nil
}

// Fit returns head followed by filler so that the whole has exactly n
// tokens, and that count; a head already n tokens or longer is returned
// as it is.
func (f *Filler) Fit(head string, n int) (string, int, error) {
	if f.fast {
		return f.fastFit(head, n)
	}
	return f.slowFit(head, n)
}

// slowFit cuts the filler's tokens, encodes the result and moves the cut
// until it is exact (at most a few steps).
func (f *Filler) slowFit(head string, n int) (string, int, error) {
	have, err := f.t.Count(head)
	if err != nil || have >= n {
		return head, have, err
	}
	k := min(n-have, len(f.ids))
	best, bestN := head, have
	for range 6 {
		text := head + f.t.Decode(f.ids[:k])
		got, err := f.t.Count(text)
		if err != nil {
			return best, bestN, err
		}
		if got == n {
			return text, got, nil
		}
		if got < n && got > bestN {
			best, bestN = text, got
		}
		next := k + n - got
		if next < 0 || next > len(f.ids) || next == k {
			break
		}
		k = next
	}
	return best, bestN, ErrUnreachable
}
