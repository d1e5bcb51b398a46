//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"syscall/js"

	"servelab/hwspecs"
	"servelab/sim/scenario"
	"servelab/wasm/play"
)

// controlsPanel is the settings form, the preset menu and the playback bar.
type controlsPanel struct {
	lang   string   // the language the menus were filled in
	models []string // the model picker's entries (nil: refill it)
	// more: in a chapter, the expert form is open ("More settings"); a
	// chapter shows only the settings its lesson moves until it is.
	more bool
}

func (c *controlsPanel) bind(p *page, emit func(event)) {
	if el := p.el("more-settings"); !el.IsNull() {
		p.listen(el, "click", func(js.Value) {
			c.more = !c.more
			p.doc.Get("body").Get("classList").Call("toggle", "more", c.more)
			c.renderMore(p)
		})
	}
	fill := func(id string, names []string) {
		var sb strings.Builder
		for _, n := range names {
			fmt.Fprintf(&sb, `<option value="%s">%s</option>`, html.EscapeString(n), html.EscapeString(n))
		}
		p.setHTML(id, sb.String())
	}
	c.models = nil // render fills the model picker (uploaded models join it)
	fill("gpu", hwspecs.Names())
	// The schedulers and workloads the experiment knows, named in the page's language (panel_lang).
	for id, names := range map[string][]string{"policy": scenario.Policies, "workload": scenario.Workloads} {
		var sb strings.Builder
		for _, n := range names {
			fmt.Fprintf(&sb, `<option value="%s" data-i18n="%s.%s">%s</option>`, html.EscapeString(n), id, html.EscapeString(n), html.EscapeString(n))
		}
		p.setHTML(id, sb.String())
	}
	for _, c := range play.Controls() {
		key := c.URL
		el := p.el(key)
		if el.IsNull() {
			continue
		}
		// The knob table gives every control its range (the HTML's are fallbacks for a page without wasm).
		t := el.Get("type").String()
		if t == "range" || t == "number" {
			lo, hi, step := c.SliderRange()
			if t == "number" {
				lo, hi = c.Min*c.Scale(), c.Max*c.Scale()
			}
			setAttr(el, "min", play.FormatNum(lo))
			setAttr(el, "max", play.FormatNum(hi))
			setAttr(el, "step", play.FormatNum(step))
		}
		if t == "checkbox" {
			p.listen(el, "change", func(js.Value) {
				v := 0.0
				if el.Get("checked").Bool() {
					v = 1
				}
				emit(evSet{key, play.FormatNum(v)})
			})
			continue
		}
		slider := t == "range"
		p.listen(el, "input", func(js.Value) {
			if slider {
				emit(evSlide{key, el.Get("value").String()})
				return
			}
			emit(evSet{key, el.Get("value").String()})
		})
	}
	for _, key := range []string{"workload", "policy", "model", "gpu", "lendist"} {
		el, k := p.el(key), key
		p.listen(el, "change", func(js.Value) { emit(evSet{k, el.Get("value").String()}) })
	}
	if el := p.el("preset"); !el.IsNull() {
		p.listen(el, "change", func(js.Value) { emit(evPreset{el.Get("value").String()}) })
	}
	p.onClick("play", emit, evPlay{})
	p.onClick("step", emit, evStep{})
	p.onClick("zoom-in", emit, evZoom{1 / 1.5})
	p.onClick("zoom-out", emit, evZoom{1.5})
	p.onClick("zoom-fit", emit, evFit{})
	p.onClick("projector", emit, evProjector{})
	p.onClick("copy-link", emit, evCopyLink{})
	if el := p.el("speed"); !el.IsNull() {
		p.listen(el, "change", func(js.Value) {
			if v, err := strconv.ParseFloat(el.Get("value").String(), 64); err == nil && v > 0 {
				emit(evSpeed{v})
			}
		})
	}
	if el := p.el("scrub"); !el.IsNull() {
		p.listen(el, "input", func(js.Value) {
			v, _ := strconv.ParseFloat(el.Get("value").String(), 64)
			emit(evScrub{v / 1000})
		})
	}
}

