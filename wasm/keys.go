//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
)

// sliderKeys are the keys a focused slider leaves to the page: a range
// input does nothing with Space or brackets, and a clicker's PageUp and
// PageDown must turn the lecture's page even after a slider was dragged.
var sliderKeys = map[string]bool{" ": true, "[": true, "]": true, "PageUp": true, "PageDown": true, "?": true}

// bindKeys gives the playback and view keyboard shortcuts (outside form
// fields, but for sliderKeys on a focused slider).
func (a *App) bindKeys(doc js.Value) {
	a.listen(doc, "keydown", func(ev js.Value) {
		target := ev.Get("target")
		tag := strings.ToLower(target.Get("tagName").String())
		slider := tag == "input" && target.Get("type").String() == "range"
		if slider && !sliderKeys[ev.Get("key").String()] {
			return
		}
		if !slider && (tag == "input" || tag == "select" || tag == "textarea" || tag == "button") {
			return
		}
		if ev.Get("ctrlKey").Bool() || ev.Get("metaKey").Bool() || ev.Get("altKey").Bool() {
			return
		}
		var f func()
		switch ev.Get("key").String() {
		case " ", "k":
			f = a.togglePlay
		case ".", "l":
			f = func() { a.tl.playing = false; a.stepOnce() }
		case "+", "=":
			f = func() { a.zoom(1/1.5, a.tl.view.T0+a.tl.view.Span/2) }
		case "-", "_":
			f = func() { a.zoom(1.5, a.tl.view.T0+a.tl.view.Span/2) }
		case "ArrowLeft":
			f = func() { a.pan(-0.25) }
		case "ArrowRight":
			f = func() { a.pan(0.25) }
		case "0", "f":
			f = a.fit
		case "Home":
			f = func() { a.tl.view.T0 = 0; a.setView() }
		case "PageDown", "]":
			f = func() { a.stepChapter(1) }
		case "PageUp", "[":
			f = func() { a.stepChapter(-1) }
		case "?":
			f = func() { a.disp.info = a.tr("leg.keys"); a.render() }
		case "Escape":
			f = func() { a.tl.view.Sel, a.tl.view.SelRow = -1, -1; a.setView(); a.renderStep() }
		default:
			return
		}
		ev.Call("preventDefault")
		a.post(f)
	})
}
