package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/tokenize"
)

// The builder sizes prompts with dataset's estimate: dataset.Tokens per
// text, plus dataset.MessageOverhead per message.
const (
	bytesPerToken   = dataset.BytesPerToken
	messageOverhead = dataset.MessageOverhead
)

const fillerText = " The quarterly report lists revenue by region, the staffing plan, open risks," +
	" supplier delays, the migration of the billing system, customer churn by segment," +
	" the hiring pipeline, on-call incidents, and the roadmap for the next two releases."

// promptBuilder renders request bodies sized to a sampled prompt length.
type promptBuilder struct {
	cfg    *config.LiveConfig
	base   []liveMessage // system and few-shot messages
	fixed  int           // estimated tokens of base plus the user message framing
	filler string
	maxIn  int // largest prompt that leaves room for max_tokens
	runID  string

	// The body rendered once around the user content (template); nil
	// when every body is marshalled whole.
	head, tail []byte
	escUser    []byte // the configured user text, escaped for JSON

	// With live.prompt.tokenizer: the tokenizer, the filler in its
	// tokens, and the exact tokens of the base messages' contents.
	tok      *tokenize.Tokenizer
	fill     *tokenize.Filler
	baseToks int
}

// useTokenizer loads live.prompt.tokenizer, when set: prompts are then
// built to exact token counts of their contents.
func (b *promptBuilder) useTokenizer() error {
	tok, err := tokenize.Open(b.cfg.Prompt.Tokenizer)
	if err != nil || tok == nil {
		return err
	}
	fill, err := tokenize.NewFiller(tok, b.filler)
	if err != nil {
		return err
	}
	return b.setTokenizer(tok, fill)
}

// shareTokenizer gives b the tokenizer and filler of from (a builder of the
// same configuration).
func (b *promptBuilder) shareTokenizer(from *promptBuilder) error {
	if from.tok == nil {
		return nil
	}
	return b.setTokenizer(from.tok, from.fill)
}

// setTokenizer makes b build exact prompts with tok and fill, counting its
// own base messages.
func (b *promptBuilder) setTokenizer(tok *tokenize.Tokenizer, fill *tokenize.Filler) error {
	n := 0
	for _, m := range b.base {
		c, err := tok.Count(m.Content)
		if err != nil {
			return err
		}
		n += c
	}
	b.tok, b.fill, b.baseToks = tok, fill, n
	return nil
}

// tokenizerName names the tokenizer for the report; "" for the estimate.
func (b *promptBuilder) tokenizerName() string {
	if b.tok == nil {
		return ""
	}
	return b.tok.Name()
}

type liveMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func newPromptBuilder(cfg *config.LiveConfig, runID string) *promptBuilder {
	return newPromptBuilderWith(cfg, runID, cfg.Prompt.System)
}

// newPromptBuilderWith builds prompts with system as the system message.
func newPromptBuilderWith(cfg *config.LiveConfig, runID, system string) *promptBuilder {
	b := &promptBuilder{cfg: cfg, runID: runID}
	if system != "" {
		b.base = append(b.base, liveMessage{Role: "system", Content: system})
	}
	for _, m := range cfg.Prompt.FewShot {
		b.base = append(b.base, liveMessage(m))
	}
	for _, m := range b.base {
		b.fixed += messageOverhead + dataset.Tokens(len(m.Content))
	}
	b.fixed += messageOverhead + dataset.Tokens(len(cfg.Prompt.User))
	b.maxIn = cfg.Prompt.ContextWindow - cfg.MaxTokens
	n := (b.maxIn*bytesPerToken)/len(fillerText) + 1
	b.filler = strings.Repeat(fillerText, n)
	b.template()
	return b
}

