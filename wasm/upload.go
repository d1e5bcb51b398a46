//go:build js && wasm

package main

import (
	"math"
	"servelab/sim/results"
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
		for i := 0; i < n && i < 3; i++ {
			f := files.Index(i)
			name := f.Get("name").String()
			if size := f.Get("size").Float(); size > results.MaxBytes {
				a.message(play.Tf(a.disp.lang, "up.toobig", name, size/1e6, results.MaxBytes>>20), true)
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
				a.message(play.Tf(a.disp.lang, "up.unreadable", name, js.Global().Get("String").Invoke(args[0]).String()), true)
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
	for _, target := range []js.Value{zone, a.pg.own} {
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

// loadMeasured reads an uploaded file: a step-model profile joins the
// profile picker; a Hugging Face config.json joins the model picker and runs;
// a trace (CSV or JSON Lines) becomes the workload; a measured run is laid
// over the timeline (addOverlay).
func (a *App) loadMeasured(name string, data []byte) {
	if a.loadProfileFile(name, data) {
		return
	}
	if play.IsHFConfig(data) {
		m, err := a.s.files.AddModel(name, data)
		if err != nil {
			a.message(play.Tf(a.disp.lang, "up.badmodel", name, err.Error()), true)
			return
		}
		a.pn.controls.models = nil // refill the picker
		a.change("model", m)
		a.disp.info = play.Tf(a.disp.lang, "up.model", name, m)
		a.render()
		return
	}
	if play.IsTrace(name, data) {
		n, err := a.s.files.SetTrace(name, data)
		if err != nil {
			a.message(play.Tf(a.disp.lang, "up.badtrace", err.Error()), true)
			return
		}
		a.change("workload", "trace")
		a.disp.info = play.Tf(a.disp.lang, "up.trace", name, n)
		a.render()
		return
	}
	o, err := play.ParseMeasured(name, data)
	if err != nil {
		a.message(play.Tf(a.disp.lang, "up.bad", play.SayError(a.disp.lang, err)), true)
		return
	}
	a.addOverlay(name, o)
}

// addOverlay lays a parsed run over the timeline: the first as A, a second
// as B, and a third asks which it replaces. A tool's summary file dropped
// with its per-request file joins run A instead.
func (a *App) addOverlay(name string, o *play.Overlay) {
	if a.s.overlays[0].Absorb(o) {
		a.disp.info = play.Tf(a.disp.lang, "up.absorbed", name)
		a.tl.dirty = true
		a.render()
		return
	}
	switch {
	case a.s.overlays[0] == nil:
		a.placeOverlay(o, 0)
	case a.s.overlays[1] == nil:
		a.placeOverlay(o, 1)
	default:
		a.pn.ask.pending = o // a third file: ask which run it replaces
		a.render()
	}
}

// placeOverlay lays o over the timeline as run A (slot 0: the simulation
// takes its workload) or B, and offers the file's scheduler when its label
// names another than the page's.
func (a *App) placeOverlay(o *play.Overlay, slot int) {
	if slot == 0 {
		a.s.state.Lang = a.disp.lang // ApplyConfig's notes in the page's language
		a.s.notes = o.ApplyConfig(&a.s.state)
		a.s.state.Preset = ""
		a.s.needSim = true
	}
	o.Origin = math.Max(0, a.s.state.Lab.InjectAfter)
	a.s.overlays[slot] = o
	if slot == 1 && a.s.cmp.pair.On {
		// Compare mode: B simulates this run, beside A's own.
		a.s.notes = append(a.s.notes, a.s.cmp.pair.TakeOverlay(a.s.state, o)...)
		a.s.needSim, a.sched.urlDirty = true, true
	}
	a.pn.ask.offerPolicy = ""
	if pol, budget := o.Suggests(); pol != "" && (pol != a.s.state.Policy || (pol == "chunked" && budget > 0 && budget != a.s.state.EffectiveBudget())) {
		a.pn.ask.offerName, a.pn.ask.offerPolicy, a.pn.ask.offerBudget = o.Name, pol, budget
	}
	a.tl.dirty = true
	// The notice stays on screen (the re-simulation it starts must not clear it).
	a.disp.info = play.Tf(a.disp.lang, "up.overlaid", o.Name, "AB"[slot:slot+1], o.KindIn(a.disp.lang))
	a.render()
}
