package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"encoding/json"
	"strconv"
	"strings"
)

// bytesPerToken is the prompt-size estimate the builder sizes prompts with
// (English text averages about four bytes per token).
const bytesPerToken = 4

// messageOverhead is the chat framing estimate per message, in tokens.
const messageOverhead = 4

const fillerText = " The quarterly report lists revenue by region, the staffing plan, open risks," +
	" supplier delays, the migration of the billing system, customer churn by segment," +
	" the hiring pipeline, on-call incidents, and the roadmap for the next two releases."

// promptBuilder renders request bodies sized to a sampled prompt length.
type promptBuilder struct {
	cfg    *LiveConfig
	base   []liveMessage // system and few-shot messages
	fixed  int           // estimated tokens of base plus the user message framing
	filler string
	maxIn  int // largest prompt that leaves room for max_tokens
	runID  string
}

type liveMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func newPromptBuilder(cfg *LiveConfig, runID string) *promptBuilder {
	b := &promptBuilder{cfg: cfg, runID: runID}
	if cfg.Prompt.System != "" {
		b.base = append(b.base, liveMessage{Role: "system", Content: cfg.Prompt.System})
	}
	for _, m := range cfg.Prompt.FewShot {
		b.base = append(b.base, liveMessage(m))
	}
	for _, m := range b.base {
		b.fixed += messageOverhead + (len(m.Content)+bytesPerToken-1)/bytesPerToken
	}
	b.fixed += messageOverhead + (len(cfg.Prompt.User)+bytesPerToken-1)/bytesPerToken
	b.maxIn = cfg.Prompt.ContextWindow - cfg.MaxTokens
	n := (b.maxIn*bytesPerToken)/len(fillerText) + 1
	b.filler = strings.Repeat(fillerText, n)
	return b
}

// build renders the body of request seq with a prompt of about want tokens
// and returns it with the prompt's estimated length.
func (b *promptBuilder) build(seq int64, want int) ([]byte, int, error) {
	want = min(max(want, 1), b.maxIn)
	var user strings.Builder
	if b.cfg.Prompt.UniquePrefix {
		user.WriteString("[run ")
		user.WriteString(b.runID)
		user.WriteString(" request ")
		user.WriteString(strconv.FormatInt(seq, 10))
		user.WriteString("] ")
	}
	user.WriteString(b.cfg.Prompt.User)
	have := b.fixed + (user.Len()-len(b.cfg.Prompt.User)+bytesPerToken-1)/bytesPerToken
	if pad := (want - have) * bytesPerToken; pad > 0 {
		user.WriteString(b.filler[:min(pad, len(b.filler))])
	}
	content := user.String()
	tokens := b.fixed - (len(b.cfg.Prompt.User)+bytesPerToken-1)/bytesPerToken + (len(content)+bytesPerToken-1)/bytesPerToken

	body := make(map[string]any, 8+len(b.cfg.ExtraBody))
	for k, v := range b.cfg.ExtraBody {
		body[k] = v
	}
	body["model"] = b.cfg.Model
	if b.cfg.Operation == liveOpText {
		var sb strings.Builder
		for _, m := range b.base {
			sb.WriteString(m.Content)
			sb.WriteString("\n\n")
		}
		sb.WriteString(content)
		body["prompt"] = sb.String()
	} else {
		msgs := make([]liveMessage, 0, len(b.base)+1)
		msgs = append(msgs, b.base...)
		body["messages"] = append(msgs, liveMessage{Role: "user", Content: content})
	}
	body["max_tokens"] = b.cfg.MaxTokens
	body["stream"] = b.cfg.Stream
	if b.cfg.Stream && b.cfg.IncludeUsage {
		body["stream_options"] = map[string]bool{"include_usage": true}
	}
	if b.cfg.IgnoreEOS {
		body["ignore_eos"] = true
	}
	out, err := json.Marshal(body)
	return out, tokens, err
}
