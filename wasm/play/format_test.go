package play

import (
	"fmt"
	"testing"
)

func TestFormatQty(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{6.37e13, "FLOP", "63.7 TFLOP"}, {1.77e10, "B", "17.7 GB"}, {6.3749e13, "FLOP", "63.7 TFLOP"},
		{512, "B", "512 B"}, {999.6, "B", "1 kB"}, {1e15, "FLOP", "1 PFLOP"}, {2.5e9, "B", "2.5 GB"}, {0, "B", "0 B"},
		{1.2345e12, "FLOP", "1.23 TFLOP"}, {123.4e9, "B", "123 GB"},
	} {
		if got := FormatQty(c.v, c.unit); got != c.want {
			t.Errorf("FormatQty(%g, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

func TestFormatDur(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0, "0"}, {0.1 * 10, "1 s"}, {0.9999999999999999, "1 s"}, {0.999996, "1 s"}, {0.99994, "999.94 ms"},
		{0.0005, "500 µs"}, {0.0009996, "1 ms"}, {0.01489, "14.89 ms"}, {1.5, "1.5 s"}, {-0.25, "-250 ms"}, {2, "2 s"},
	} {
		if got := FormatDur(c.s); got != c.want {
			t.Errorf("FormatDur(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 60, 5, []float64{0, 20, 40, 60}},
		{0, 120, 5, []float64{0, 50, 100}},
		{0, 1, 4, []float64{0, 0.5, 1}},
		{0, 2048, 4, []float64{0, 1000, 2000}},
	} {
		if got := Ticks(c.lo, c.hi, c.n); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Ticks(%g, %g, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
	}
	if got := LogTicks(0.001, 0.1); fmt.Sprint(got) != fmt.Sprint([]float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}) {
		t.Errorf("LogTicks over two decades = %v", got)
	}
	if got := LogTicks(0.001, 10); len(got) != 5 {
		t.Errorf("LogTicks over four decades = %v, want the five powers of ten", got)
	}
}
