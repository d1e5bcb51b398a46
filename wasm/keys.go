//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
)

// bindKeys gives the playback and view keyboard shortcuts (outside form fields).
func (a *App) bindKeys(doc js.Value) {
	a.listen(doc, "keydown", func(ev js.Value) {
		tag := strings.ToLower(ev.Get("target").Get("tagName").String())
		if tag == "input" || tag == "select" || tag == "textarea" || tag == "button" {
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
			f = func() { a.playing = false; a.stepOnce() }
		case "+", "=":
			f = func() { a.zoom(1/1.5, a.view.T0+a.view.Span/2) }
		case "-", "_":
			f = func() { a.zoom(1.5, a.view.T0+a.view.Span/2) }
		case "ArrowLeft":
			f = func() { a.pan(-0.25) }
		case "ArrowRight":
			f = func() { a.pan(0.25) }
		case "0", "f":
			f = a.fit
		case "Home":
			f = func() { a.view.T0 = 0; a.setView() }
		case "PageDown", "]":
			f = func() { a.stepChapter(1) }
		case "PageUp", "[":
			f = func() { a.stepChapter(-1) }
		case "Escape":
			f = func() { a.view.Sel, a.view.SelRow = -1, -1; a.setView(); a.renderStep() }
		default:
			return
		}
		ev.Call("preventDefault")
		a.post(f)
	})
}
