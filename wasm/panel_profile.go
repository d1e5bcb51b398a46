//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strings"
	"syscall/js"

	"servelab/sim"
	"servelab/wasm/play"
)

// profilePanel is the step-model profile picker and every constant of the
// active profile with where it came from (in the assumptions fieldset).
type profilePanel struct {
	choices string // the option list last written, to rebuild it only when it changes
}

func (pp *profilePanel) bind(p *page, emit func(event)) {
	if el := p.el("profile"); !el.IsNull() {
		p.listen(el, "change", func(js.Value) { emit(evSet{"profile", el.Get("value").String()}) })
	}
}

func (pp *profilePanel) render(p *page, u *uiState) {
	choices := u.st.Sess.ProfileChoices()
	if key := strings.Join(choices, "\x00"); key != pp.choices {
		pp.choices = key
		var sb strings.Builder
		for _, n := range choices {
			fmt.Fprintf(&sb, `<option value="%s">%s</option>`, html.EscapeString(n), html.EscapeString(n))
		}
		p.setHTML("profile", sb.String())
	}
	name := u.st.Profile
	if name == "" {
		name = choices[0]
		for _, n := range choices {
			if n == "lecture" {
				name = n
			}
		}
	}
	if el := p.el("profile"); !el.IsNull() && el.Get("value").String() != name {
		el.Set("value", name)
	}
	if u.run == nil {
		p.setHTML("profile-constants", "")
		return
	}
	st := u.state()
	var sb strings.Builder
	fmt.Fprintf(&sb, `<table class="consts"><caption>%s</caption><tr><th scope="col">%s</th><th scope="col">%s</th><th scope="col">%s</th></tr>`,
		html.EscapeString(u.trf("prof.caption", name, u.run.Step.GPU.Name)), u.tr("prof.col.name"), u.tr("prof.col.value"), u.tr("prof.col.source"))
	for _, c := range play.StepConsts(st, u.run.Step) {
		fmt.Fprintf(&sb, `<tr data-const="%s"><th scope="row" title="%s">%s</th><td>%s</td><td>%s</td></tr>`, c.Name,
			html.EscapeString(c.Meaning), c.Name, constValue(c), html.EscapeString(constSource(u, c)))
	}
	sb.WriteString(`</table>`)
	fitted, note := play.GPUNote(st)
	key := "prof.gpu.fitted"
	if !fitted {
		key = "prof.gpu.unfitted"
	}
	fmt.Fprintf(&sb, `<p class="small" id="profile-gpu-note">%s</p>`, html.EscapeString(u.trf(key, u.st.GPU, note)))
	if _, link := st.Link(); link != "" {
		fmt.Fprintf(&sb, `<p class="small" id="profile-link-note">%s</p>`, html.EscapeString(link))
	}
	p.setHTML("profile-constants", sb.String())
}

// state is the page's state in the page's language (the profile's texts
// are said in it).
func (u *uiState) state() play.State {
	st := *u.st
	st.Lang = u.lang
	return st
}

// constValue writes a constant in its unit (seconds as ms).
func constValue(c play.Const) string {
	if c.Unit == "s" {
		return fmt.Sprintf("%.4g ms", c.Value*1e3)
	}
	return fmt.Sprintf("%.4g", c.Value)
}

// constSource is where a constant came from, in the page's words when it
// is the page's own.
func constSource(u *uiState, c play.Const) string {
	switch {
	case c.ByUser:
		return u.tr("prof.src.user")
	case c.Source == "":
		return u.tr("prof.src.none")
	}
	return c.Source
}

// stepConstsHTML lists, for the step explanation, the constants the step
// model used and their sources.
func stepConstsHTML(u *uiState) string {
	if u.run == nil {
		return ""
	}
	name := u.st.Profile
	if name == "" {
		name = "lecture"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<details class="step-consts"><summary>%s</summary><ul>`, html.EscapeString(u.trf("step.consts", name)))
	for _, c := range play.StepConsts(u.state(), u.run.Step) {
		fmt.Fprintf(&sb, `<li><b>%s</b> = %s — %s</li>`, c.Name, constValue(c), html.EscapeString(constSource(u, c)))
	}
	sb.WriteString(`</ul></details>`)
	return sb.String()
}

// loadProfileFile takes an uploaded file that is a profile JSON (it has
// "physics" and "constants"): it becomes pickable and active. It reports
// whether the file was a profile (so the caller does not read it as a run).
func (a *App) loadProfileFile(name string, data []byte) bool {
	head := data
	if len(head) > 1<<16 {
		return false // profiles are small; a big file is a run
	}
	s := string(head)
	if !strings.Contains(s, `"physics"`) || !strings.Contains(s, `"constants"`) || strings.Contains(s, `"summary"`) {
		return false
	}
	p, err := sim.ParseProfile(data)
	if err == nil {
		err = a.s.files.AddProfile(p)
	}
	if err != nil {
		a.message(play.Tf(a.disp.lang, "prof.bad", name, err.Error()), true)
		return true
	}
	a.change("profile", p.Name)
	a.disp.info = play.Tf(a.disp.lang, "prof.loaded", p.Name, name)
	a.render()
	return true
}

// profileSettings puts the profile's constants on the sliders after the
// profile or (under a profile other than the lecture's) the GPU changed.
func (a *App) profileSettings(key string) {
	if key == "profile" || key == "gpu" {
		play.ApplyProfile(&a.s.state)
	}
}
