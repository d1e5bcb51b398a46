//go:build js && wasm

package main

import (
	"math"
	"servelab/sim"
	"servelab/wasm/play"
	"sync"
	"syscall/js"
)

// bindUpload wires the file button and drag-and-drop: the first file is run A, a second run B.
func (a *App) bindUpload() {
	read := func(files js.Value) {
		n := files.Length()
		if n == 0 {
			return
		}
		for i := 0; i < n && i < 2; i++ {
			f := files.Index(i)
			name := f.Get("name").String()
			if size := f.Get("size").Float(); size > sim.MaxMeasuredBytes {
				a.message(play.Tf(a.lang, "up.toobig", name, size/1e6, sim.MaxMeasuredBytes>>20), true)
				continue
			}
			if size := f.Get("size").Float(); size > bigUploadBytes {
				a.post(func() { a.loadBig(f, name, size) })
				continue
			}
			var then, catch js.Func
			var once sync.Once
			release := func() { once.Do(func() { then.Release(); catch.Release() }) }
			then = a.jsFunc("reading "+name, release, func(args []js.Value) {
				text := args[0].String()
				a.post(func() { a.loadMeasured(name, []byte(text)) })
				release()
			})
			catch = a.jsFunc("reading "+name, release, func(args []js.Value) {
				a.message(play.Tf(a.lang, "up.unreadable", name, js.Global().Get("String").Invoke(args[0]).String()), true)
				release()
			})
			f.Call("text").Call("then", then).Call("catch", catch)
		}
	}
	if el := a.el("upload"); !el.IsNull() {
		a.listen(el, "change", func(js.Value) {
			read(el.Get("files"))
			el.Set("value", "")
		})
	}
	// Drops land on the controls page's stage or, over the timeline, in the frame's own document.
	zone := a.el("stage")
	for _, target := range []js.Value{zone, a.own} {
		a.listen(target, "dragover", func(ev js.Value) {
			ev.Call("preventDefault")
			zone.Get("classList").Call("add", "drop")
		})
		a.listen(target, "dragleave", func(js.Value) { zone.Get("classList").Call("remove", "drop") })
		a.listen(target, "drop", func(ev js.Value) {
			ev.Call("preventDefault")
			ev.Call("stopPropagation")
			zone.Get("classList").Call("remove", "drop")
			read(ev.Get("dataTransfer").Get("files"))
		})
	}
}

// loadMeasured parses an uploaded file, configures the simulation from it
// and lays it over the timeline: the first as A, a later one as B.
func (a *App) loadMeasured(name string, data []byte) {
	if a.loadProfileFile(name, data) {
		return
	}
	o, err := play.ParseMeasured(name, data)
	if err != nil {
		a.message(play.Tf(a.lang, "up.bad", err.Error()), true)
		return
	}
	a.placeOverlay(name, o)
}

// placeOverlay lays a parsed run over the timeline: the first as A, a later one as B.
func (a *App) placeOverlay(name string, o *play.Overlay) {
	if a.overlays[0].Absorb(o) { // a tool's summary file dropped with its per-request file
		a.info = play.Tf(a.lang, "up.absorbed", name)
		a.dirty = true
		a.render()
		return
	}
	slot := 0
	if a.overlays[0] != nil && a.overlays[1] == nil {
		slot = 1
	} else if a.overlays[0] != nil {
		a.overlays = [2]*play.Overlay{}
	}
	if slot == 0 {
		a.state.Lang = a.lang
		a.notes = o.ApplyConfig(&a.state)
		a.state.Preset = ""
		a.needSim = true
	}
	o.Origin = math.Max(0, a.state.F("inject"))
	a.overlays[slot] = o
	a.dirty = true
	// The notice stays on screen (the re-simulation it starts must not clear it).
	a.info = play.Tf(a.lang, "up.overlaid", name, "AB"[slot:slot+1], o.Kind)
	a.render()
}
