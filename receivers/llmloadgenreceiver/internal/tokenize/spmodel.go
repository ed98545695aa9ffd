package tokenize

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	sentencepiece "github.com/eliben/go-sentencepiece"
	"google.golang.org/protobuf/encoding/protowire"
)

// spCodec is a SentencePiece model file (tokenizer.model, the serialized
// ModelProto) through eliben/go-sentencepiece: BPE models with an identity
// normalizer, such as Gemma's, Llama 2's and Mistral's. The library encodes
// the text as given; SentencePiece's add_dummy_prefix (a "▁" in front of the
// text, set in Llama 2's and Mistral's models, not in Gemma's) is applied
// here, and the other normalizer options a model may set are refused when
// the file is opened rather than ignored.
type spCodec struct {
	p           *sentencepiece.Processor
	dummyPrefix bool
}

const spaceMark = "▁"

// ModelProto, TrainerSpec and NormalizerSpec field numbers
// (sentencepiece_model.proto).
const (
	fieldTrainerSpec    = 2
	fieldNormalizerSpec = 3

	trainerModelType   = 3  // enum, default UNIGRAM (1); BPE is 2
	trainerWSAsSuffix  = 24 // bool, default false
	normName           = 1
	normCharsMap       = 2
	normAddDummyPrefix = 3 // bool, default true
	normRemoveExtraWS  = 4 // bool, default true
	normEscapeWS       = 5 // bool, default true

	modelTypeBPE = 2
)

var spModelTypes = map[uint64]string{1: "unigram", 2: "bpe", 3: "word", 4: "char"}

// spOptions are the parts of a model's spec that decide whether and how it
// can be encoded here.
type spOptions struct {
	modelType        uint64
	wsAsSuffix       bool
	normalizer       string
	charsMap         int
	dummyPrefix      bool
	removeExtraSpace bool
	escapeSpaces     bool
}

// openSentencePiece reads a SentencePiece model from data (the file at
// path), checks that its options are ones this encoder reproduces, and hands
// the library a copy whose normalizer options say what the library does
// (dummy prefix and whitespace removal off: the dummy prefix is added here).
func openSentencePiece(path string, data []byte) (spCodec, error) {
	opts, rewritten, err := readSPOptions(data)
	if err != nil {
		return spCodec{}, fmt.Errorf("tokenizer %s: neither a tokenizer.json nor a SentencePiece model: %w", path, err)
	}
	if err := opts.supported(); err != nil {
		return spCodec{}, fmt.Errorf("tokenizer %s: SentencePiece model: %w; use the model's tokenizer.json instead", path, err)
	}
	p, err := sentencepiece.NewProcessor(strings.NewReader(string(rewritten)))
	if err != nil {
		return spCodec{}, fmt.Errorf("tokenizer %s: SentencePiece model: %w", path, err)
	}
	sp := spCodec{p: p, dummyPrefix: opts.dummyPrefix}
	if _, err := sp.tokens(spSelfTest); err != nil {
		return spCodec{}, fmt.Errorf("tokenizer %s: SentencePiece model: %w", path, err)
	}
	return sp, nil
}

// spSelfTest is encoded when a model is opened, so that a model the library
// fails on is refused then.
const spSelfTest = "Hello, world. The quick brown fox: 12,345 ms; naïve café, 東京, 🙂\tand\n  spaces"

func (o spOptions) supported() error {
	switch {
	case o.modelType != modelTypeBPE:
		name := spModelTypes[o.modelType]
		if name == "" {
			name = fmt.Sprintf("type %d", o.modelType)
		}
		return fmt.Errorf("trainer_spec.model_type is %s; only BPE models are supported", name)
	case o.wsAsSuffix:
		return errors.New("trainer_spec.treat_whitespace_as_suffix is not supported")
	case o.charsMap > 0:
		return fmt.Errorf("normalizer_spec %q with a precompiled character map is not supported (only identity normalizers)", o.normalizer)
	case o.removeExtraSpace:
		return errors.New("normalizer_spec.remove_extra_whitespaces is not supported")
	case !o.escapeSpaces:
		return errors.New("normalizer_spec.escape_whitespaces off is not supported")
	}
	return nil
}

// readSPOptions walks the ModelProto's top-level fields, reads the trainer
// and normalizer options, and returns the model with its normalizer spec
// rewritten: add_dummy_prefix and remove_extra_whitespaces set to false
// explicitly, every other field as it was.
func readSPOptions(data []byte) (spOptions, []byte, error) {
	opts := spOptions{modelType: 1, dummyPrefix: true, removeExtraSpace: true, escapeSpaces: true}
	out := make([]byte, 0, len(data)+16)
	var norm []byte
	pieces := 0
	for b := data; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return opts, nil, fmt.Errorf("byte %d: %w", len(data)-len(b), protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return opts, nil, fmt.Errorf("field %d at byte %d: %w", num, len(data)-len(b), protowire.ParseError(m))
		}
		field := b[:n+m]
		b = b[n+m:]
		if typ != protowire.BytesType {
			out = append(out, field...)
			continue
		}
		body, _ := protowire.ConsumeBytes(field[n:])
		switch num {
		case 1:
			pieces++
		case fieldTrainerSpec:
			if err := opts.readTrainer(body); err != nil {
				return opts, nil, fmt.Errorf("trainer_spec: %w", err)
			}
		case fieldNormalizerSpec:
			if err := opts.readNormalizer(body); err != nil {
				return opts, nil, fmt.Errorf("normalizer_spec: %w", err)
			}
			norm = body
			continue
		}
		out = append(out, field...)
	}
	if pieces == 0 {
		return opts, nil, errors.New("no pieces")
	}
	out = protowire.AppendTag(out, fieldNormalizerSpec, protowire.BytesType)
	return opts, protowire.AppendBytes(out, libraryNormalizer(norm)), nil
}

