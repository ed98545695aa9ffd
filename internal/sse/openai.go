package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Done is the data of the terminating event of an OpenAI stream.
var Done = []byte("[DONE]")

// IsDone reports whether data is the stream terminator.
func IsDone(data []byte) bool { return bytes.Equal(bytes.TrimSpace(data), Done) }

// ErrMalformedChunk is returned for event data that is not a chunk object.
var ErrMalformedChunk = errors.New("sse: malformed chunk")

// Chunk is one chat.completion.chunk or text_completion streaming object.
// An in-stream error event ({"error": {...}}) decodes into Error.
type Chunk struct {
	ID      string        `json:"id,omitempty"`
	Object  string        `json:"object,omitempty"`
	Created int64         `json:"created,omitempty"`
	Model   string        `json:"model,omitempty"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage"`
	Error   *APIError     `json:"error,omitempty"`
	// XGroq is Groq's member; its usage stands in for a missing "usage".
	XGroq *struct {
		Usage *Usage `json:"usage"`
	} `json:"x_groq,omitempty"`
}

// usage is the chunk's usage, or Groq's when it has none.
func (c *Chunk) usage() *Usage {
	if c.Usage == nil && c.XGroq != nil {
		return c.XGroq.Usage
	}
	return c.Usage
}

// ChunkChoice is one entry of Chunk.Choices. Chat streams fill Delta,
// text-completion streams fill Text.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        *Delta  `json:"delta,omitempty"`
	Text         *string `json:"text,omitempty"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is the incremental message of a chat chunk.
type Delta struct {
	Role             string  `json:"role,omitempty"`
	Content          *string `json:"content,omitempty"`
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	// Reasoning is the thinking of reasoning models under Ollama's (and
	// others') name.
	Reasoning *string         `json:"reasoning,omitempty"`
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
}

// Usage is the token accounting of a request as servers write it.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// The details OpenAI, vLLM, xAI and others give: the reasoning tokens
	// of the output and the prompt tokens read from the prefix cache.
	CompletionDetails *CompletionDetails `json:"completion_tokens_details,omitempty"`
	PromptDetails     *PromptDetails     `json:"prompt_tokens_details,omitempty"`
}

// CompletionDetails is usage.completion_tokens_details.
type CompletionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// PromptDetails is usage.prompt_tokens_details.
type PromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Counts flattens the usage.
func (u *Usage) Counts() UsageCounts {
	c := UsageCounts{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Total: u.TotalTokens}
	if u.CompletionDetails != nil {
		c.Reasoning = u.CompletionDetails.ReasoningTokens
	}
	if u.PromptDetails != nil {
		c.Cached = u.PromptDetails.CachedTokens
	}
	return c
}

// UsageCounts are a usage's token counts; Reasoning and Cached are 0 where
// the server gives no details.
type UsageCounts struct {
	Prompt, Completion, Total int
	Reasoning, Cached         int
}

// Output is every token generated: completion_tokens, which include the
// reasoning tokens at OpenAI and most servers; where the total says they
// do not (xAI: total = prompt + completion + reasoning), the reasoning
// tokens are added.
func (c UsageCounts) Output() int {
	if c.Reasoning > 0 && c.Total == c.Prompt+c.Completion+c.Reasoning {
		return c.Completion + c.Reasoning
	}
	return c.Completion
}

// APIError is the error object OpenAI-compatible servers send, in a response
// body or inside a stream.
type APIError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param,omitempty"`
	Code    any    `json:"code,omitempty"`
}

// DecodeChunk parses one event's data as a chunk. It rejects data that is
// not a JSON object, and objects that are neither a chunk (no "choices") nor
// an error.
func DecodeChunk(data []byte, c *Chunk) error {
	*c = Chunk{}
	if err := json.Unmarshal(data, c); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedChunk, err)
	}
	if c.Choices == nil && c.Error == nil {
		return fmt.Errorf("%w: object has neither \"choices\" nor \"error\"", ErrMalformedChunk)
	}
	return nil
}

// ContentLen returns the number of bytes of generated text (content,
// reasoning, or completion text) the chunk carries over all choices, and
// whether it carries tool-call deltas.
func (c *Chunk) ContentLen() (n int, toolCalls bool) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Text != nil {
			n += len(*ch.Text)
		}
		if d := ch.Delta; d != nil {
			if d.Content != nil {
				n += len(*d.Content)
			}
			n += d.reasoningLen()
			if hasToolCalls(d.ToolCalls) {
				toolCalls = true
			}
		}
	}
	return n, toolCalls
}

// ReasoningLen returns the bytes of reasoning (reasoning_content or
// reasoning) the chunk carries over all choices.
func (c *Chunk) ReasoningLen() int {
	n := 0
	for i := range c.Choices {
		if d := c.Choices[i].Delta; d != nil {
			n += d.reasoningLen()
		}
	}
	return n
}

func (d *Delta) reasoningLen() int {
	n := 0
	if d.ReasoningContent != nil {
		n += len(*d.ReasoningContent)
	}
	if d.Reasoning != nil {
		n += len(*d.Reasoning)
	}
	return n
}

// hasToolCalls reports whether a delta's tool_calls value carries a call:
// it is not null and not an empty array (vLLM sends "tool_calls":[] on
// chunks that carry no call).
func hasToolCalls(raw []byte) bool {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return false
	}
	if len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' && len(bytes.TrimSpace(v[1:len(v)-1])) == 0 {
		return false
	}
	return true
}

// FinishReason returns the first non-empty finish_reason of the chunk's choices.
func (c *Chunk) FinishReason() string {
	for i := range c.Choices {
		if f := c.Choices[i].FinishReason; f != nil && *f != "" {
			return *f
		}
	}
	return ""
}
