package tokenize

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

var gemmaModel = filepath.Join("testdata", "gemma2", "tokenizer.model")

type refLine struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func readReference(t *testing.T, path string) []refLine {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out []refLine
	for sc.Scan() {
		var ref refLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ref))
		out = append(out, ref)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestSentencePieceModelFile checks Gemma 2's tokenizer.model (a
// SentencePiece BPE model, 256,000 pieces, byte fallback) against the ids
// transformers.js' tokenizers gave for the same real lines from Gemma 2's
// tokenizer.json (testdata/gemma2/SOURCES.md): every line identical, runs of
// one character included, and decoding gives each line back.
func TestSentencePieceModelFile(t *testing.T) {
	tk, err := Open(Config{Path: gemmaModel})
	require.NoError(t, err)
	assert.Equal(t, "gemma2/tokenizer.model", tk.Name())
	refs := readReference(t, filepath.Join("testdata", "gemma2", "reference.jsonl"))
	require.Greater(t, len(refs), 300)
	runs := 0
	for _, ref := range refs {
		ids, err := tk.Encode(ref.Text)
		require.NoError(t, err)
		assert.Equal(t, ref.IDs, ids, "%q", ref.Text)
		assert.Equal(t, ref.Text, tk.Decode(ids))
		if repeatsARune(ref.Text, 8) {
			runs++
		}
	}
	assert.Positive(t, runs, "the reference holds runs of one character, where tokenizer.json libraries differ")
}

// The byte offsets starts gives cut the text into exactly the tokens'
// pieces.
func TestSentencePieceModelStarts(t *testing.T) {
	tk, err := Open(Config{Path: gemmaModel})
	require.NoError(t, err)
	for _, ref := range readReference(t, filepath.Join("testdata", "gemma2", "reference.jsonl"))[:80] {
		ids, offs, err := tk.c.starts(ref.Text)
		require.NoError(t, err, "%q", ref.Text)
		require.Equal(t, ref.IDs, ids)
		require.True(t, slices.IsSorted(offs))
		for k := range offs {
			end := len(ref.Text)
			if k+1 < len(offs) {
				end = offs[k+1]
			}
			if end > offs[k] && strings.ToValidUTF8(ref.Text[offs[k]:end], "") == ref.Text[offs[k]:end] {
				got := tk.Decode(ids[k : k+1])
				if !strings.HasPrefix(got, "<") { // whole-character pieces decode to their bytes
					assert.Equal(t, ref.Text[offs[k]:end], got, "%q token %d", ref.Text, k)
				}
			}
		}
	}
}

// withNormalizer returns the model with its normalizer spec's field num
// set to v (a bool) or to the bytes body.
func withNormalizer(t *testing.T, model []byte, num protowire.Number, v uint64, body []byte) []byte {
	_, rewritten, err := readSPOptions(model)
	require.NoError(t, err)
	// readSPOptions puts the normalizer spec last: append to it.
	out, norm := splitLastField(t, rewritten)
	if body != nil {
		norm = protowire.AppendTag(norm, num, protowire.BytesType)
		norm = protowire.AppendBytes(norm, body)
	} else {
		norm = protowire.AppendTag(norm, num, protowire.VarintType)
		norm = protowire.AppendVarint(norm, v)
	}
	out = protowire.AppendTag(out, fieldNormalizerSpec, protowire.BytesType)
	return protowire.AppendBytes(out, norm)
}

func splitLastField(t *testing.T, msg []byte) (head, body []byte) {
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		require.Positive(t, m)
		if len(b) == n+m {
			require.Equal(t, protowire.Number(fieldNormalizerSpec), num)
			body, _ = protowire.ConsumeBytes(b[n:])
			return msg[:len(msg)-len(b)], slices.Clone(body)
		}
		b = b[n+m:]
	}
	t.Fatal("empty model")
	return nil, nil
}

