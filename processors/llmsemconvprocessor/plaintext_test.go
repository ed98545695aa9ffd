package llmsemconvprocessor

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestPlainTextMessagesRebuilt covers official message attributes that hold
// plain text instead of the convention's JSON: they are rebuilt as one text
// message (so the output is valid JSON), listed, counted as invalid values,
// and the content policy then applies to the rebuilt value.
func TestPlainTextMessagesRebuilt(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Content.InputMessages = GroupPolicy{Action: ActionRedact}
	a, st := normalizeSpan(t, cfg, "", func(a pcommon.Map) {
		a.PutStr("openinference.span.kind", "LLM")
		a.PutStr("llm.model_name", "m-1")
		a.PutStr("gen_ai.input.messages", `mail "bob" at bob@example.com`)
		a.PutStr("gen_ai.output.messages", "A")
		a.PutStr("gen_ai.system_instructions", "be brief\n")
		a.PutStr("gen_ai.tool.definitions", "search(q)")
		a.PutStr("gen_ai.response.finish_reasons", "length")
		a.PutStr("gen_ai.operation.name", "chat")
	})
	got := a.AsRaw()
	for _, k := range []string{attrInputMessages, attrOutputMsgs, attrSystemInstr} {
		require.Contains(t, got, k)
		require.True(t, json.Valid([]byte(got[k].(string))), "%s = %q", k, got[k])
	}
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"mail \"bob\" at [REDACTED:email]"}]}]`, got[attrInputMessages].(string))
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"A"}],"finish_reason":"length"}]`, got[attrOutputMsgs].(string))
	assert.JSONEq(t, `[{"type":"text","content":"be brief\n"}]`, got[attrSystemInstr].(string))
	assert.NotContains(t, got, attrToolDefs)
	assert.Equal(t, "search(q)", got[attrInvalidPrefix+attrToolDefs])
	assert.ElementsMatch(t, []any{attrInputMessages, attrOutputMsgs, attrSystemInstr}, got[attrWrappedText])
	var invalid int64
	for _, per := range st.attrs {
		invalid += per[attrInvalid]
	}
	assert.Equal(t, int64(4), invalid)
}

// TestValidMessagesUntouchedByTextFix checks that JSON message values are
// left as they are.
func TestValidMessagesUntouchedByTextFix(t *testing.T) {
	in := `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`
	a, _ := normalizeSpan(t, createDefaultConfig().(*Config), "", func(a pcommon.Map) {
		a.PutStr("openinference.span.kind", "LLM")
		a.PutStr("llm.model_name", "m-1")
		a.PutStr("gen_ai.input.messages", in)
	})
	got := a.AsRaw()
	assert.Equal(t, in, got[attrInputMessages])
	assert.NotContains(t, got, attrWrappedText)
}