// build renders the body of request seq with a prompt of about want tokens
// and returns it with the prompt's estimated length.
func (b *promptBuilder) build(seq int64, want int) ([]byte, int, error) {
	want = min(max(want, 1), b.maxIn)
	if b.tok != nil {
		return b.buildExact(seq, want)
	}
	var buf [96]byte
	prefix := buf[:0]
	if b.cfg.Prompt.UniquePrefix {
		prefix = append(prefix, "[run "...)
		prefix = append(prefix, b.runID...)
		prefix = append(prefix, " request "...)
		prefix = strconv.AppendInt(prefix, seq, 10)
		prefix = append(prefix, "] "...)
	}
	userLen := len(b.cfg.Prompt.User)
	have := b.fixed + dataset.Tokens(len(prefix))
	pad := 0
	if p := (want - have) * bytesPerToken; p > 0 {
		pad = min(p, len(b.filler))
	}
	contentLen := len(prefix) + userLen + pad
	tokens := b.fixed - dataset.Tokens(userLen) + dataset.Tokens(contentLen)
	if b.head == nil || !jsonSafe(prefix) {
		out, err := b.marshal(string(prefix) + b.cfg.Prompt.User + b.filler[:pad])
		return out, tokens, err
	}
	return b.splice(prefix, pad), tokens, nil
}

// splice renders a body from the parts rendered once around the user
// content: prefix and pad bytes of filler need no escaping, the user text
// was escaped once.
func (b *promptBuilder) splice(prefix []byte, pad int) []byte {
	out := make([]byte, 0, len(b.head)+len(prefix)+len(b.escUser)+pad+len(b.tail))
	out = append(out, b.head...)
	out = append(out, prefix...)
	out = append(out, b.escUser...)
	out = append(out, b.filler[:pad]...)
	out = append(out, b.tail...)
	return out
}

// buildExact renders a body whose message contents are exactly want
// tokens under the tokenizer (the chat template's own tokens, which the
// server adds, not counted), or as close below as the tokenizer allows.
func (b *promptBuilder) buildExact(seq int64, want int) ([]byte, int, error) {
	text, n, err := b.fitUser(seq, want-b.baseToks)
	if err != nil && !errors.Is(err, tokenize.ErrUnreachable) {
		return nil, 0, err
	}
	body, err := b.marshal(text)
	return body, b.baseToks + n, err
}

// fitUser is the user message, tag and configured text padded with filler
// to exactly want tokens.
func (b *promptBuilder) fitUser(seq int64, want int) (string, int, error) {
	return b.fill.Fit(b.userHead(seq), max(want, 1))
}

// userHead is the start of every user message: the run and request tag
// (live.prompt.unique_prefix) and the configured text.
func (b *promptBuilder) userHead(seq int64) string {
	if b.cfg.Prompt.UniquePrefix {
		return "[run " + b.runID + " request " + strconv.FormatInt(seq, 10) + "] " + b.cfg.Prompt.User
	}
	return b.cfg.Prompt.User
}

// userContent is a user message of about want tokens: the configured
// user text padded with filler (after the run and request tag when
// live.prompt.unique_prefix is set).
func (b *promptBuilder) userContent(seq int64, want int) string {
	head := b.userHead(seq)
	if b.tok != nil {
		text, _, _ := b.fitUser(seq, min(want, b.maxIn)) // on error the nearest text below
		return text
	}
	pad := 0
	if p := (min(max(want, 1), b.maxIn) - dataset.Tokens(len(head))) * bytesPerToken; p > 0 {
		pad = min(p, len(b.filler))
	}
	return head + b.filler[:pad]
}

// messageTokens counts a message: its content's exact tokens under the
// tokenizer, else the estimate with the message's framing.
func (b *promptBuilder) messageTokens(content string) int {
	if b.tok != nil {
		if n, err := b.tok.Count(content); err == nil {
			return n
		}
	}
	return messageOverhead + dataset.Tokens(len(content))
}

// baseTokens is the length of the system and few-shot messages: their
// contents' exact tokens under the tokenizer, else the estimate with the
// messages' framing.
func (b *promptBuilder) baseTokens() int {
	if b.tok != nil {
		return b.baseToks
	}
	n := 0
	for _, m := range b.base {
		n += messageOverhead + dataset.Tokens(len(m.Content))
	}
	return n
}

// promptSentinel stands for the user content in the body template.
const promptSentinel = "\x00llm_loadgen prompt\x00"

