// Package humanfmt formats the numbers that otelcol-llm prints for people
// (the live progress line, the load report's summary and tables): three
// significant digits and a unit, so that 0.0612345 s reads "61.2 ms".
package humanfmt // import "github.com/otelcol-llm/otelcol-llm/internal/humanfmt"

import (
	"math"
	"strconv"
	"strings"
)

// Sig formats v with three significant digits, without an exponent for
// values people meet in a load test (up to 10^15), and with thousands
// separators for large integers: 0.000123 → "0.000123", 61.234 → "61.2",
// 1234.5 → "1,235", 0 → "0".
func Sig(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == 0:
		return "0"
	}
	neg := v < 0
	a := math.Abs(v)
	mag := int(math.Floor(math.Log10(a)))
	// Rounding may carry into the next magnitude (999.6 → 1000).
	if r := roundSig(a, 3); r >= math.Pow(10, float64(mag+1)) {
		mag++
	}
	var s string
	if mag >= 2 {
		s = groupThousands(strconv.FormatFloat(math.Round(roundSig(a, 3)), 'f', 0, 64))
	} else {
		s = strconv.FormatFloat(roundSig(a, 3), 'f', 2-mag, 64)
	}
	if neg {
		return "-" + s
	}
	return s
}

func roundSig(a float64, digits int) float64 {
	if a == 0 {
		return 0
	}
	p := math.Pow(10, float64(digits-1)-math.Floor(math.Log10(a)))
	return math.Round(a*p) / p
}

func groupThousands(s string) string {
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// Int formats a count with thousands separators: 12345 → "12,345".
func Int(n int64) string {
	if n < 0 {
		return "-" + groupThousands(strconv.FormatInt(-n, 10))
	}
	return groupThousands(strconv.FormatInt(n, 10))
}

// Seconds formats a duration given in seconds with three significant digits
// in the unit that suits it: "812 µs", "61.2 ms", "2.10 s", "3.50 min".
func Seconds(s float64) string {
	a := math.Abs(s)
	switch {
	case math.IsNaN(s):
		return "n/a"
	case s == 0:
		return "0 s"
	case roundSig(a, 3) < 1e-3:
		return Sig(s*1e6) + " µs"
	case roundSig(a, 3) < 1:
		return Sig(s*1e3) + " ms"
	case roundSig(a, 3) < 600:
		return Sig(s) + " s"
	default:
		return Sig(s/60) + " min"
	}
}

// Percent formats a ratio (0..1) as a percentage with three significant
// digits: 0.0031 → "0.310 %", 0.5 → "50.0 %", 1 → "100 %".
func Percent(r float64) string {
	if math.IsNaN(r) {
		return "n/a"
	}
	if r == 0 {
		return "0 %"
	}
	return Sig(r*100) + " %"
}

// Rate formats a per-second rate: "18.4/s".
func Rate(v float64) string { return Sig(v) + "/s" }
