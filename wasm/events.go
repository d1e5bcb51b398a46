//go:build js && wasm

package main

import (
	"math"
	"net/url"
	"syscall/js"
	"time"

	"servelab/wasm/play"
)

// bindControls binds every panel, the canvas clicks, the uploads and the keys.
func (a *App) bindControls() {
	for _, p := range a.pn.all() {
		p.bind(a.pg, a.emit)
	}
	a.listen(a.pg.own, "click", func(ev js.Value) {
		x, y := ev.Get("clientX").Float(), ev.Get("clientY").Float()
		a.post(func() { a.selectAt(x, y) })
	})
	a.bindUpload()
	a.bindTouch()
	a.bindKeys(a.pg.doc)
	a.bindKeys(a.pg.own)
}

// handle applies one event from a panel (on the Update goroutine).
func (a *App) handle(ev event) {
	switch e := ev.(type) {
	case evSlide:
		a.slide()
		a.handle(evSet(e))
	case evSet:
		a.change(e.key, e.value)
		if a.lec != nil {
			// A table that needs no simulation (demo 1) is shown now,
			// before the timeline re-simulates; another is marked as being
			// computed, with the slider's new value beside it.
			a.lec.settingsChanged(a.s.state)
			a.pn.chapter.render(a.pg, a.ui())
			if a.lec.done {
				a.pg.win.Set("servelabChapterShownMs", a.pg.win.Get("performance").Call("now"))
				a.waitPaint() // the table on screen before the timeline re-simulates
			}
		}
	case evPreset:
		a.applyPreset(e.name)
	case evChapter:
		a.openChapter(e.id, true)
	case evLang:
		if play.HasLang(e.lang) && e.lang != a.disp.lang {
			a.disp.lang = e.lang
			a.s.state.Lang = e.lang
			if p, ok := play.PresetByName(a.s.state.Preset); ok {
				a.disp.info = presetInfo(a.disp.lang, p.Name)
			}
			a.tl.dirty = true // the canvas labels
			a.sched.urlDirty = true
			a.render()
		}
	case evAnswer:
		a.answer(e.opt)
	case evDeselect:
		a.tl.view.Sel, a.tl.view.SelRow = -1, -1
		a.setView()
		a.renderStep()
	case evPlay:
		a.togglePlay()
	case evStep:
		a.tl.playing = false
		a.stepOnce()
	case evZoom:
		a.zoom(e.f, a.tl.view.T0+a.tl.view.Span/2)
	case evFit:
		a.fit()
	case evSpeed:
		a.tl.speed = e.v
		a.sched.urlDirty = true
	case evScrub:
		if a.s.run == nil {
			return
		}
		a.tl.playing = false
		a.tl.view.Cursor = e.frac * a.s.run.End
		if a.tl.view.Cursor < a.tl.view.T0 || a.tl.view.Cursor > a.tl.view.T0+a.tl.view.Span {
			a.tl.view.T0 = math.Max(0, a.tl.view.Cursor-a.tl.view.Span/2)
		}
		a.setView()
	case evExport:
		switch e.kind {
		case "png":
			a.tl.exportReq = true
		case "csv":
			a.download("servelab-figures.csv", "text/csv", a.figuresCSV())
		case "json":
			a.download("servelab-figures.json", "application/json", a.figuresJSON())
		}
	case evClearMeasured:
		a.s.overlays = [2]*play.Overlay{}
		a.disp.info = ""
		a.s.notes = nil
		a.pn.ask = uploadAsk{}
		a.message("", false)
		a.tl.dirty = true
		a.render()
	case evProjector:
		a.disp.projector = !a.disp.projector
		a.sched.urlDirty = true
		a.tl.dirty = true
		a.render()
	case evCopyLink:
		a.writeURL()
		href := a.pg.win.Get("location").Get("href").String()
		if cb := a.pg.win.Get("navigator").Get("clipboard"); cb.Truthy() {
			cb.Call("writeText", href) // a Promise; nothing waits on it
		}
		a.disp.info = play.Tf(a.disp.lang, "msg.copied", href)
		a.render()
	case evCalibrate, evCancelCalibrate, evCancelBig:
		a.handleJobs(ev)
	case evEmbedSnippet:
		a.writeURL()
		a.pn.chapter.snippet = embedSnippet(a.pg.win.Get("location").Get("href").String())
		a.render()
	default:
		a.handleMore(ev)
	}
}

