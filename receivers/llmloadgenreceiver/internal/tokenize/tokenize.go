// Package tokenize counts and cuts text in a model's own tokens, from the
// model's Hugging Face tokenizer.json, so that live prompts can be built to
// exact token counts instead of the four-bytes-a-token estimate.
package tokenize // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/tokenize"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// Config names the tokenizer.
type Config struct {
	// Path is a Hugging Face tokenizer.json (BPE, WordPiece or Unigram
	// models); empty: no tokenizer, token counts are estimates.
	Path string `mapstructure:"path"`
}

// Validate checks that the file can be read, naming the field under prefix.
func (c Config) Validate(prefix string) error {
	if c.Path == "" {
		return nil
	}
	if _, err := os.Stat(c.Path); err != nil {
		return fmt.Errorf("%s.path: %w", prefix, err)
	}
	return nil
}

// A Tokenizer encodes and decodes text without special tokens. It is safe
// for concurrent use.
type Tokenizer struct {
	name string
	mu   sync.Mutex // the library's tokenizer is not documented as concurrency safe
	tk   *tokenizer.Tokenizer
}

// Open loads the tokenizer, or returns nil when none is configured.
func Open(c Config) (*Tokenizer, error) {
	if c.Path == "" {
		return nil, nil
	}
	tk, err := pretrained.FromFile(c.Path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", c.Path, err)
	}
	return &Tokenizer{name: filepath.Base(filepath.Dir(c.Path)) + "/" + filepath.Base(c.Path), tk: tk}, nil
}

// Name names the tokenizer for reports: the file and its folder (a model's
// folder, usually).
func (t *Tokenizer) Name() string { return t.name }

// Encode returns the token ids of s.
func (t *Tokenizer) Encode(s string) ([]int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	enc, err := t.tk.EncodeSingle(s, false)
	if err != nil {
		return nil, err
	}
	return enc.Ids, nil
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
	return t.tk.Decode(ids, false)
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
	enc, err := t.tk.EncodeSingle(filler, false)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	f := &Filler{t: t, text: filler, ids: enc.Ids, unit: unitWord}
	for k, off := range enc.Offsets {
		if len(off) == 2 && off[0] < len(filler) && filler[off[0]] == ' ' {
			f.cuts, f.starts = append(f.cuts, k), append(f.starts, off[0])
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
