//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"html"
	"strings"
	"sync/atomic"
	"syscall/js"
	"time"

	"servelab/sim"
	"servelab/sim/calibrate"
	"servelab/sim/lab"
	"servelab/wasm/play"
)

// calibration is the "Calibrate from this measurement" job: the fit runs
// in a goroutine that yields to the browser between its simulations (Go's
// wasm has one thread: a fit of ~400 lab re-runs would otherwise hold the
// page for seconds), reports progress and stops on Cancel.
type calibration struct {
	running bool
	cancel  *atomic.Bool
	source  string
	base    string // the base profile's name
	sims    int
	started time.Time
	cal     *calibrate.Calibration
	prof    string // the calibrated profile's name
	err     string
}

// calibratePanel is the calibrate button, its progress and Cancel, and the
// fit's before/after table.
type calibratePanel struct{}

// The panel's events.
type (
	evCalibrate       struct{}
	evCancelCalibrate struct{}
)

func (calibratePanel) bind(p *page, emit func(event)) {
	// The box is re-rendered, so clicks are taken on it by the target's id.
	p.listen(p.el("calibrate-box"), "click", func(ev js.Value) {
		switch ev.Get("target").Get("id").String() {
		case "calibrate":
			emit(evCalibrate{})
		case "calibrate-cancel":
			emit(evCancelCalibrate{})
		}
	})
}

func (calibratePanel) render(p *page, u *uiState) {
	c := u.calib
	o := u.overlays[0]
	if o == nil || c == nil {
		p.setHTML("calibrate-box", "")
		return
	}
	var sb strings.Builder
	if c.running {
		fmt.Fprintf(&sb, `<p class="small" id="calibrate-progress" aria-live="polite"><progress></progress> %s</p><button id="calibrate-cancel" type="button">%s</button>`,
			html.EscapeString(u.trf("cal.running", c.source, c.sims, time.Since(c.started).Seconds())), html.EscapeString(u.tr("cal.cancel")))
		p.setHTML("calibrate-box", sb.String())
		return
	}
	if calibratable(o) {
		fmt.Fprintf(&sb, `<button id="calibrate" type="button">%s</button>`, html.EscapeString(u.tr("cal.btn")))
	} else {
		fmt.Fprintf(&sb, `<p class="small">%s</p>`, html.EscapeString(u.tr("cal.needs")))
	}
	if c.err != "" {
		fmt.Fprintf(&sb, `<p class="small err">%s</p>`, html.EscapeString(c.err))
	}
	if cal := c.cal; cal != nil && c.source == o.Name { // the fit of this run A
		fmt.Fprintf(&sb, `<table id="calibrate-table"><caption>%s</caption><tr><th scope="col">%s</th><th scope="col">%s</th><th scope="col">%s</th><th scope="col">%s</th></tr>`,
			html.EscapeString(u.trf("cal.caption", c.source, c.base)), u.tr("cal.col.fig"), u.tr("cal.col.measured"), u.tr("cal.col.before"), u.tr("cal.col.after"))
		for _, t := range cal.Targets {
			fmt.Fprintf(&sb, `<tr><th scope="row">%s</th><td>%s ms</td><td>%s ms</td><td>%s ms</td></tr>`, html.EscapeString(play.Say(u.lang, t.Key)), ms(t.Measured), ms(t.Base), ms(t.Fitted))
		}
		fmt.Fprintf(&sb, `</table><p class="small">%s</p><ul class="small" id="calibrate-consts">`, html.EscapeString(u.tr("cal.consts")))
		for _, f := range cal.Constants {
			if f.Identified {
				fmt.Fprintf(&sb, `<li>%s</li>`, html.EscapeString(u.trf("cal.const.v", f.Name, fmtConst(f.Name, f.Base), fmtConst(f.Name, f.Value), 100*f.RelStdErr)))
			} else {
				fmt.Fprintf(&sb, `<li>%s</li>`, html.EscapeString(u.trf("cal.const.kept", f.Name, fmtConst(f.Name, f.Value), keptNote(u.lang, f))))
			}
		}
		for _, f := range cal.Constants {
			if !f.Identified {
				fmt.Fprintf(&sb, `<li>%s</li>`, html.EscapeString(u.trf("cal.notid", u.trf("cal.notid.item", f.Name, play.Say(u.lang, f.Why)))))
			}
		}
		sb.WriteString(`</ul>`)
	}
	p.setHTML("calibrate-box", sb.String())
}

// keptNote is why a constant kept its base value, in lang ("kept at the
// base value: ..."; the fit's own English where it gave no reason's key).
func keptNote(lang string, f calibrate.FittedConstant) string {
	if f.Why.Key == "" {
		return f.Note
	}
	return play.Say(lang, sim.Note{Key: "cal.kept", Args: []any{f.Why}, Text: f.Note})
}

// fmtConst writes a fitted constant (overhead-like ones in ms).
func fmtConst(name string, v float64) string {
	for _, info := range sim.ConstantInfos() {
		if info.Name == name && info.Unit == "s" {
			return fmt.Sprintf("%.4g ms", v*1e3)
		}
	}
	return fmt.Sprintf("%.4g", v)
}