func writeModel(t *testing.T, data []byte) string {
	p := filepath.Join(t.TempDir(), "tokenizer.model")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// A model with add_dummy_prefix (Llama 2's and Mistral's are) encodes a
// text as SentencePiece does: as if a space stood in front of it, which
// decoding takes away again.
func TestSentencePieceModelDummyPrefix(t *testing.T) {
	data, err := os.ReadFile(gemmaModel)
	require.NoError(t, err)
	plain, err := Open(Config{Path: gemmaModel})
	require.NoError(t, err)
	prefixed, err := Open(Config{Path: writeModel(t, withNormalizer(t, data, normAddDummyPrefix, 1, nil))})
	require.NoError(t, err)
	for _, ref := range readReference(t, filepath.Join("testdata", "gemma2", "reference.jsonl"))[:60] {
		want, err := plain.Encode(" " + ref.Text)
		require.NoError(t, err)
		got, err := prefixed.Encode(ref.Text)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%q", ref.Text)
		assert.Equal(t, ref.Text, prefixed.Decode(got))
		_, offs, err := prefixed.c.starts(ref.Text)
		require.NoError(t, err, "%q", ref.Text)
		assert.Equal(t, 0, offs[0])
	}
	ids, err := prefixed.Encode("")
	require.NoError(t, err)
	assert.Empty(t, ids, "no dummy prefix on an empty text")
}

// Models whose options this encoder does not reproduce are refused with the
// option named, never encoded differently from their own library.
func TestSentencePieceModelRefused(t *testing.T) {
	data, err := os.ReadFile(gemmaModel)
	require.NoError(t, err)
	unigram := protowire.AppendTag(slices.Clone(data), fieldTrainerSpec, protowire.BytesType)
	unigram = protowire.AppendBytes(unigram, protowire.AppendVarint(protowire.AppendTag(nil, trainerModelType, protowire.VarintType), 1))
	cases := map[string][]byte{
		"trainer_spec.model_type is unigram":                   unigram,
		"normalizer_spec.remove_extra_whitespaces":             withNormalizer(t, data, normRemoveExtraWS, 1, nil),
		"normalizer_spec.escape_whitespaces off":               withNormalizer(t, data, normEscapeWS, 0, nil),
		"precompiled character map":                            withNormalizer(t, data, normCharsMap, 0, []byte{1, 2, 3}),
		"neither a tokenizer.json nor a SentencePiece model":   data[:1000],
		"neither a tokenizer.json nor a SentencePiece model: ": []byte("plain text, not a model\n"),
	}
	for want, model := range cases {
		p := writeModel(t, model)
		_, err := Open(Config{Path: p})
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), p, "the error names the file")
	}
}

// Prompts come out at exact token counts under a SentencePiece model file.
func TestFitExactUnderSentencePieceModel(t *testing.T) {
	tk, err := Open(Config{Path: gemmaModel})
	require.NoError(t, err)
	f := checkFitExact(t, tk, 13)
	assert.True(t, f.fast, "the filler's word starts are token starts under Gemma's model")
}

// FuzzSentencePieceModel: any bytes give a tokenizer or an error, never a
// panic.
func FuzzSentencePieceModel(f *testing.F) {
	data, err := os.ReadFile(gemmaModel)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:4096])
	f.Add([]byte{0x0a, 0x03, 0x0a, 0x01, 'a'})
	f.Add([]byte{0x12, 0x02, 0x18, 0x02, 0x0a, 0x00})
	f.Add(tinyModel("<unk>", "ab", "a", "b"))
	f.Fuzz(func(t *testing.T, model []byte) {
		if sp, err := openSentencePiece("fuzz.model", model); err == nil {
			_, _ = sp.encode("hello world")
			_, _, _ = sp.starts("a b ab")
		}
	})
}

// tinyModel is a BPE model of the given pieces (the first is <unk>) with an
// identity normalizer and no dummy prefix.
func tinyModel(pieces ...string) []byte {
	var m []byte
	for k, p := range pieces {
		var b []byte
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, p)
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, map[bool]uint64{true: 2, false: 1}[k == 0])
		m = protowire.AppendTag(m, 1, protowire.BytesType)
		m = protowire.AppendBytes(m, b)
	}
	m = protowire.AppendTag(m, fieldTrainerSpec, protowire.BytesType)
	m = protowire.AppendBytes(m, []byte{trainerModelType << 3, modelTypeBPE})
	m = protowire.AppendTag(m, fieldNormalizerSpec, protowire.BytesType)
	return protowire.AppendBytes(m, []byte{normAddDummyPrefix << 3, 0, normRemoveExtraWS << 3, 0})
}

// A model the library cannot encode with (its merge buffer is sized by the
// longest normal piece, shorter here than two symbols it tries to join)
// gives an error when it is opened, not a crash in the middle of a run.
func TestSentencePieceModelLibraryFailure(t *testing.T) {
	_, err := openSentencePiece("tiny.model", tinyModel("<unk>", "a"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tiny.model")
	sp, err := openSentencePiece("ok.model", tinyModel("<unk>", "a", "b", "ab", "▁", "▁the-longest-piece-of-this-model"))
	require.NoError(t, err)
	ids, err := sp.encode("ab a")
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4, 1}, ids)
}
