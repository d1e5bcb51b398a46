//go:build js && wasm

package main

import (
	"math"
	"syscall/js"
)

// touchState follows one gesture on the canvas: a tap selects the step
// under it, one finger dragging pans, two fingers pinching zoom.
type touchState struct {
	x0, y0   float64 // where the first finger went down (CSS px)
	t0, span float64 // the view then
	dist0    float64 // fingers' distance when a pinch began (0: no pinch)
	mid      float64 // the time under the pinch's midpoint
	moved    bool
}

// bindTouch listens to touches on the canvas frame. The listeners are not
// passive: they keep the browser from scrolling or zooming the page.
func (a *App) bindTouch() {
	ts := &a.in.touch
	point := func(ev js.Value, i int) (float64, float64) {
		t := ev.Get("touches").Index(i)
		return t.Get("clientX").Float(), t.Get("clientY").Float()
	}
	on := func(name string, f func(ev js.Value)) {
		opts := map[string]any{"passive": false}
		a.pg.own.Call("addEventListener", name, js.FuncOf(func(this js.Value, args []js.Value) any {
			a.guard(name+" handler", func() {
				ev := args[0]
				ev.Call("preventDefault")
				f(ev)
			})
			return nil
		}), opts)
	}
	on("touchstart", func(ev js.Value) {
		n := ev.Get("touches").Length()
		if n == 1 {
			x, y := point(ev, 0)
			a.post(func() {
				*ts = touchState{x0: x, y0: y, t0: a.tl.view.T0, span: a.tl.view.Span}
				a.tl.playing = false
			})
		} else if n >= 2 {
			x1, y1 := point(ev, 0)
			x2, y2 := point(ev, 1)
			a.post(func() {
				ts.moved = true
				ts.dist0 = math.Max(1, math.Hypot(x2-x1, y2-y1))
				ts.t0, ts.span = a.tl.view.T0, a.tl.view.Span
				ts.mid = a.tl.view.t(a.geom(), (x1+x2)/2*a.tl.dpr)
			})
		}
	})
	on("touchmove", func(ev js.Value) {
		n := ev.Get("touches").Length()
		if n == 1 {
			x, y := point(ev, 0)
			a.post(func() {
				if ts.dist0 > 0 {
					return // the rest of a pinch
				}
				if math.Hypot(x-ts.x0, y-ts.y0) > 6 {
					ts.moved = true
				}
				if ts.moved {
					g := a.geom()
					a.tl.view.T0 = math.Max(0, ts.t0-(x-ts.x0)*a.tl.dpr/g.plotW()*a.tl.view.Span)
					a.setView()
				}
			})
		} else if n >= 2 {
			x1, y1 := point(ev, 0)
			x2, y2 := point(ev, 1)
			a.post(func() {
				if ts.dist0 <= 0 {
					return
				}
				f := ts.dist0 / math.Max(1, math.Hypot(x2-x1, y2-y1))
				span := math.Max(1e-4, math.Min(ts.span*f, math.Max(1, 1.2*a.spanAll())))
				g := a.geom()
				// Keep the time under the fingers' midpoint where it is.
				frac := ((x1+x2)/2*a.tl.dpr - g.left) / g.plotW()
				a.tl.view.Span = span
				a.tl.view.T0 = math.Max(0, ts.mid-frac*span)
				a.setView()
			})
		}
	})
	on("touchend", func(ev js.Value) {
		if ev.Get("touches").Length() > 0 {
			return
		}
		a.post(func() {
			if !ts.moved {
				a.in.lastDragged = false
				a.selectAt(ts.x0, ts.y0) // a tap
			}
			ts.dist0 = 0
		})
	})
}