// calibratable reports whether run A can be calibrated against: a lab run
// with its config, or a vLLM bench file with per-request arrays.
func calibratable(o *play.Overlay) bool {
	return o != nil && ((o.Lab != nil && o.Config != nil) || o.VLLM != nil)
}

// startCalibration fits the active profile's calibrated constants to run A
// in a goroutine; its result lands through post.
func (a *App) startCalibration() {
	o := a.s.overlays[0]
	if a.sched.calib.running || !calibratable(o) {
		return
	}
	st := a.s.state.Clone()
	prof, err := st.ActiveProfile()
	if err == nil {
		var cfg sim.Config
		cfg, err = play.EngineConfig(st)
		if err == nil {
			a.runCalibration(o, prof, cfg)
			return
		}
	}
	a.sched.calib.err = play.Tf(a.disp.lang, "cal.failed", play.SayError(a.disp.lang, err))
	a.render()
}

func (a *App) runCalibration(o *play.Overlay, prof *sim.Profile, cfg sim.Config) {
	cancel := &atomic.Bool{}
	a.sched.calib = calibration{running: true, cancel: cancel, source: o.Name, base: prof.Name, started: time.Now()}
	a.render()
	name := calibratedName(o.Name)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.post(func() { a.sched.calib.running = false; a.fail("calibration", r) })
			}
		}()
		cal, p, err := calibrateYielding(cfg, prof, o, name, cancel, func(n int) {
			a.post(func() {
				if a.sched.calib.cancel == cancel {
					a.sched.calib.sims = n
					a.pn.calib.render(a.pg, a.ui())
				}
			})
		})
		a.post(func() { a.finishCalibration(cancel, cal, p, err) })
	}()
}

// calibrateYielding is calibrate.Lab (or, for a vLLM bench file,
// the same with calibrate.BenchEvidence), its predictions wrapped to yield to
// the browser, count and stop when cancelled.
func calibrateYielding(cfg sim.Config, prof *sim.Profile, o *play.Overlay, name string, cancel *atomic.Bool, progress func(int)) (*calibrate.Calibration, *sim.Profile, error) {
	step, err := prof.Apply(cfg.Step)
	if err != nil {
		return nil, nil, err
	}
	cfg.Step = step
	var ev calibrate.Evidence
	if o.Lab != nil {
		m := &lab.Measured{Config: *o.Config, Summary: *o.Lab, Gaps: o.Gaps}
		ev, err = calibrate.LabEvidence(cfg, m, o.Name)
	} else {
		ev, err = calibrate.BenchEvidence(o.VLLM, o.Name)
	}
	if err != nil {
		return nil, nil, err
	}
	predict, n, last := ev.Predict, 0, time.Now()
	ev.Predict = func(s sim.StepModel) ([]float64, error) {
		if cancel.Load() {
			return nil, errCancelled
		}
		n++
		if time.Since(last) > 15*time.Millisecond {
			progress(n)
			yieldTask() // the browser draws and answers here
			last = time.Now()
			if cancel.Load() {
				return nil, errCancelled
			}
		}
		return predict(s)
	}
	cal, err := calibrate.Fit(step, prof.Calibrates, []calibrate.Evidence{ev})
	if cancel.Load() {
		return nil, nil, errCancelled
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := cal.Profile(prof, name, o.Name)
	return cal, p, err
}

// calibratedName names the profile a calibration on file makes.
func calibratedName(file string) string {
	base := file
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(base, ".json")
	var sb strings.Builder
	for _, r := range base {
		if r < 128 && (r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			sb.WriteRune(r)
		}
	}
	return "cal-" + sb.String()
}

// finishCalibration lands a fit: the calibrated profile becomes active and
// its constants go on the sliders; the fit's table stays on screen.
func (a *App) finishCalibration(cancel *atomic.Bool, cal *calibrate.Calibration, p *sim.Profile, err error) {
	if a.sched.calib.cancel != cancel {
		return // a newer job, or cleared
	}
	a.sched.calib.running = false
	switch {
	case errors.Is(err, errCancelled):
		a.disp.info = play.T(a.disp.lang, "cal.cancelled")
	case err == nil && p != nil:
		err = a.s.files.AddProfile(p)
	}
	if err != nil && !errors.Is(err, errCancelled) {
		a.sched.calib.err = play.Tf(a.disp.lang, "cal.failed", play.SayError(a.disp.lang, err))
	}
	if err == nil {
		a.sched.calib.cal, a.sched.calib.prof, a.sched.calib.err = cal, p.Name, ""
		a.change("profile", p.Name)
		a.disp.info = play.Tf(a.disp.lang, "cal.done", p.Name, a.sched.calib.source)
	}
	a.render()
}

// cancelCalibration stops the running fit; the settings stay.
func (a *App) cancelCalibration() {
	if a.sched.calib.running && a.sched.calib.cancel != nil {
		a.sched.calib.cancel.Store(true)
	}
}
