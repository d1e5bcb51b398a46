//go:build js && wasm

package main

import (
	"syscall/js"

	"servelab/wasm/play"
)

// A panel is one part of the page around the timeline. It binds its DOM
// listeners once, turning what the user does into events for the App's
// loop, and renders itself from a uiState; it holds no simulation state.
// Adding a panel: a type in its own file, listed in App.panels.
type panel interface {
	// bind wires the panel's listeners; emit queues an event for the loop.
	bind(p *page, emit func(event))
	// render shows u on the page.
	render(p *page, u *uiState)
}

// event is something the user did on a panel; App.handle applies it.
type event interface{}

// The events panels emit.
type (
	evSet           struct{ key, value string } // a setting from a control
	evSlide         struct{ key, value string } // a setting from a slider being moved
	evPreset        struct{ name string }
	evChapter       struct{ id string } // "" leaves lecture mode
	evLang          struct{ lang string }
	evPlay          struct{}
	evStep          struct{}
	evZoom          struct{ f float64 }
	evFit           struct{}
	evSpeed         struct{ v float64 }
	evScrub         struct{ frac float64 } // 0..1 of the run
	evExport        struct{ kind string }  // png, csv, json
	evClearMeasured struct{}
	evProjector     struct{}
	evCopyLink      struct{}
	evEmbedSnippet  struct{}
	evCompare       struct{ on bool }   // compare mode on or off
	evEditB         struct{ b bool }    // the form edits run B (else A)
	evSplit         struct{ gpus int }  // search the best prefill:decode split for this many GPUs
	evSplitUse      struct{}            // take the split found
	evResetB        struct{}            // run B back to A's settings
	evReplace       struct{ slot int }  // the third file replaces run A (0) or B (1); -1 drops it
	evSwitchConfig  struct{ keep bool } // take the uploaded file's scheduler (keep: leave the page's)
)

// uiState is what the panels read: a view of the App's state for one render.
type uiState struct {
	lang     string
	st       *play.State
	run      *play.SimRun
	simErr   string
	figs     play.Figures
	rates    []play.RatePoint
	oldRates []play.RatePoint // earlier settings' points, shown dimmed while rates are computed
	overlays [2]*play.Overlay
	notes    []string
	info     string // the preset's or the last upload's description
	playing  bool
	cursor   float64
	// the step to explain: hovered, else selected (row, index); -1 none
	stepRow, step int
	projector     bool
	embed         bool
	lec           *lectureView
	// compare mode, and which run's step to explain (0 A, 1 B)
	cmp      *compareState
	stepPane int
	speed    float64
	ask      *uploadAsk
	split    *splitState
	calib    *calibration // panel_calibrate.go
	big      *bigUpload   // bigupload.go
}

// tr is the text for key in the page's language.
func (u *uiState) tr(key string) string { return play.T(u.lang, key) }

// trf formats the text for key with args.
func (u *uiState) trf(key string, args ...any) string { return play.Tf(u.lang, key, args...) }

// page is the controls document the panels draw into.
type page struct {
	win   js.Value // the controls page's window (the iframe's parent)
	doc   js.Value // its document
	own   js.Value // the iframe's own document (the canvas and its labels)
	guard func(where string, f func())
	last  map[string]string // what setHTML last wrote, by id
}

// el is the element with id, or null. It asks the document directly: the
// dom package's wrapper tries dozens of constructors per element (none
// match across the iframe), which made a render of the form take tens of ms.
func (p *page) el(id string) js.Value {
	if p == nil || p.doc.IsUndefined() || p.doc.IsNull() {
		return js.Null()
	}
	return p.doc.Call("getElementById", id)
}

// listen adds a DOM listener whose body runs guarded; it never blocks.
func (p *page) listen(target js.Value, name string, f func(ev js.Value)) {
	if target.IsNull() || target.IsUndefined() {
		return
	}
	target.Call("addEventListener", name, js.FuncOf(func(this js.Value, args []js.Value) any {
		p.guard(name+" handler", func() {
			var ev js.Value
			if len(args) > 0 {
				ev = args[0]
			}
			f(ev)
		})
		return nil
	}))
}

// setText sets an element's text unless it is already that (missing
// elements are ignored): a rewrite of the same text is still a change the
// browser lays out and paints again, and a render rewrites every figure.
func (p *page) setText(id, s string) {
	if el := p.el(id); !el.IsNull() {
		setProp(el, "textContent", s)
	}
}

// setProp sets a property of el (text, hidden, className, checked)
// unless it already has that value, for the reason setText gives.
func setProp(el js.Value, name string, v any) {
	if !el.Get(name).Equal(js.ValueOf(v)) {
		el.Set(name, v)
	}
}

// setAttr is setProp for an attribute (aria-pressed).
func setAttr(el js.Value, name, v string) {
	if cur := el.Call("getAttribute", name); cur.IsNull() || cur.String() != v {
		el.Call("setAttribute", name, v)
	}
}

// setHTML sets an element's markup unless it is already that, so focus
// and hover inside it survive a render that changed nothing.
func (p *page) setHTML(id, s string) {
	if p.last == nil {
		p.last = map[string]string{}
	}
	if old, ok := p.last[id]; ok && old == s {
		return
	}
	if el := p.el(id); !el.IsNull() {
		el.Set("innerHTML", s)
		p.last[id] = s
	}
}

// onClick emits ev when the element is clicked.
func (p *page) onClick(id string, emit func(event), ev event) {
	p.listen(p.el(id), "click", func(js.Value) { emit(ev) })
}
