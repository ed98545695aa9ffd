package llmsemconvprocessor

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestIntOfFloatOfMatchBoxedConversions(t *testing.T) {
	vals := []pcommon.Value{
		pcommon.NewValueInt(1200), pcommon.NewValueInt(-3), pcommon.NewValueDouble(14), pcommon.NewValueDouble(1.5),
		pcommon.NewValueDouble(math.NaN()), pcommon.NewValueDouble(math.Inf(1)), pcommon.NewValueDouble(1 << 60),
		pcommon.NewValueStr("42"), pcommon.NewValueStr("0.25"), pcommon.NewValueStr("x"), pcommon.NewValueBool(true),
		pcommon.NewValueEmpty(), pcommon.NewValueMap(), pcommon.NewValueSlice(),
	}
	for _, v := range vals {
		wi, wok := toInt(rawOf(v))
		gi, gok := intOf(v)
		require.Equal(t, wok, gok, "int ok %s", v.AsString())
		require.Equal(t, wi, gi, "int %s", v.AsString())
		wf, wfok := toFloat(rawOf(v))
		gf, gfok := floatOf(v)
		require.Equal(t, wfok, gfok, "float ok %s", v.AsString())
		if wfok {
			require.Equal(t, wf, gf, "float %s", v.AsString())
		}
	}
}

func TestLookupLowerIsLowerASCIILookup(t *testing.T) {
	m := map[string]int{"openai": 1, "az.ai.openai": 2, "k": 3, "é": 4}
	for _, k := range []string{"openai", "OpenAI", "OPENAI", "Az.AI.OpenAI", "x", "", "K", "\u212A", "É", "OPENAI\u212A", strings.Repeat("A", 70)} {
		wv, wok := m[lowerASCII(k)]
		gv, gok := lookupLower(m, k)
		require.Equal(t, wok, gok, "%q", k)
		require.Equal(t, wv, gv, "%q", k)
	}
}

// TestStringArrayFromOneString: a string that is not a JSON array converts
// to a one-element array without a slice of its own (val.single), which
// writes, compares and prints as the general conversion does.
func TestStringArrayFromOneString(t *testing.T) {
	r := &rule{typ: typeStringArray, values: map[string]string{"stop": "stop", "end_turn": "stop"}}
	for _, in := range []string{"STOP", "end_turn", " length ", "", `["stop","length"]`, "[not json"} {
		got, gok := r.convertValue(pcommon.NewValueStr(in), 0)
		want, wok := r.convert(rawOf(pcommon.NewValueStr(in)), 0)
		require.Equal(t, wok, gok, "%q", in)
		require.Equal(t, want.strs(), got.strs(), "%q", in)
		require.Equal(t, want.String(), got.String(), "%q", in)
		gm, wm := pcommon.NewMap(), pcommon.NewMap()
		got.put(gm, "k")
		want.put(wm, "k")
		require.Equal(t, wm.AsRaw(), gm.AsRaw(), "%q", in)
		gv, _ := gm.Get("k")
		require.True(t, want.equal(gv), "%q", in)
		require.True(t, got.equal(gv), "%q", in)
		other := pcommon.NewValueSlice()
		other.Slice().AppendEmpty().SetStr("other")
		require.False(t, got.equal(other), "%q", in)
	}
}
