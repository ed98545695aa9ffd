package inferencelogreceiver

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decimalQuotient gives bit for bit what divide gives from the parsed
// number, wherever it answers: random decimals of up to 15 digits, the
// logged shapes, signs, zeros.
func TestDecimalQuotientIsDivide(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []string{"0", "-0", "4.1", "100.0", "0.0", "99.9", "12.3456789012345", "999999999999999", "+7", "007.50", "1234567.891"}
	for range 200000 {
		digits := r.IntN(15) + 1
		s := strconv.FormatInt(r.Int64N(int64(math.Pow10(digits))), 10)
		if dot := r.IntN(len(s) + 1); dot > 0 && dot < len(s) {
			s = s[:dot] + "." + s[dot:]
		}
		if r.IntN(4) == 0 {
			s = "-" + s
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		for _, d := range []float64{100, 1000, 10} {
			q, ok := decimalQuotient(s, d, true)
			require.True(t, ok, s)
			n, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			want := divide(n, d)
			require.Equal(t, math.Float64bits(want), math.Float64bits(q), "%s / %v: %v, divide %v", s, d, q, want)
		}
	}
	for _, s := range []string{"", "+", ".5", "5.", "1e5", "NaN", "inf", "1.2.3", "12345678901234567", "0x10", " 5"} {
		_, ok := decimalQuotient(s, 100, true)
		assert.False(t, ok, "%q goes the general way", s)
	}
	_, ok := decimalQuotient("4.1", 100, false)
	assert.False(t, ok, "no fraction in an int field")
	_, ok = decimalQuotient("4", 3, true)
	assert.False(t, ok, "3 is not a power of ten")
}
