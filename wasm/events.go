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
	a.listen(a.own, "click", func(ev js.Value) {
		x, y := ev.Get("clientX").Float(), ev.Get("clientY").Float()
		a.post(func() { a.selectAt(x, y) })
	})
	a.bindUpload()
	a.bindTouch()
	a.bindKeys(a.doc)
	a.bindKeys(a.own)
}

// handle applies one event from a panel (on the Update goroutine).
func (a *App) handle(ev event) {
	switch e := ev.(type) {
	case evSet:
		a.change(e.key, e.value)
		if a.lec != nil {
			// A table that needs no simulation (demo 1) is shown now,
			// before the timeline re-simulates; another is marked as being
			// computed, with the slider's new value beside it.
			a.lec.settingsChanged(a.state)
			a.pn.chapter.render(a.pg, a.ui())
			if a.lec.done {
				a.win.Set("servelabChapterShownMs", a.win.Get("performance").Call("now"))
			}
		}
	case evPreset:
		a.applyPreset(e.name)
	case evChapter:
		a.openChapter(e.id, true)
	case evLang:
		if play.HasLang(e.lang) && e.lang != a.lang {
			a.lang = e.lang
			a.state.Lang = e.lang
			if p, ok := play.PresetByName(a.state.Preset); ok {
				a.info = presetInfo(a.lang, p.Name)
			}
			a.dirty = true // the canvas labels
			a.urlDirty = true
			a.render()
		}
	case evAnswer:
		a.answer(e.opt)
	case evDeselect:
		a.view.Sel, a.view.SelRow = -1, -1
		a.setView()
		a.renderStep()
	case evPlay:
		a.togglePlay()
	case evStep:
		a.playing = false
		a.stepOnce()
	case evZoom:
		a.zoom(e.f, a.view.T0+a.view.Span/2)
	case evFit:
		a.fit()
	case evSpeed:
		a.speed = e.v
		a.urlDirty = true
	case evScrub:
		if a.run == nil {
			return
		}
		a.playing = false
		a.view.Cursor = e.frac * a.run.End
		if a.view.Cursor < a.view.T0 || a.view.Cursor > a.view.T0+a.view.Span {
			a.view.T0 = math.Max(0, a.view.Cursor-a.view.Span/2)
		}
		a.setView()
	case evExport:
		switch e.kind {
		case "png":
			a.exportReq = true
		case "csv":
			a.download("servelab-figures.csv", "text/csv", a.figuresCSV())
		case "json":
			a.download("servelab-figures.json", "application/json", a.figuresJSON())
		}
	case evClearMeasured:
		a.overlays = [2]*play.Overlay{}
		a.info = ""
		a.notes = nil
		a.ask = uploadAsk{}
		a.message("", false)
		a.dirty = true
		a.render()
	case evProjector:
		a.projector = !a.projector
		a.urlDirty = true
		a.dirty = true
		a.render()
	case evCopyLink:
		a.writeURL()
		href := a.win.Get("location").Get("href").String()
		if cb := a.win.Get("navigator").Get("clipboard"); cb.Truthy() {
			cb.Call("writeText", href) // a Promise; nothing waits on it
		}
		a.info = play.Tf(a.lang, "msg.copied", href)
		a.render()
	case evCalibrate, evCancelCalibrate, evCancelBig:
		a.handleJobs(ev)
	case evEmbedSnippet:
		a.writeURL()
		a.pn.chapter.snippet = embedSnippet(a.win.Get("location").Get("href").String())
		a.render()
	default:
		a.handleMore(ev)
	}
}

// change applies one setting from a control and re-simulates.
func (a *App) change(key, value string) {
	a.changedAt = a.eventAt
	if a.changedAt.IsZero() {
		a.changedAt = time.Now()
	}
	if a.cmp.pair.On && a.cmp.editB && !play.Shared(key) {
		// The form edits run B: A keeps its settings.
		a.notes = nil
		if note := a.cmp.pair.SetB(a.state, key, value); note != "" {
			a.notes = []string{note}
		}
		a.needSim, a.urlDirty = true, true
		return
	}
	oldPolicy := a.state.Policy
	if note := a.state.Set(key, value); note != "" {
		a.notes = []string{note}
	} else {
		a.notes = nil
		a.profileSettings(key)
	}
	if key == "policy" && a.state.Policy != oldPolicy {
		// The token budget's default differs with chunking on and off
		// (vLLM's max_num_batched_tokens): a new policy starts from its own.
		a.state.Budget = 0
	}
	if a.state.Preset != "" && (a.lec == nil || !a.lec.owns(key)) {
		// The settings left the preset: its description no longer applies.
		a.state.Preset = ""
		a.info = ""
	}
	if (key == "slottft" || key == "slotpot") && a.run != nil && !a.cmp.pair.On && a.simErr == "" {
		// The run does not read its SLO, only its figures do: no re-simulation.
		a.run.State.Set(key, value)
		a.refigure()
		return
	}
	a.needSim = true
}

// refigure recomputes the figures of the run the page has (its SLO moved,
// the run itself is the same), redraws and restarts the background figures.
func (a *App) refigure() {
	a.figs = a.run.Figures()
	a.figGen++
	a.rates = nil
	a.dirty, a.urlDirty = true, true
	a.renderFigures()
	a.bgPending, a.bgAt = true, a.changedAt.Add(bgRest)
}

// applyPreset resets the settings to a preset; its title and description stay on screen.
func (a *App) applyPreset(name string) {
	if name == "" {
		a.state.Preset = ""
		a.info = ""
		a.urlDirty = true
		a.render()
		return
	}
	p, ok := play.PresetByName(name)
	if !ok {
		a.notes = []string{play.Tf(a.lang, "msg.unknownpreset", name)}
		a.render()
		return
	}
	s := play.DefaultState()
	s.Lang, s.Sess = a.lang, a.sess
	s.ApplyPreset(p)
	a.state = s
	// A pair preset opens compare mode with its run B; any other closes it.
	a.cmp.pair = play.ParsePair("preset=" + name)
	a.cmp.editB = false
	a.notes = nil
	a.playing = false
	a.needSim = true
	a.info = presetInfo(a.lang, p.Name)
}

// query is the page's URL query: every setting, then the language, the
// chapter and embed mode, so a shared link opens the same view (a profile
// that lives only in this page goes as its constants where it can: see
// play.State.Link, whose note the profile panel shows).
func (a *App) query() string {
	link, _ := a.state.Link()
	q := link + "&lang=" + url.QueryEscape(a.lang)
	if pq := a.cmp.pair.Query(); pq != "" {
		q += "&" + pq
	}
	if a.projector {
		q += "&proj=1"
	}
	if a.speed != 0.25 {
		q += "&speed=" + play.FormatNum(a.speed)
	}
	if a.lec != nil {
		q += "&chapter=" + url.QueryEscape(a.lec.ch.ID)
	}
	if a.embed {
		q += "&embed=1"
	}
	return q
}

// presetInfo is a preset's title and description, kept on screen.
func presetInfo(lang, name string) string {
	return play.T(lang, "preset."+name+".title") + play.T(lang, "info.sep") + play.T(lang, "preset."+name+".about")
}

// tr is the text for key in the page's language (for the App's own messages).
func (a *App) tr(key string) string { return play.T(a.lang, key) }

// trf formats the text for key in the page's language.
func (a *App) trf(key string, args ...any) string { return play.Tf(a.lang, key, args...) }