// template renders the body once around a placeholder for the user
// content, so that build only concatenates. It leaves head nil when the
// body cannot be split that way.
func (b *promptBuilder) template() {
	body, err := b.marshal(promptSentinel)
	if err != nil {
		return
	}
	mark, _ := json.Marshal(promptSentinel)
	mark = mark[1 : len(mark)-1]
	i := bytes.Index(body, mark)
	if i < 0 || bytes.Count(body, mark) != 1 || !jsonSafe([]byte(b.filler)) {
		return
	}
	user, err := json.Marshal(b.cfg.Prompt.User)
	if err != nil {
		return
	}
	b.head, b.tail = body[:i:i], body[i+len(mark):]
	b.escUser = user[1 : len(user)-1]
}

// jsonSafe reports whether s is the same inside a JSON string as
// encoding/json writes it: printable ASCII without quote, backslash or the
// characters it escapes for HTML.
func jsonSafe(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// marshal renders the request body with the given user content.
func (b *promptBuilder) marshal(content string) ([]byte, error) {
	msgs := make([]liveMessage, 0, len(b.base)+1)
	msgs = append(msgs, b.base...)
	return b.marshalMessages(append(msgs, liveMessage{Role: "user", Content: content}), b.cfg.MaxTokens)
}

// buildMessages renders the body of a dataset record's messages.
func (b *promptBuilder) buildMessages(msgs []dataset.Message, maxTokens int) ([]byte, error) {
	lm := make([]liveMessage, len(msgs))
	for i, m := range msgs {
		lm[i] = liveMessage(m)
	}
	return b.marshalMessages(lm, maxTokens)
}

// marshalMessages renders a request body: the messages (chat), or their
// contents joined into one prompt (text_completion).
func (b *promptBuilder) marshalMessages(msgs []liveMessage, maxTokens int) ([]byte, error) {
	return b.marshalBody(msgs, maxTokens, "")
}

// marshalBody is marshalMessages with the "user" field set when user is
// not empty (a session's id).
func (b *promptBuilder) marshalBody(msgs []liveMessage, maxTokens int, user string) ([]byte, error) {
	body := make(map[string]any, 8+len(b.cfg.ExtraBody))
	for k, v := range b.cfg.ExtraBody {
		body[k] = v
	}
	body["model"] = b.cfg.Model
	if b.cfg.Operation == config.LiveOpText {
		parts := make([]string, len(msgs))
		for i, m := range msgs {
			parts[i] = m.Content
		}
		body["prompt"] = strings.Join(parts, "\n\n")
	} else {
		body["messages"] = msgs
	}
	body["max_tokens"] = maxTokens
	body["stream"] = b.cfg.Stream
	if b.cfg.Stream && b.cfg.IncludeUsage {
		opts := map[string]bool{"include_usage": true}
		if b.cfg.ContinuousUsage {
			opts["continuous_usage_stats"] = true
		}
		body["stream_options"] = opts
	}
	if b.cfg.IgnoreEOS {
		body["ignore_eos"] = true
	}
	if user != "" {
		body["user"] = user
	}
	return json.Marshal(body)
}

// sharedPrefixes is the shared-prefix workload: one prompt builder per
// group, whose system message is the group's text.
type sharedPrefixes struct {
	groups []*promptBuilder
	tokens int // estimated tokens of a group's system message
}

func newSharedPrefixes(cfg *config.LiveConfig, runID string) *sharedPrefixes {
	sp := cfg.Prompt.SharedPrefix
	if sp.Groups == 0 {
		return nil
	}
	out := &sharedPrefixes{groups: make([]*promptBuilder, sp.Groups), tokens: sp.Tokens}
	for g := range out.groups {
		// The message is tokens long under the estimate: its framing plus
		// BytesPerToken bytes per remaining token.
		text := dataset.PromptFor(dataset.TraceRow{InputTokens: sp.Tokens, HashIDs: []int64{int64(g)}}, sp.Tokens)
		out.groups[g] = newPromptBuilderWith(cfg, runID, text)
	}
	return out
}
