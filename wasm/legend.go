//go:build js && wasm

package main

import (
	"image/color"

	"servelab/wasm/play"
)

// legendItem is one entry of the canvas's own legend: a swatch drawn as
// the timeline draws it, and its words (catalogue key).
type legendItem struct {
	key  string
	c    color.RGBA
	half bool // a half-height swatch, as a memory-bound step's band
}

// legendItems are the entries for what pane r draws: the two kinds of
// step and of token always; the long prompt, the measured runs, the KV
// lane and the transfers only when the pane has them.
func legendItems(r *play.SimRun, meas []*play.Overlay) []legendItem {
	if r == nil {
		return nil
	}
	items := []legendItem{{"canvas.leg.compute", colCompute, false}, {"canvas.leg.memory", colMemory, true},
		{"canvas.leg.prefill", colLegendTok, false}, {"canvas.leg.decode", tint(colLegendTok, 0.55), false}}
	if r.Inject >= 0 {
		items = append(items, legendItem{"canvas.leg.long", colLong, false})
	}
	for i, m := range meas { // as paintITL colours them
		switch {
		case m == nil || len(m.Gaps) == 0:
		case m.Kind == "sim":
			items = append(items, legendItem{"canvas.leg.other", colCompute, false})
		case i == 1:
			items = append(items, legendItem{"canvas.leg.measB", colMeasB, false})
		default:
			items = append(items, legendItem{"canvas.leg.measA", colMeasured, false})
		}
	}
	if r.Prefix != nil {
		items = append(items, legendItem{"canvas.leg.hit", colCacheHit, false})
	}
	if r.Spec != nil {
		items = append(items, legendItem{"canvas.leg.rejected", tint(tint(colLegendTok, 0.55), rejectedTint), false})
	}
	if r.KVCapacity > 0 {
		items = append(items, legendItem{"canvas.leg.kv", colKV, false})
		if r.Prefix != nil {
			items = append(items, legendItem{"canvas.leg.kvcached", colKVFree, false})
		}
	}
	if len(r.Placements) > 0 {
		items = append(items, legendItem{"canvas.leg.xfer", colLink, false})
	}
	return dedupLegend(items)
}

// colLegendTok is the neutral colour the legend shows tokens in (the
// timeline gives each request its own).
var colLegendTok = color.RGBA{0xbb, 0xbb, 0xbb, 0xff}

func dedupLegend(items []legendItem) []legendItem {
	seen := map[string]bool{}
	out := items[:0]
	for _, it := range items {
		if !seen[it.key] {
			seen[it.key] = true
			out = append(out, it)
		}
	}
	return out
}

// textWidth estimates a legend label's width in device pixels: the labels
// are HTML over the canvas, measured by the browser only after this frame,
// so the legend is laid out from the font's size (11 CSS px, 16 in
// projector mode: about 11 px per unit of scale), as textW does the charts'.
func textWidth(s string, scale float64) float64 { return textW(s) * 1.1 * scale }

// paintLegend draws the legend of pane r right-aligned on the line above
// its time axis (a projected or embedded canvas explains itself), leaving
// out the last entries that would run into x0 (a pane's title).
func paintLegend(b *batch, r *play.SimRun, meas []*play.Overlay, g geom, lang string, x0 float64) []label {
	items := legendItems(r, meas)
	sw, pad := 10*g.s, 12*g.s
	y := g.axisY - 14*g.s
	type placed struct {
		it    legendItem
		text  string
		width float64
	}
	var ps []placed
	total := 0.0
	for _, it := range items {
		t := play.T(lang, it.key)
		w := sw + 4*g.s + textWidth(t, g.s) + pad
		if g.w-g.right-total-w < x0 {
			break
		}
		ps = append(ps, placed{it, t, w})
		total += w
	}
	x := g.w - g.right - total
	var labels []label
	for _, p := range ps {
		if p.it.half {
			b.rect(x, y+3*g.s+sw/2, sw, sw/2, p.it.c)
		} else {
			b.rect(x, y+3*g.s, sw, sw, p.it.c)
		}
		labels = append(labels, label{x + sw + 4*g.s, y, p.text, "small legend"})
		x += p.width
	}
	return labels
}
