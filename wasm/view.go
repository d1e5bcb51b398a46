//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"servelab/wasm/play"
	"sort"
	"strings"

	"github.com/hajimehoshi/ebiten/v2"

	"servelab/sim"
)

// Colour-blind-safe palette (Okabe and Ito). Requests cycle through the
// first six; the roofline bound uses shapes as well as colours.
var (
	reqPalette = []color.RGBA{
		{0xE6, 0x9F, 0x00, 0xff}, // orange
		{0x56, 0xB4, 0xE9, 0xff}, // sky blue
		{0x00, 0x9E, 0x73, 0xff}, // bluish green
		{0xF0, 0xE4, 0x42, 0xff}, // yellow
		{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
		{0xB0, 0xB0, 0xB0, 0xff}, // grey
	}
	colCompute  = color.RGBA{0xD5, 0x5E, 0x00, 0xff} // vermillion
	colMemory   = color.RGBA{0x00, 0x72, 0xB2, 0xff} // blue
	colBG       = color.RGBA{0x14, 0x16, 0x1a, 0xff}
	colPanel    = color.RGBA{0x1e, 0x21, 0x27, 0xff}
	colGrid     = color.RGBA{0x33, 0x37, 0x3f, 0xff}
	colText     = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	colWait     = color.RGBA{0x70, 0x70, 0x70, 0xff}
	colCursor   = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colLong     = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colSel      = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colMeasured = color.RGBA{0xff, 0x5c, 0xcd, 0xff}
	colMeasB    = color.RGBA{0x9b, 0xff, 0x5c, 0xff}
)

func reqColor(r *play.SimRun, id int) color.RGBA {
	if r.LongIDs[id] {
		return colLong
	}
	return reqPalette[id%len(reqPalette)]
}

// tint mixes c with the background so decode tokens read lighter than prefill chunks.
// rejectedTint is how much of its colour a rejected draft token keeps
// (a decode token keeps 0.55 of its request's).
const rejectedTint = 0.3

func tint(c color.RGBA, f float64) color.RGBA {
	m := func(a, b uint8) uint8 { return uint8(float64(a)*f + float64(b)*(1-f)) }
	return color.RGBA{m(c.R, colBG.R), m(c.G, colBG.G), m(c.B, colBG.B), 0xff}
}

// batch collects solid rectangles and draws them in one DrawTriangles call.
type batch struct {
	v   []ebiten.Vertex
	idx []uint16
	src *ebiten.Image
}

func newBatch() *batch {
	w := ebiten.NewImage(3, 3)
	w.Fill(color.White)
	return &batch{src: w.SubImage(imageRect(1, 1, 2, 2)).(*ebiten.Image)}
}

func (b *batch) rect(x, y, w, h float64, c color.RGBA) {
	if w <= 0 || h <= 0 {
		return
	}
	if len(b.v) > 60000 {
		panic("batch overflow: flush first")
	}
	r, g, bl, a := float32(c.R)/255, float32(c.G)/255, float32(c.B)/255, float32(c.A)/255
	n := uint16(len(b.v))
	x0, y0, x1, y1 := float32(x), float32(y), float32(x+w), float32(y+h)
	for _, p := range [4][2]float32{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		b.v = append(b.v, ebiten.Vertex{DstX: p[0], DstY: p[1], SrcX: 1.5, SrcY: 1.5, ColorR: r, ColorG: g, ColorB: bl, ColorA: a})
	}
	b.idx = append(b.idx, n, n+1, n+2, n+1, n+3, n+2)
}

func (b *batch) flushIfFull(dst *ebiten.Image) {
	if len(b.v) > 55000 {
		b.flush(dst)
	}
}

func (b *batch) flush(dst *ebiten.Image) {
	if len(b.v) > 0 {
		dst.DrawTriangles(b.v, b.idx, b.src, nil)
	}
	b.v, b.idx = b.v[:0], b.idx[:0]
}

// label is text the page lays over the canvas (the canvas itself draws no text,
// which keeps a font out of the wasm).
type label struct {
	x, y  float64 // device pixels
	text  string
	class string
}

// geom is the timeline's layout in device pixels.
type geom struct {
	w, h, s          float64 // size and scale (device pixels per CSS pixel, projector bigger)
	left, right      float64
	axisY, axisH     float64
	rowY, rowH, rowG float64 // first GPU row, its height, gap
	lanesY, lanesH   float64
	itlY, itlH       float64
	memY, memH       float64 // the memory lane (memH 0: none)
	gapTop           float64 // the gap scale's top, when another pane shares it (0: this pane's own)
}

// layoutAt lays out one run's pane, h tall from y0, with a memory lane
// under the GPU rows when mem is set and a line for the pane's title above
// the axis when titled (compare mode stacks two panes).
func layoutAt(y0, w, h, s float64, rows int, mem, titled bool) geom {
	g := geom{w: w, h: y0 + h, s: s, left: 92 * s, right: 12 * s, axisY: y0 + 4*s, axisH: 20 * s}
	if titled {
		g.axisY += 14 * s
	}
	g.rowY = g.axisY + g.axisH + 4*s
	g.rowG = 6 * s
	avail := y0 + h - g.rowY
	g.itlH = math.Max(50*s, avail*0.2)
	g.rowH = math.Min(110*s, math.Max(28*s, avail*0.45/float64(rows)))
	g.lanesY = g.rowY + float64(rows)*(g.rowH+g.rowG) + 8*s
	if mem {
		g.memY = g.lanesY - 2*s
		g.memH = math.Max(30*s, math.Min(80*s, avail*0.14))
		g.lanesY = g.memY + g.memH + 8*s
	}
	g.itlY = y0 + h - g.itlH - 6*s
	g.lanesH = g.itlY - 10*s - g.lanesY
	return g
}

func (g geom) plotW() float64 { return g.w - g.left - g.right }

// x maps a time to a device-pixel column.
func (v *View) x(g geom, t float64) float64 { return g.left + (t-v.T0)/v.Span*g.plotW() }

// t maps a device-pixel column to a time.
func (v *View) t(g geom, x float64) float64 { return v.T0 + (x-g.left)/g.plotW()*v.Span }

// View is what part of the run is shown and how far playback has got.
type View struct {
	T0, Span float64
	Cursor   float64 // playback position; < 0 shows the whole run
	Sel      int     // selected step (global index over rows); -1 none
	SelRow   int
	Hover    int
	HoverRow int
	// SelPane and HoverPane say which run the step is of (compare mode: 0 A, 1 B).
	SelPane, HoverPane int
}

// visible returns the half-open index range of row's iterations overlapping [t0, t1].
func visible(its []sim.Iteration, t0, t1 float64) (int, int) {
	a := sort.Search(len(its), func(i int) bool { return its[i].Start+its[i].Duration >= t0 })
	b := sort.Search(len(its), func(i int) bool { return its[i].Start > t1 })
	return a, b
}

// paintPane draws one run into its pane of dst (see layoutAt).
func paintPane(dst *ebiten.Image, b *batch, r *play.SimRun, v *View, g geom, meas []*play.Overlay, lang string) []label {
	var labels []label
	pw := g.plotW()
	t1 := v.T0 + v.Span
	cursor := v.Cursor
	if cursor < 0 {
		cursor = math.Inf(1)
	}
	// Axis: about one tick every 110 CSS px.
	step := niceStep(v.Span / math.Max(1, pw/(110*g.s)))
	for t := math.Ceil(v.T0/step) * step; t <= t1; t += step {
		x := v.x(g, t)
		b.rect(x, g.axisY+g.axisH-4*g.s, 1*g.s, 4*g.s, colText)
		b.rect(x, g.rowY, 1, g.h-g.rowY, colGrid)
		if x > g.w-60*g.s { // near the right edge: the label ends at its tick, not past the canvas
			labels = append(labels, label{x - 3*g.s, g.axisY, play.FormatDur(t), "tick end"})
		} else {
			labels = append(labels, label{x + 3*g.s, g.axisY, play.FormatDur(t), "tick"})
		}
	}
	if r == nil {
		b.flush(dst)
		return labels
	}
	// GPU rows: one block per iteration, width = its duration.
	for ri, row := range r.Rows {
		y := g.rowY + float64(ri)*(g.rowH+g.rowG)
		b.rect(g.left, y, pw, g.rowH, colPanel)
		labels = append(labels, label{4 * g.s, y + g.rowH/2 - 8*g.s, row.Name, "row"})
		if row.Requests > 0 { // a disaggregated run: what the router sent here
			labels = append(labels, label{4 * g.s, y + g.rowH/2 + 6*g.s, play.Tf(lang, "canvas.routed", row.Requests), "small"})
		}
		a, e := visible(row.Iters, v.T0, t1)
		lastX := -1.0
		bandH := 5 * g.s
		for k := a; k < e; k++ {
			it := &row.Iters[k]
			if it.Start > cursor {
				break
			}
			x0 := math.Max(g.left, v.x(g, it.Start))
			x1 := math.Min(g.left+pw, v.x(g, it.End()))
			w := x1 - x0
			bc := colMemory
			if it.Cost.Bound == sim.Compute {
				bc = colCompute
			}
			if w < 2 {
				// Narrower than two pixels: one step per pixel column (a
				// prefill wins the column), drawn one pixel wide.
				if math.Floor(x0) == lastX && it.Prefill == 0 {
					continue
				}
				lastX = math.Floor(x0)
				w = math.Max(1, w)
			}
			// Bound band on top: compute a full bar, memory a half-height bar.
			if it.Cost.Bound == sim.Compute {
				b.rect(x0, y, w, bandH, bc)
			} else {
				b.rect(x0, y+bandH/2, w, bandH/2, bc)
			}
			body := g.rowH - bandH - 1*g.s
			total := 0.0 // (a speculating decode verifies several tokens: count the items')
			for _, item := range it.Items {
				total += float64(item.Tokens)
			}
			yy := y + bandH + 1*g.s
			gap := 0.0
			if w > 4*g.s {
				gap = 1 * g.s
			}
			for _, item := range it.Items {
				hh := body * float64(item.Tokens) / total
				c := reqColor(r, item.ID)
				if !item.Prefill {
					c = tint(c, 0.55)
				}
				kept := hh
				if !item.Prefill && item.Tokens > 1 {
					// A speculating decode verified Tokens; the drafts after
					// the first wrong one were thrown away (its colour, faint).
					kept = hh * math.Min(float64(item.Tokens), float64(item.Accepted)+1) / float64(item.Tokens)
				}
				b.rect(x0, yy, w-gap, kept, c)
				if kept < hh {
					b.rect(x0, yy+kept, w-gap, hh-kept, tint(c, rejectedTint))
				}
				if item.Prefill && item.Cached > 0 {
					// The chunk after a prefix-cache hit: the cached tokens
					// were not computed, so they take no room; a mark says so.
					b.rect(x0, yy, math.Min(w-gap, 3*g.s), hh, colCacheHit)
				}
				yy += hh
			}
			b.flushIfFull(dst)
		}
		// Selected and hovered steps get an outline.
		for _, m := range []struct {
			row, k int
			c      color.RGBA
		}{{v.SelRow, v.Sel, colSel}, {v.HoverRow, v.Hover, color.RGBA{0xaa, 0xaa, 0xaa, 0xff}}} {
			if m.row != ri || m.k < 0 || m.k >= len(row.Iters) {
				continue
			}
			it := &row.Iters[m.k]
			x0, x1 := v.x(g, it.Start), v.x(g, it.End())
			if x1 < g.left || x0 > g.left+pw {
				continue
			}
			x1 = math.Max(x1, x0+2*g.s)
			th := 2 * g.s
			b.rect(x0, y-th, x1-x0, th, m.c)
			b.rect(x0, y+g.rowH, x1-x0, th, m.c)
			b.rect(x0-th, y, th, g.rowH, m.c)
			b.rect(x1, y, th, g.rowH, m.c)
		}
	}
	b.flush(dst)
	paintTransfers(dst, b, r, v, g, cursor)
	labels = append(labels, paintMemory(dst, b, r, v, g, cursor, lang)...)
	labels = append(labels, paintLanes(dst, b, r, v, g, cursor, lang)...)
	labels = append(labels, paintITL(dst, b, r, v, g, cursor, meas, lang)...)
	// Playback cursor.
	if v.Cursor >= 0 && v.Cursor >= v.T0 && v.Cursor <= t1 {
		b.rect(v.x(g, v.Cursor), g.axisY, 2*g.s, g.h-g.axisY, colCursor)
	}
	if r.Inject >= 0 && r.Inject >= v.T0 && r.Inject <= t1 {
		x := v.x(g, r.Inject)
		b.rect(x, g.rowY, 1*g.s, g.h-g.rowY, colLong)
		labels = append(labels, label{x + 3*g.s, g.lanesY - 16*g.s, play.T(lang, "canvas.long"), "note"})
	}
	b.flush(dst)
	stackMargin(labels, g)
	return labels
}

// marginH is how tall a label of class cls in the left margin is, in
// device pixels: its font's line (canvas.html: 12 and 11 CSS px at 1.2,
// projector mode 18 and 16 at s = 1.5 dpr), with a little air.
func marginH(cls string, s float64) float64 {
	if cls == "row" {
		return 15 * s
	}
	return 14 * s
}

// stackMargin keeps the left margin's labels (GPU rows, memory, requests,
// gaps) from running into each other where the pane is short (projector
// mode on a laptop, compare mode's half panes): in the order they were
// made (top-down, each part's name before its notes, so a note stays
// under its name) each starts below the one before, and the last ones move
// up again if that pushed them past the pane's bottom.
func stackMargin(ls []label, g geom) {
	var idx []int
	for i, l := range ls {
		if l.x == 4*g.s && l.y >= g.rowY-1 {
			idx = append(idx, i)
		}
	}
	for k := 1; k < len(idx); k++ {
		p, l := &ls[idx[k-1]], &ls[idx[k]]
		l.y = math.Max(l.y, p.y+marginH(p.class, g.s))
	}
	bottom := g.h
	for k := len(idx) - 1; k >= 0; k-- {
		l := &ls[idx[k]]
		l.y = math.Max(g.rowY, math.Min(l.y, bottom-marginH(l.class, g.s)))
		bottom = l.y
	}
}

// paintLanes draws one lane per request active in the view: waiting (thin
// line), prefilling (solid), decoding (tinted) with a tick per token.
func paintLanes(dst *ebiten.Image, b *batch, r *play.SimRun, v *View, g geom, cursor float64, lang string) []label {
	t1 := v.T0 + v.Span
	var active []int
	for i := range r.Results {
		res := &r.Results[i]
		end := res.Finish
		if end == 0 {
			end = r.End
		}
		if res.Arrival <= t1 && end >= v.T0 && res.Arrival <= cursor {
			active = append(active, i)
		}
	}
	minLane := 3 * g.s
	maxLanes := int(g.lanesH / minLane)
	shown := min(len(active), max(0, maxLanes)) // a pane too short for lanes shows none (lanesH < 0)
	labels := []label{{4 * g.s, g.lanesY, play.Tf(lang, "canvas.requests", len(active)), "row"}}
	if shown < len(active) {
		labels = append(labels, label{4 * g.s, g.lanesY + 16*g.s, play.Tf(lang, "canvas.shown", shown), "small"})
	}
	if shown == 0 {
		return labels
	}
	laneH := math.Min(14*g.s, g.lanesH/float64(shown))
	clip := func(t float64) float64 { return math.Max(g.left, math.Min(g.left+g.plotW(), v.x(g, t))) }
	for n, i := range active[:shown] {
		res := &r.Results[i]
		y := g.lanesY + float64(n)*laneH
		c := reqColor(r, res.ID)
		fp := r.FirstPrefill[i]
		first := res.FirstToken
		if res.Generated == 0 {
			first = math.Inf(1)
		}
		end := res.Finish
		if res.Generated < res.Output || end == 0 {
			end = r.End
		}
		lim := func(t float64) float64 { return math.Min(t, cursor) }
		// waiting
		wEnd := fp
		if wEnd < 0 {
			wEnd = math.Min(first, end)
		}
		xa, xb := clip(res.Arrival), clip(lim(wEnd))
		b.rect(xa, y+laneH/2-0.5*g.s, xb-xa, math.Max(1, 1*g.s), colWait)
		// prefilling
		if fp >= 0 {
			xa, xb = clip(fp), clip(lim(math.Min(first, end)))
			b.rect(xa, y+laneH*0.15, xb-xa, laneH*0.7, c)
		}
		// decoding
		if first < end {
			xa, xb = clip(first), clip(lim(end))
			b.rect(xa, y+laneH*0.3, xb-xa, laneH*0.4, tint(c, 0.45))
		}
		b.flushIfFull(dst)
	}
	// Token ticks, from the trace: a request's token lands at the end of
	// each step that emitted for it. Drawn when lanes are tall enough.
	if laneH >= 5*g.s {
		lane := make(map[int]int, shown)
		for n, i := range active[:shown] {
			lane[r.Results[i].ID] = n
		}
		lastX := make(map[int]float64, shown)
		for _, row := range r.Rows {
			a, e := visible(row.Iters, v.T0, t1)
			for k := a; k < e; k++ {
				it := &row.Iters[k]
				end := it.End()
				if end > cursor || end > t1 {
					break
				}
				x := v.x(g, end)
				for _, item := range it.Items {
					n, ok := lane[item.ID]
					if !ok || !item.Emit {
						continue
					}
					if lx, seen := lastX[item.ID]; seen && x-lx < 3*g.s {
						continue
					}
					lastX[item.ID] = x
					y := g.lanesY + float64(n)*laneH
					b.rect(x, y+laneH*0.1, math.Max(1, 1*g.s), laneH*0.8, reqColor(r, item.ID))
				}
				b.flushIfFull(dst)
			}
		}
	}
	b.flush(dst)
	return labels
}

// paintITL draws the inter-token gaps over time: the largest gap per pixel
// column, so a stall is a spike; measured gaps are laid over it.
func paintITL(dst *ebiten.Image, b *batch, r *play.SimRun, v *View, g geom, cursor float64, meas []*play.Overlay, lang string) []label {
	t1 := math.Min(v.T0+v.Span, cursor)
	pw := g.plotW()
	b.rect(g.left, g.itlY, pw, g.itlH, colPanel)
	cols := int(pw) + 1
	sims := make([]float64, cols)
	a := sort.Search(len(r.ITL), func(i int) bool { return r.ITL[i].T >= v.T0 })
	top := 0.0
	for i := a; i < len(r.ITL) && r.ITL[i].T <= t1; i++ {
		c := int(v.x(g, r.ITL[i].T) - g.left)
		if c >= 0 && c < cols && r.ITL[i].Gap > sims[c] {
			sims[c] = r.ITL[i].Gap
			top = math.Max(top, sims[c])
		}
	}
	type mcol struct {
		vals []float64
		c    color.RGBA
	}
	var mcols []mcol
	for mi, m := range meas {
		if m == nil || len(m.Gaps) == 0 {
			continue
		}
		vals, mtop := m.GapColumns(v.T0, t1, cols, func(t float64) int { return int(v.x(g, t) - g.left) })
		top = math.Max(top, mtop)
		col := colMeasured
		switch {
		case m.Kind == "sim":
			col = colCompute // the lab chapter's other simulated run
		case mi == 1:
			col = colMeasB
		}
		mcols = append(mcols, mcol{vals, col})
	}
	top = math.Max(top, g.gapTop)
	if top <= 0 {
		top = 0.001
	}
	top = niceCeil(top)
	scale := (g.itlH - 4*g.s) / top
	base := g.itlY + g.itlH
	// A gap is as long as it is high: a stall (wider than a dozen pixels on
	// the time axis) is also drawn as a bar over the time it lasted, ending
	// at the token that closed it, so it reads as the wait it was. Shorter
	// gaps are left as spikes: thousands of small bars cost a redraw more
	// than they tell.
	pps := pw / v.Span
	span := func(c int, gap float64, col color.RGBA) {
		x, w := g.left+float64(c), gap*pps
		if w > 12*g.s {
			x0 := math.Max(g.left, x-w)
			b.rect(x0, base-gap*scale, x-x0, 2*g.s, col)
		}
	}
	for c, gap := range sims {
		if gap > 0 {
			b.rect(g.left+float64(c), base-gap*scale, 2*g.s, gap*scale, reqPalette[1])
			span(c, gap, reqPalette[1])
		}
	}
	for _, m := range mcols {
		for c, gap := range m.vals {
			if gap > 0 {
				b.rect(g.left+float64(c)-1*g.s, base-gap*scale-1*g.s, 3*g.s, 3*g.s, m.c)
				span(c, gap, m.c)
			}
		}
		b.flushIfFull(dst)
	}
	// The scale: a tick at half the top, beside the top's own label.
	b.rect(g.left, base-top/2*scale, pw, 1*g.s, colGrid)
	b.flush(dst)
	return []label{
		{4 * g.s, g.itlY, play.T(lang, "canvas.gap"), "row"},
		{4 * g.s, g.itlY + 16*g.s, play.T(lang, "canvas.max") + " " + play.FormatDur(top), "small"},
		{4 * g.s, base - top/2*scale - 6*g.s, play.FormatDur(top / 2), "small"},
	}
}

// niceStep rounds a raw tick interval up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 3, 5, 7.5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// labelsHTML lays the labels out as absolutely positioned spans (CSS pixels).
func labelsHTML(ls []label, dpr float64) string {
	var sb strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&sb, `<span class="%s" style="left:%.1fpx;top:%.1fpx">%s</span>`, l.class, l.x/dpr, l.y/dpr, html.EscapeString(l.text))
	}
	return sb.String()
}

// hit finds the step under a device-pixel point: its row and index, or -1.
func hit(r *play.SimRun, v *View, g geom, x, y float64) (row, k int) {
	if r == nil || x < g.left || x > g.left+g.plotW() {
		return -1, -1
	}
	if g.memH > 0 && y >= g.memY && y < g.memY+g.memH {
		// The memory lane: the step its GPU ran at that moment.
		ri := min(len(r.Rows)-1, int((y-g.memY)/g.memH*float64(len(r.Rows))))
		return ri, r.StepAt(ri, v.t(g, x))
	}
	for ri, rw := range r.Rows {
		ry := g.rowY + float64(ri)*(g.rowH+g.rowG)
		if y < ry || y > ry+g.rowH {
			continue
		}
		t := v.t(g, x)
		tol := 3 * g.s / g.plotW() * v.Span // a narrow step is still hittable
		i := sort.Search(len(rw.Iters), func(i int) bool { return rw.Iters[i].End() >= t-tol })
		if i < len(rw.Iters) && rw.Iters[i].Start <= t+tol {
			return ri, i
		}
	}
	return -1, -1
}