// change applies one setting from a control and re-simulates.
func (a *App) change(key, value string) {
	a.bg.changedAt = a.sched.eventAt
	if a.bg.changedAt.IsZero() {
		a.bg.changedAt = time.Now()
	}
	if a.s.cmp.pair.On && a.s.cmp.editB && !play.Shared(key) {
		// The form edits run B: A keeps its settings.
		a.s.notes = nil
		if note := a.s.cmp.pair.SetB(a.s.state, key, value); note != "" {
			a.s.notes = []string{note}
		}
		a.s.needSim, a.sched.urlDirty = true, true
		return
	}
	oldPolicy := a.s.state.Policy
	if note := a.s.state.Set(key, value); note != "" {
		a.s.notes = []string{note}
	} else {
		a.s.notes = nil
		a.choose(key)
		a.profileSettings(key)
	}
	if key == "policy" && a.s.state.Policy != oldPolicy {
		// The token budget's default differs with chunking on and off
		// (vLLM's max_num_batched_tokens): a new policy starts from its own.
		a.s.state.Budget = 0
	}
	if a.s.state.Preset != "" && (a.lec == nil || !a.lec.owns(key)) {
		// The settings left the preset: its description no longer applies.
		a.s.state.Preset = ""
		a.disp.info = ""
	}
	if (key == "slottft" || key == "slotpot") && a.s.run != nil && !a.s.cmp.pair.On && a.s.simErr == "" {
		// The run does not read its SLO, only its figures do: no re-simulation.
		a.s.run.State.Set(key, value)
		a.refigure()
		return
	}
	a.s.needSim = true
}

// refigure recomputes the figures of the run the page has (its SLO moved,
// the run itself is the same), redraws and restarts the background figures.
func (a *App) refigure() {
	a.bg.figs = a.s.run.Figures()
	a.bg.gen++
	a.bg.rates = nil
	a.tl.dirty, a.sched.urlDirty = true, true
	a.renderFigures()
	a.bg.pending, a.bg.at = true, a.bg.changedAt.Add(bgRest)
}

// applyPreset resets the settings to a preset; its title and description stay on screen.
func (a *App) applyPreset(name string) {
	if name == "" {
		a.s.state.Preset = ""
		a.disp.info = ""
		a.sched.urlDirty = true
		a.render()
		return
	}
	p, ok := play.PresetByName(name)
	if !ok {
		a.s.notes = []string{play.Tf(a.disp.lang, "msg.unknownpreset", name)}
		a.render()
		return
	}
	s := play.DefaultState()
	s.Lang, s.Sess = a.disp.lang, a.s.files
	s.ApplyPreset(p)
	a.s.state = s
	a.s.chosen = nil // the preset's settings, none the student's yet
	// A pair preset opens compare mode with its run B; any other closes it.
	a.s.cmp.pair = play.ParsePair("preset=" + name)
	a.s.cmp.editB = false
	a.s.notes = nil
	a.tl.playing = false
	a.s.needSim = true
	a.disp.info = presetInfo(a.disp.lang, p.Name)
}

// choose notes that key was set from a control or servelab.setState (see session.chosen).
func (a *App) choose(key string) {
	if a.s.chosen == nil {
		a.s.chosen = map[string]bool{}
	}
	a.s.chosen[key] = true
}

// query is the page's URL query: every setting, then the language, the
// chapter and embed mode, so a shared link opens the same view (a profile
// that lives only in this page goes as its constants where it can: see
// play.State.Link, whose note the profile panel shows).
func (a *App) query() string {
	link, _ := a.s.state.Link()
	q := link + "&lang=" + url.QueryEscape(a.disp.lang)
	if pq := a.s.cmp.pair.Query(); pq != "" {
		q += "&" + pq
	}
	if a.disp.projector {
		q += "&proj=1"
	}
	if a.tl.speed != 0.25 {
		q += "&speed=" + play.FormatNum(a.tl.speed)
	}
	if a.lec != nil {
		q += "&chapter=" + url.QueryEscape(a.lec.ch.ID)
	}
	if a.disp.embed {
		q += "&embed=1"
	}
	return q
}

// presetInfo is a preset's title and description, kept on screen.
func presetInfo(lang, name string) string {
	return play.T(lang, "preset."+name+".title") + play.T(lang, "info.sep") + play.T(lang, "preset."+name+".about")
}

// tr is the text for key in the page's language (for the App's own messages).
func (a *App) tr(key string) string { return play.T(a.disp.lang, key) }

// trf formats the text for key in the page's language.
func (a *App) trf(key string, args ...any) string { return play.Tf(a.disp.lang, key, args...) }
