package play

import (
	"fmt"
	"math"
	"strings"
)

// FormatQty writes a quantity of unit (FLOP, B) with a decimal SI prefix
// and three significant digits: 6.37e13 FLOP is "63.7 TFLOP", 1.77e10 B
// "17.7 GB" (the step box's FLOPs and bytes).
func FormatQty(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v) + " " + unit
	}
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for i+1 < len(prefixes) && math.Abs(v) >= 999.5*math.Pow(1000, float64(i)) {
		i++
	}
	x := v / math.Pow(1000, float64(i))
	digits := 2 // three significant digits: 1.23, 12.3, 123
	switch a := math.Abs(x); {
	case a >= 99.95:
		digits = 0
	case a >= 9.995:
		digits = 1
	}
	return trimZeros(fmt.Sprintf("%.*f", digits, x)) + " " + prefixes[i] + unit
}

// FormatDur writes seconds the way the lecture does: µs, ms or s, each
// chosen after rounding, so 0.99999 s is "1 s", not "1000 ms".
func FormatDur(s float64) string {
	a := math.Abs(s)
	switch {
	case a == 0:
		return "0"
	case math.Round(a*1e6) < 1000:
		return fmt.Sprintf("%.0f µs", s*1e6)
	case math.Round(a*1e5) < 1e5: // under 1000 ms at two decimals
		return trimZeros(fmt.Sprintf("%.2f", s*1e3)) + " ms"
	default:
		return trimZeros(fmt.Sprintf("%.3f", s)) + " s"
	}
}

// trimZeros drops a decimal's trailing zeros (and its point).
func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Ticks are the axis ticks of a linear axis over [lo, hi]: multiples of a
// round step (1, 2 or 5 times a power of ten) chosen so that about n fit.
func Ticks(lo, hi float64, n int) []float64 {
	if !(hi > lo) || n < 1 || math.IsInf(hi-lo, 0) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		t := math.Round(v/step) * step
		if t == 0 {
			t = 0 // not -0
		}
		out = append(out, t)
	}
	return out
}

// LogTicks are the ticks of a logarithmic axis over [lo, hi]: every power
// of ten, with 2× and 5× between them when the axis spans at most two
// decades (so a short axis still has several labels).
func LogTicks(lo, hi float64) []float64 {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	fine := math.Log10(hi/lo) <= 2
	var out []float64
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi*(1+1e-9); d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if m != 1 && !fine {
				continue
			}
			if v := d * m; v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}