// render writes the state back into every control (after a preset, a link or the API).
func (c *controlsPanel) render(p *page, u *uiState) {
	st := u.st
	if u.cmp != nil && u.cmp.pair.On && u.cmp.editB {
		st = &u.cmp.stateB // the form edits run B
	}
	if names := u.st.Sess.ModelNames(); len(names) != len(c.models) {
		c.models = names
		var sb strings.Builder
		for _, n := range names {
			fmt.Fprintf(&sb, `<option value="%s">%s</option>`, html.EscapeString(n), html.EscapeString(n))
		}
		p.setHTML("model", sb.String())
	}
	if c.lang != u.lang {
		c.lang = u.lang
		var sb strings.Builder
		sb.WriteString(`<option value="">` + html.EscapeString(u.tr("preset.custom")) + `</option>`)
		for _, pr := range play.Presets {
			fmt.Fprintf(&sb, `<option value="%s">%s</option>`, pr.Name, html.EscapeString(u.tr("preset."+pr.Name+".title")))
		}
		p.setHTML("preset", sb.String())
	}
	for _, c := range play.Controls() {
		el := p.el(c.URL)
		if el.IsNull() {
			continue
		}
		v := c.Value(*st)
		if el.Get("type").String() == "checkbox" {
			el.Set("checked", v != 0)
		} else if el.Get("value").String() != play.FormatNum(v) {
			el.Set("value", play.FormatNum(v))
		}
		txt := play.FormatNum(v)
		if c.Unit != "" {
			txt += " " + u.tr("unit."+c.Unit)
		}
		p.setText(c.URL+"-out", txt)
	}
	for key, v := range map[string]string{"workload": st.Workload, "policy": st.Policy, "model": st.Model, "gpu": st.GPU, "preset": st.Preset, "lendist": st.LengthDist} {
		if el := p.el(key); !el.IsNull() {
			el.Set("value", v)
		}
	}
	// Show only the knobs that apply.
	cls := []string{"wl-" + st.Workload, "pol-" + st.Policy}
	if u.projector {
		cls = append(cls, "projector")
	}
	if st.Ideal {
		cls = append(cls, "ideal")
	}
	cls = append(cls, "ld-"+st.LengthDist)
	if u.cmp != nil && u.cmp.pair.On {
		cls = append(cls, "compare")
		if u.cmp.editB {
			cls = append(cls, "edit-b")
		}
	}
	if u.embed {
		cls = append(cls, "embed")
	}
	if u.lec != nil {
		cls = append(cls, "lecture", "layout-"+u.lec.ch.Layout)
	}
	if c.more {
		cls = append(cls, "more")
	}
	c.renderMore(p)
	setProp(p.doc.Get("body"), "className", strings.Join(cls, " "))
	if el := p.el("projector"); !el.IsNull() {
		setAttr(el, "aria-pressed", strconv.FormatBool(u.projector))
	}
	if el := p.el("speed"); !el.IsNull() && u.speed > 0 {
		el.Set("value", play.FormatNum(u.speed))
	}
	c.renderPlayback(p, u)
}

// renderMore names the "More settings" button for what a click does.
func (c *controlsPanel) renderMore(p *page) {
	if el := p.el("more-settings"); !el.IsNull() {
		key := "ctl.more"
		if c.more {
			key = "ctl.less"
		}
		setProp(el, "textContent", play.T(c.lang, key))
		setAttr(el, "aria-expanded", strconv.FormatBool(c.more))
	}
}

// renderPlayback is the play button and the position slider.
func (c *controlsPanel) renderPlayback(p *page, u *uiState) {
	if el := p.el("play"); !el.IsNull() {
		txt := u.tr("play.play")
		if u.playing {
			txt = u.tr("play.pause")
		}
		setProp(el, "textContent", txt)
		setAttr(el, "aria-pressed", strconv.FormatBool(u.playing))
	}
	if el := p.el("scrub"); !el.IsNull() && u.run != nil && u.run.End > 0 {
		cur := u.cursor
		if cur < 0 {
			cur = u.run.End
		}
		el.Set("value", play.FormatNum(math.Round(cur/u.run.End*1000)))
	}
	txt := u.tr("play.end")
	if u.cursor >= 0 {
		txt = play.FormatDur(u.cursor)
	}
	p.setText("scrub-out", txt)
}
