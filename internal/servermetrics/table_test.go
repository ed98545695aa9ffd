package servermetrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTableIsSound(t *testing.T) {
	m, err := ParseTable(tableYAML)
	require.NoError(t, err)
	assert.Equal(t, "vllm", m["vllm:num_preemptions"].Server, "counters are found without _total")
	d, ok := Lookup("vllm:num_preemptions_total")
	require.True(t, ok)
	assert.Equal(t, Preemptions, d.Role)
	assert.Equal(t, Counter, d.Kind)
	d, ok = Lookup("vllm:gpu_cache_usage_perc")
	require.True(t, ok)
	assert.Equal(t, 1, d.Rank, "the deprecated name ranks after the V1 one")
	for _, role := range append(append(append([]string(nil), GaugeRoles...), CounterRoles...), HistogramRoles...) {
		assert.NotZero(t, roleKinds[role], role)
	}
	_, err = ParseTable([]byte("servers:\n  - name: x\n    roles:\n      kv: [a]\n"))
	assert.ErrorContains(t, err, `unknown role "kv"`)
	_, err = ParseTable([]byte("servers:\n  - name: x\n    roles:\n      running: [a, a]\n"))
	assert.ErrorContains(t, err, "listed twice")
	_, err = ParseTable([]byte("servers:\n  - name: x\n    roles:\n      running: [{name: a, scale: 0}]\n"))
	assert.ErrorContains(t, err, "x: a: scale must be positive")
}

func TestFitSlope(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4, 5}
	f, ok := FitSlope(xs, []float64{1, 3, 5, 7, 9, 11}, 0.95)
	require.True(t, ok)
	assert.InDelta(t, 2, f.Slope, 1e-12)
	assert.InDelta(t, 0, f.Margin, 1e-9)
	assert.True(t, f.Rising(5, 1))
	f, ok = FitSlope(xs, []float64{0, 1, 0, 1, 0, 1}, 0.95)
	require.True(t, ok)
	assert.False(t, f.Rising(5, 0), "noise around a level is not a rise: slope %v ± %v", f.Slope, f.Margin)
	_, ok = FitSlope(xs[:3], []float64{1, 2, 3}, 0.95)
	assert.False(t, ok, "too few points")
	_, ok = FitSlope([]float64{1, 1, 1, 1}, []float64{1, 2, 3, 4}, 0.95)
	assert.False(t, ok, "one x")
}
