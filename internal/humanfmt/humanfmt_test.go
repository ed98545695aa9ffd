package humanfmt

import (
	"math"
	"testing"
)

func TestSig(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1.00"}, {61.234, "61.2"}, {0.0612345, "0.0612"}, {0.000123456, "0.000123"},
		{999.6, "1,000"}, {9.996, "10.0"}, {1234.5, "1,230"}, {1234567, "1,230,000"}, {-2.5, "-2.50"},
		{100, "100"}, {99.95, "100"}, {math.NaN(), "n/a"}, {math.Inf(1), "∞"},
	} {
		if got := Sig(c.in); got != c.want {
			t.Errorf("Sig(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0 s"}, {0.000812, "812 µs"}, {0.0612345, "61.2 ms"}, {0.9996, "1.00 s"}, {2.1, "2.10 s"},
		{0.0009996, "1.00 ms"}, {59.99, "60.0 s"}, {210, "210 s"}, {900, "15.0 min"},
	} {
		if got := Seconds(c.in); got != c.want {
			t.Errorf("Seconds(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPercentIntRate(t *testing.T) {
	if got := Percent(0.0031); got != "0.310 %" {
		t.Errorf("Percent(0.0031) = %q", got)
	}
	if got := Percent(1); got != "100 %" {
		t.Errorf("Percent(1) = %q", got)
	}
	if got := Percent(0); got != "0 %" {
		t.Errorf("Percent(0) = %q", got)
	}
	if got := Int(1234567); got != "1,234,567" {
		t.Errorf("Int = %q", got)
	}
	if got := Int(-1234); got != "-1,234" {
		t.Errorf("Int(-1234) = %q", got)
	}
	if got := Rate(18.44); got != "18.4/s" {
		t.Errorf("Rate = %q", got)
	}
}
