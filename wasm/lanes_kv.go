//go:build js && wasm

package main

import (
	"image/color"
	"math"

	"servelab/wasm/play"

	"github.com/hajimehoshi/ebiten/v2"
)

var (
	colKV       = color.RGBA{0x00, 0x9E, 0x73, 0xff} // bluish green: blocks in use
	colKVFree   = color.RGBA{0x56, 0xB4, 0xE9, 0x90} // sky blue, faint: free blocks still holding cached prefixes
	colCacheHit = color.RGBA{0xff, 0xff, 0xff, 0xff} // white: a prefill chunk that began after a prefix-cache hit
	colKVCap    = color.RGBA{0xF0, 0xE4, 0x42, 0xff} // yellow: the capacity line
	colPreempt  = color.RGBA{0xD5, 0x5E, 0x00, 0xff} // vermillion: a preemption
	colReject   = color.RGBA{0xff, 0xff, 0xff, 0xff} // white: a rejection
	colLink     = color.RGBA{0xCC, 0x79, 0xA7, 0xff} // reddish purple: a KV transfer
)

// paintMemory draws the memory lane: per GPU, the KV blocks in use over
// time (the tallest step per pixel column) against the capacity line, a
// vermillion mark where a step preempted and a white one where it
// rejected. Every height is a number the trace carries.
func paintMemory(dst *ebiten.Image, b *batch, r *play.SimRun, v *View, g geom, cursor float64, lang string) []label {
	if g.memH <= 0 || r.KVCapacity <= 0 || len(r.Rows) == 0 {
		return nil
	}
	pw := g.plotW()
	t1 := math.Min(v.T0+v.Span, cursor)
	subH := g.memH / float64(len(r.Rows))
	cols := int(pw) + 1
	use := make([]int, cols)
	cached := make([]int, cols)
	for ri, row := range r.Rows {
		y := g.memY + float64(ri)*subH
		h := subH - 2*g.s
		b.rect(g.left, y, pw, h, colPanel)
		b.rect(g.left, y, pw, math.Max(1, 1*g.s), colKVCap) // the capacity
		clear(use)
		clear(cached)
		a, e := visible(row.Iters, v.T0, t1)
		for k := a; k < e; k++ {
			it := &row.Iters[k]
			if it.Start > t1 {
				break
			}
			c0 := int(math.Max(0, v.x(g, it.Start)-g.left))
			c1 := int(math.Min(pw, v.x(g, it.End())-g.left))
			for c := c0; c <= c1 && c < cols; c++ {
				use[c] = max(use[c], it.KVBlocks)
				cached[c] = max(cached[c], it.KVCached)
			}
			x := math.Max(g.left, v.x(g, it.Start))
			if len(it.Preempted) > 0 {
				b.rect(x, y, 3*g.s, h*0.45, colPreempt)
			}
			if len(it.Rejected) > 0 {
				b.rect(x, y+h*0.55, 3*g.s, h*0.45, colReject)
			}
		}
		for c, n := range use {
			hh := h * math.Min(1, float64(n)/float64(r.KVCapacity))
			if n > 0 {
				b.rect(g.left+float64(c), y+h-hh, 1, hh, colKV)
			}
			if k := cached[c]; k > 0 { // above the used blocks: free, but still a cache
				hc := math.Min(h-hh, h*float64(k)/float64(r.KVCapacity))
				b.rect(g.left+float64(c), y+h-hh-hc, 1, hc, colKVFree)
			}
		}
		b.flushIfFull(dst)
	}
	b.flush(dst)
	return []label{
		{4 * g.s, g.memY, play.T(lang, "canvas.kv"), "row"},
		{4 * g.s, g.memY + 14*g.s, play.Tf(lang, "canvas.kvcap", r.KVCapacity, r.Preemptions), "small"},
	}
}

// paintTransfers draws each KV transfer of a disaggregated run: a thin
// line from the prefill GPU's row down to the decode GPU's row at the
// first token, and on the decode row's top edge a bar as long as the
// transfer took (at least two pixels, so a fast link still shows).
func paintTransfers(dst *ebiten.Image, b *batch, r *play.SimRun, v *View, g geom, cursor float64) {
	if len(r.Placements) == 0 {
		return
	}
	pw := g.plotW()
	t1 := math.Min(v.T0+v.Span, cursor)
	nPre := r.State.PrefillGPUs
	rowTop := func(ri int) float64 { return g.rowY + float64(ri)*(g.rowH+g.rowG) }
	lastX := map[[2]int]float64{}
	for i, p := range r.Placements {
		if p.Prefill < 0 || p.Decode < 0 || i >= len(r.Results) {
			continue
		}
		start := r.Results[i].FirstToken
		if start > t1 || p.KVArrive < v.T0 {
			continue
		}
		x0 := v.x(g, start)
		if x0 < g.left || x0 > g.left+pw {
			continue
		}
		key := [2]int{p.Prefill, p.Decode}
		if lx, ok := lastX[key]; ok && x0-lx < 2*g.s {
			continue // one line per pixel pair of GPUs
		}
		lastX[key] = x0
		c := reqColor(r, r.Results[i].ID)
		yp := rowTop(p.Prefill) + g.rowH
		yd := rowTop(nPre + p.Decode)
		b.rect(x0, yp, math.Max(1, 1*g.s), yd-yp, colLink)
		x1 := math.Min(g.left+pw, v.x(g, p.KVArrive))
		b.rect(x0, yd-3*g.s, math.Max(2*g.s, x1-x0), 3*g.s, c)
		b.flushIfFull(dst)
	}
	b.flush(dst)
}
