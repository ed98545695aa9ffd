package llmsemconvprocessor

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor/internal/metadata"
)

// BenchmarkTypicalPdataFloor measures the least work any implementation on
// pdata's public API does to turn the typical OpenInference span
// (benchInputs' openinference_typical) into llm_semconv's output, with every
// decision made in advance: attribute positions are known, no key is
// looked up or classified, nothing is counted or checked. What is left is
// the data movement the output requires: read the attributes, parse the
// invocation parameters, write the three message JSON strings, append the
// 15 new attributes (values moved from the originals wherever one exists,
// new value objects otherwise), drop the 17 originals in one compaction
// pass, set the span name and kind. The test below checks that the result equals the
// processor's output, so the floor does the same job.
func BenchmarkTypicalPdataFloor(b *testing.B) {
	src := benchInputs(b)["openinference_typical"]
	benchCopies(b, src, newTypicalFloor(b, src).run)
}

func TestTypicalPdataFloorMatchesProcessor(t *testing.T) {
	src := benchInputs(t)["openinference_typical"]
	f := newTypicalFloor(t, src)
	got := ptrace.NewTraces()
	src.CopyTo(got)
	f.run(got)
	want := ptrace.NewTraces()
	src.CopyTo(want)
	p, err := newSemconvProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
	require.NoError(t, err)
	_, err = p.processTraces(context.Background(), want)
	require.NoError(t, err)
	gs := got.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	ws := want.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	require.Equal(t, ws.Len(), gs.Len())
	for i := 0; i < ws.Len(); i++ {
		require.Equal(t, ws.At(i).Name(), gs.At(i).Name())
		require.Equal(t, ws.At(i).Kind(), gs.At(i).Kind())
		require.Equal(t, ws.At(i).Attributes().AsRaw(), gs.At(i).Attributes().AsRaw())
	}
}

// typicalFloor holds the decisions made in advance: the attribute index of
// every input key.
type typicalFloor struct {
	idx  map[string]int
	kept []bool // by attribute index: stays on the span
	n    int
	buf  []byte
}

func newTypicalFloor(t testing.TB, src ptrace.Traces) *typicalFloor {
	f := &typicalFloor{idx: map[string]int{}}
	attrs := src.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	attrs.Range(func(k string, _ pcommon.Value) bool {
		f.idx[k] = f.n
		f.n++
		return true
	})
	require.Len(t, f.idx, 22)
	f.kept = make([]bool, f.n)
	for _, k := range []string{"input.mime_type", "input.value", "output.mime_type", "output.value", "user.id"} {
		f.kept[f.idx[k]] = true
	}
	return f
}

