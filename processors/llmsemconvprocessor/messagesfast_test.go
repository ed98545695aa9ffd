package llmsemconvprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// chatJSONSeeds are documents of the shapes chatJSONReader handles, and
// near misses it must leave to messagesFromJSON.
var chatJSONSeeds = []struct {
	doc     string
	handled bool
}{
	{`{"system": "You are helpful.", "prompt": "Weather in Berlin?"}`, true},
	{`{"prompt":"hi"}`, true},
	{`{"system":"s","messages":[{"role":"user","content":"a"}],"prompt":"b"}`, true},
	{`{"messages":[{"role":"system","content":"m"}],"system":"top"}`, true},
	{`[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"What is \u00e9t\u00e9?\n"}]},{"role":"assistant","content":"Summer.","name":"bot"}]`, true},
	{` [ {"role" : "user" , "content" : [ {"type":"input_text","text":"x"} , {"text":"y","type":"output_text"} ] } ] `, true},
	{`[{"role":"assistant","content":"done","finish_reason":"length"}]`, true},
	{`[{"role":"user","content":[]}]`, true},
	{`[{"role":"user"}]`, true},
	{`[]`, true},
	{`[{"role":"user","content":"caf\u00e9 \ud83d\ude00 \"q\" \\ /"}]`, true},
	{`{"system":"","prompt":""}`, true},
	// Left to messagesFromJSON.
	{`[{"role":"tool","content":"{\"t\":1}","tool_call_id":"c1"}]`, false},
	{`[{"role":"tool","content":"42"}]`, false},
	{`[{"role":"user","content":"a","content":"b"}]`, false},
	{`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]`, false},
	{`[{"role":"assistant","content":null,"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]}]`, false},
	{`[{"role":"user","parts":[{"type":"text","content":"x"}]}]`, false},
	{`{"role":"assistant","content":"The report says...","finish_reason":"stop"}`, true},
	{`{"role":"user","content":"x","system":"s"}`, false},
	{`{"system":"only"}`, false},
	{`{"messages":"x","prompt":"p"}`, false},
	{`[{"role":"","content":"x"}]`, false},
	{`[{"role":"user","content":"x"}] trailing`, false},
	{"[{\"role\":\"user\",\"content\":\"\xff\"}]", false},
	{`[{"role":"user","content":"x",}]`, false},
	{`[{"role":1,"content":"x"}]`, false},
	{`[{"role":"user","content":[{"type":"text","text":"a","cache_control":{}}]}]`, false},
	{`"text"`, false},
	{``, false},
}

func TestChatJSONReaderMatchesDecoder(t *testing.T) {
	var r chatJSONReader
	for _, c := range chatJSONSeeds {
		for _, dir := range []direction{dirInput, dirOutput} {
			msgs, sys, handled := r.read(c.doc, dir)
			require.Equal(t, c.handled, handled, "handled %q", c.doc)
			if handled {
				checkSameMessages(t, c.doc, dir, msgs, sys)
			}
		}
	}
}

func checkSameMessages(t *testing.T, doc string, dir direction, msgs []message, sys []msgPart) {
	t.Helper()
	wantMsgs, wantSys, ok := messagesFromJSON(doc, dir)
	require.True(t, ok, "messagesFromJSON refused %q, which the reader took", doc)
	require.Equal(t, string(appendMessages(nil, wantMsgs)), string(appendMessages(nil, msgs)), "messages of %q", doc)
	require.Equal(t, string(appendParts(nil, wantSys)), string(appendParts(nil, sys)), "system of %q", doc)
	require.Equal(t, len(wantMsgs), len(msgs))
	for i := range msgs {
		require.Equal(t, wantMsgs[i].Role, msgs[i].Role)
		require.Equal(t, wantMsgs[i].Name, msgs[i].Name)
		require.Equal(t, wantMsgs[i].HasFinish, msgs[i].HasFinish)
		require.Equal(t, wantMsgs[i].FinishReason, msgs[i].FinishReason)
		require.Equal(t, len(wantMsgs[i].Parts), len(msgs[i].Parts))
		for j := range msgs[i].Parts {
			require.Equal(t, wantMsgs[i].Parts[j], msgs[i].Parts[j])
		}
	}
}

// FuzzChatJSONReader: whatever the reader takes, messagesFromJSON reads the
// same messages from.
func FuzzChatJSONReader(f *testing.F) {
	for _, c := range chatJSONSeeds {
		f.Add(c.doc, false)
	}
	var r chatJSONReader
	f.Fuzz(func(t *testing.T, doc string, output bool) {
		dir := dirInput
		if output {
			dir = dirOutput
		}
		r.arena = r.arena[:0]
		if msgs, sys, handled := r.read(doc, dir); handled {
			checkSameMessages(t, doc, dir, msgs, sys)
		}
	})
}
