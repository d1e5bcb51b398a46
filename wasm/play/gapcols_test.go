package play

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"servelab/sim"
)

// GapColumns gives exactly what a walk over every gap gives (the page's
// gap lane before the block index), for runs in time order and out of it,
// with gaps that are not numbers, for views of the whole run and of parts.
func TestGapColumnsIsTheWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	walk := func(o *Overlay, t0, t1 float64, cols int, col func(float64) int) ([]float64, float64) {
		vals, top := make([]float64, cols), 0.0
		for _, gp := range o.Gaps {
			tt := gp.TRelInject + o.Origin
			if tt < t0 || tt > t1 {
				continue
			}
			if c := col(tt); c >= 0 && c < cols && gp.Gap > vals[c] {
				vals[c] = gp.Gap
				top = math.Max(top, gp.Gap)
			}
		}
		return vals, top
	}
	for trial := range 40 {
		n := rng.Intn(20000)
		gaps := make([]sim.Gap, n)
		tt := -3.0
		for i := range gaps {
			tt += rng.ExpFloat64() * 0.002
			gaps[i] = sim.Gap{TRelInject: tt, Gap: rng.ExpFloat64() * 0.02}
		}
		if trial%3 == 1 { // a file's order is its own
			rng.Shuffle(n, func(i, j int) { gaps[i], gaps[j] = gaps[j], gaps[i] })
		}
		if trial%5 == 2 && n > 10 {
			gaps[rng.Intn(n)].Gap = math.NaN()
			gaps[rng.Intn(n)].TRelInject = math.NaN()
		}
		o := &Overlay{Gaps: gaps, Origin: rng.Float64() * 5}
		for view := range 6 {
			span := (tt + 3) * math.Pow(0.3, float64(view))
			t0 := o.Origin - 3 + rng.Float64()*(tt+3-span)
			cols := 1 + rng.Intn(1500)
			left, pw := 40.0, float64(cols-1)
			col := func(x float64) int { return int(left + (x-t0)/span*pw - left) }
			wantV, wantTop := walk(o, t0, t0+span, cols, col)
			gotV, gotTop := o.GapColumns(t0, t0+span, cols, col)
			if !slices.Equal(gotV, wantV) || gotTop != wantTop {
				t.Fatalf("trial %d view %d (%d gaps, %d columns): the block index differs from the walk (top %v, want %v)", trial, view, n, cols, gotTop, wantTop)
			}
		}
	}
}