func (f *typicalFloor) run(td ptrace.Traces) {
	at := func(k string) int { return f.idx[k] }
	var (
		iKind, iModel, iProvider, iSystem, iParams = at("openinference.span.kind"), at("llm.model_name"), at("llm.provider"), at("llm.system"), at("llm.invocation_parameters")
		iIn0, iIn1, iIn2, iOut0                    = at("llm.input_messages.0.message.content"), at("llm.input_messages.1.message.content"), at("llm.input_messages.2.message.content"), at("llm.output_messages.0.message.content")
		iIn0r, iIn1r, iIn2r                        = at("llm.input_messages.0.message.role"), at("llm.input_messages.1.message.role"), at("llm.input_messages.2.message.role")
		iPrompt, iCompl, iTotal, iSession          = at("llm.token_count.prompt"), at("llm.token_count.completion"), at("llm.token_count.total"), at("session.id")
		unmapped                                   = [...]string{"input.mime_type", "input.value", "output.mime_type", "output.value"}
	)
	vals := make([]pcommon.Value, f.n)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for j := 0; j < spans.Len(); j++ {
		sp := spans.At(j)
		attrs := sp.Attributes()
		// Room for the 15 new attributes first, so that the values read
		// below stay where they are while the new ones are appended.
		m := attrs
		m.EnsureCapacity(f.n + 15)
		i := 0
		attrs.Range(func(_ string, v pcommon.Value) bool {
			vals[i] = v
			i++
			return true
		})

		// gen_ai.operation.name takes the storage of openinference.span.kind.
		op := m.PutEmpty(attrOperationName)
		vals[iKind].MoveTo(op)
		op.SetStr("chat")
		var model string
		var temp float64
		var maxTok int64
		scanMembers(vals[iParams].Str(), func(key string, _ byte, text string) {
			switch key {
			case "model":
				model = text
			case "temperature":
				temp, _ = strconv.ParseFloat(text, 64)
			case "max_tokens":
				maxTok, _ = strconv.ParseInt(text, 10, 64)
			}
		})
		rm := m.PutEmpty(attrRequestModel)
		vals[iParams].MoveTo(rm)
		rm.SetStr(model)
		m.PutDouble("gen_ai.request.temperature", temp)
		mt := m.PutEmpty("gen_ai.request.max_tokens")
		vals[iTotal].MoveTo(mt)
		mt.SetInt(maxTok)
		vals[iProvider].MoveTo(m.PutEmpty(attrProviderName))
		outTok := vals[iCompl].Int()
		vals[iCompl].MoveTo(m.PutEmpty("gen_ai.usage.output_tokens"))
		vals[iPrompt].MoveTo(m.PutEmpty("gen_ai.usage.input_tokens"))
		vals[iSession].MoveTo(m.PutEmpty("gen_ai.conversation.id"))
		// Messages: the system message becomes the system instructions.
		b := f.buf[:0]
		b = append(b, `[{"role":`...)
		b = appendString(b, vals[iIn1r].Str())
		b = append(b, `,"parts":[{"type":"text","content":`...)
		b = appendString(b, vals[iIn1].Str())
		b = append(b, `}]},{"role":`...)
		b = appendString(b, vals[iIn2r].Str())
		b = append(b, `,"parts":[{"type":"text","content":`...)
		b = appendString(b, vals[iIn2].Str())
		b = append(b, `}]}]`...)
		in := m.PutEmpty(attrInputMessages)
		vals[iIn0r].MoveTo(in)
		in.SetStr(string(b))
		b = append(b[:0], `[{"type":"text","content":`...)
		b = appendString(b, vals[iIn0].Str())
		b = append(b, `}]`...)
		sys := m.PutEmpty(attrSystemInstr)
		vals[iIn1r].MoveTo(sys)
		sys.SetStr(string(b))
		b = append(b[:0], `[{"role":"assistant","parts":[{"type":"text","content":`...)
		b = appendString(b, vals[iOut0].Str())
		b = append(b, `}],"finish_reason":"stop"}]`...)
		out := m.PutEmpty(attrOutputMsgs)
		vals[iIn2r].MoveTo(out)
		out.SetStr(string(b))
		f.buf = b
		vals[iModel].MoveTo(m.PutEmpty(attrResponseModel))
		dl := m.PutEmpty(attrDialect)
		vals[iSystem].MoveTo(dl)
		dl.SetStr("openinference")
		un := m.PutEmptySlice(attrUnmapped)
		un.EnsureCapacity(4)
		for x, k := range unmapped {
			v := un.AppendEmpty()
			vals[[...]int{iIn0, iIn1, iIn2, iOut0}[x]].MoveTo(v)
			v.SetStr(k)
		}
		dur := float64(sp.EndTimestamp()-sp.StartTimestamp()) / 1e9
		m.PutDouble("otelcol_llm.output_tokens_per_second", float64(outTok)/dur)
		// One compaction pass drops the originals (all but the kept ones).
		i = -1
		m.RemoveIf(func(string, pcommon.Value) bool {
			i++
			return i < f.n && !f.kept[i]
		})
		sp.SetName("chat " + model)
		sp.SetKind(ptrace.SpanKindClient)
	}
}