// libraryNormalizer is the normalizer spec without its dummy-prefix and
// whitespace-removal options, followed by both set to false.
func libraryNormalizer(norm []byte) []byte {
	out := make([]byte, 0, len(norm)+4)
	for b := norm; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num != normAddDummyPrefix && num != normRemoveExtraWS {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	for _, num := range []protowire.Number{normAddDummyPrefix, normRemoveExtraWS} {
		out = protowire.AppendTag(out, num, protowire.VarintType)
		out = protowire.AppendVarint(out, 0)
	}
	return out
}

// eachField calls f with each field of a message; the value is the varint
// for varint fields and the body for length-delimited ones.
func eachField(msg []byte, f func(num protowire.Number, v uint64, body []byte)) error {
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b[n:])
			if m < 0 {
				return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
			}
			f(num, v, nil)
			n += m
		case protowire.BytesType:
			body, m := protowire.ConsumeBytes(b[n:])
			if m < 0 {
				return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
			}
			f(num, 0, body)
			n += m
		default:
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
			}
			n += m
		}
		b = b[n:]
	}
	return nil
}

func (o *spOptions) readTrainer(msg []byte) error {
	return eachField(msg, func(num protowire.Number, v uint64, _ []byte) {
		switch num {
		case trainerModelType:
			o.modelType = v
		case trainerWSAsSuffix:
			o.wsAsSuffix = v != 0
		}
	})
}

func (o *spOptions) readNormalizer(msg []byte) error {
	return eachField(msg, func(num protowire.Number, v uint64, body []byte) {
		switch num {
		case normName:
			o.normalizer = string(body)
		case normCharsMap:
			o.charsMap = len(body)
		case normAddDummyPrefix:
			o.dummyPrefix = v != 0
		case normRemoveExtraWS:
			o.removeExtraSpace = v != 0
		case normEscapeWS:
			o.escapeSpaces = v != 0
		}
	})
}

func (s spCodec) input(text string) string {
	if s.dummyPrefix && text != "" {
		return " " + text
	}
	return text
}

// tokens encodes text after the dummy prefix. The library can index past a
// buffer sized by the model's longest piece on some models; that is an
// error here, not a crash.
func (s spCodec) tokens(text string) (toks []sentencepiece.Token, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the SentencePiece encoder failed on a %d-byte text: %v", len(text), r)
		}
	}()
	return s.p.Encode(s.input(text)), nil
}

func (s spCodec) encode(text string) ([]int, error) {
	toks, err := s.tokens(text)
	if err != nil {
		return nil, err
	}
	ids := make([]int, len(toks))
	for k, t := range toks {
		ids[k] = t.ID
	}
	return ids, nil
}

// starts walks the pieces over the text: a byte token is one byte of it, a
// piece's "▁" is a space (or the text's own "▁"), every other character is
// itself. The dummy prefix's space is not in the text.
func (s spCodec) starts(text string) ([]int, []int, error) {
	in := s.input(text)
	toks, err := s.tokens(text)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]int, len(toks))
	offs := make([]int, len(toks))
	shift := len(in) - len(text)
	at := 0
	for k, t := range toks {
		ids[k] = t.ID
		offs[k] = max(at-shift, 0)
		n, err := pieceBytes(t.Text, in[at:])
		if err != nil {
			return nil, nil, fmt.Errorf("token %d (%q) at byte %d: %w", k, t.Text, offs[k], err)
		}
		at += n
	}
	if at != len(in) {
		return nil, nil, fmt.Errorf("tokens cover %d of %d bytes", at-shift, len(text))
	}
	return ids, offs, nil
}

// pieceBytes is how many bytes at the start of rest the piece stands for.
func pieceBytes(piece, rest string) (int, error) {
	if len(piece) == 6 && strings.HasPrefix(piece, "<0x") && piece[5] == '>' {
		if rest == "" {
			return 0, errors.New("byte token past the end")
		}
		return 1, nil
	}
	n := 0
	for _, r := range piece {
		switch {
		case r == '▁' && strings.HasPrefix(rest[n:], " "):
			n++
		case strings.HasPrefix(rest[n:], string(r)):
			n += utf8.RuneLen(r)
		default:
			return 0, errors.New("piece does not match the text")
		}
	}
	return n, nil
}

// decode drops the dummy prefix's space from the first piece, as
// SentencePiece's decoder does.
func (s spCodec) decode(ids []int) string {
	out := s.p.Decode(ids)
	if s.dummyPrefix {
		out = strings.TrimPrefix(out, " ")
	}
	return out
}
