package play

import (
	"math"

	"servelab/sim"
)

// gapBlockLen is how many consecutive gaps of a measured run share one
// entry of its block index (GapColumns).
const gapBlockLen = 256

// gapBlock is the extent in time (relative to the injection) and the
// largest gap of gapBlockLen consecutive gaps; ok is false when one of
// them is not a number (its gaps are then looked at one by one).
type gapBlock struct {
	t0, t1, max float64
	ok          bool
}

// GapColumns is the largest gap of each of cols pixel columns, over the
// gaps whose time (Origin added) lies in [t0, t1], and the largest of those
// column values; col maps a time to its column and never decreases with
// the time. It is exactly what a walk over every gap gives, but a block of
// gaps that falls in one column is taken from the block's largest: a 50 MB
// file's 2.4 million gaps are a few thousand blocks when the whole run is
// in view, where the walk took about 20 ms of every redraw.
func (o *Overlay) GapColumns(t0, t1 float64, cols int, col func(t float64) int) (vals []float64, top float64) {
	vals = make([]float64, cols)
	add := func(t, gap float64) {
		if t < t0 || t > t1 {
			return
		}
		if c := col(t); c >= 0 && c < cols && gap > vals[c] {
			vals[c] = gap
			top = math.Max(top, gap)
		}
	}
	for k, b := range o.gapBlocks() {
		if b.ok {
			// Adding Origin keeps the order of times, so the block's ends are its
			// earliest and latest times on the page too, and col keeps it again.
			a, z := b.t0+o.Origin, b.t1+o.Origin
			if z < t0 || a > t1 {
				continue // every gap outside the view
			}
			if a >= t0 && z <= t1 && col(a) == col(z) {
				add(a, b.max) // every gap in one column: only the largest can count
				continue
			}
		}
		for _, g := range o.block(k) {
			add(g.TRelInject+o.Origin, g.Gap)
		}
	}
	return vals, top
}

// block is the k-th gapBlockLen of the overlay's gaps.
func (o *Overlay) block(k int) []sim.Gap {
	lo := k * gapBlockLen
	return o.Gaps[lo:min(len(o.Gaps), lo+gapBlockLen)]
}

// gapBlocks is the overlay's block index, made on first use (the gaps of
// an overlay do not change once it is read; an index of another length is
// made again).
func (o *Overlay) gapBlocks() []gapBlock {
	_ = o.indexGaps(nil)
	return o.blocks
}

// indexGaps makes the block index when it is not made, calling tick (when
// not nil) every 64 blocks and stopping with its error. A big upload's
// reader makes it in its slices: for a 50 MB file's millions of gaps it
// took about 130 ms of the first redraw after the upload landed.
func (o *Overlay) indexGaps(tick func() error) error {
	n := (len(o.Gaps) + gapBlockLen - 1) / gapBlockLen
	if o.blocks != nil && len(o.blocks) == n {
		return nil
	}
	blocks := make([]gapBlock, n)
	for k := range blocks {
		if tick != nil && k&63 == 0 {
			if err := tick(); err != nil {
				return err
			}
		}
		b := gapBlock{t0: math.Inf(1), t1: math.Inf(-1), max: math.Inf(-1), ok: true}
		for _, g := range o.block(k) {
			t := g.TRelInject
			if t != t || g.Gap != g.Gap {
				b.ok = false
			}
			b.t0, b.t1, b.max = math.Min(b.t0, t), math.Max(b.t1, t), math.Max(b.max, g.Gap)
		}
		blocks[k] = b
	}
	o.blocks = blocks
	return nil
}
