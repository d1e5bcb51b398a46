//go:build js && wasm

package main

import (
	"math"
	"sort"
	"strconv"

	"servelab/sim/scenario"
	"servelab/wasm/play"

	"github.com/hajimehoshi/ebiten/v2"
)

// compareState is compare mode's part of the App: run B (the same
// workload, other settings), its figures, and which run the form edits.
type compareState struct {
	pair   play.Pair
	stateB play.State
	runB   *play.SimRun
	figsB  play.Figures
	errB   string
	editB  bool // the form shows and changes run B
	// the uploaded files' generation each run was simulated with
	filesA, filesB int
}

// pane is one run's part of the canvas.
type pane struct {
	run *play.SimRun
	geo geom
}

// startB settles run B after run A (compare mode): it reports whether B
// must be simulated again (rs's job is then B's); else B stands or is
// dropped.
func (a *App) startB(rs *resim) bool {
	c := &a.s.cmp
	var notes []string
	c.stateB, notes = c.pair.StateB(a.s.state)
	if c.pair.On {
		a.s.notes = append(a.s.notes, notes...)
	}
	if c.pair.On && c.runB != nil && c.errB == "" && c.filesB == a.s.files.FilesGen() && c.runB.State.Query() == c.stateB.Query() {
		return false // only run A's own settings changed: B stands
	}
	if !c.pair.On {
		c.runB.Recycle()
		c.runB, c.errB = nil, ""
		return false
	}
	return true
}

// landB shows run B's new run (or why it has none).
func (a *App) landB(r *play.SimRun, err error) {
	c := &a.s.cmp
	c.runB.Recycle()
	c.runB, c.errB = nil, ""
	c.filesB = a.s.files.FilesGen()
	if err != nil {
		c.errB = err.Error()
		c.figsB = play.Figures{Goodput: -1}
		return
	}
	c.runB = r
	a.bg.simMs += r.SimMs
	c.figsB = r.Figures()
}

// keepA reports whether run A can stand as it is: in compare mode, when
// only run B's settings changed (the form edits B), A's run is the same.
func (a *App) keepA() bool {
	return a.s.cmp.pair.On && a.s.run != nil && a.s.simErr == "" && a.lec == nil &&
		a.s.cmp.filesA == a.s.files.FilesGen() && a.s.run.State.Query() == a.s.state.Query()
}

// hasMem reports whether a run has a memory lane (a KV limit).
func hasMem(r *play.SimRun) bool { return r != nil && r.KVCapacity > 0 }

// panes lays out the canvas: one pane, or in compare mode A above B on
// the same time axis.
func (a *App) panes() []pane {
	scale := a.tl.dpr
	if a.disp.projector {
		scale *= 1.5
	}
	rows := func(r *play.SimRun) int {
		if r == nil {
			return 1
		}
		return max(1, len(r.Rows))
	}
	w, h := float64(a.tl.w), float64(a.tl.h)
	if !a.s.cmp.pair.On {
		// (titled: the line above the axis holds the canvas's legend)
		return []pane{{a.s.run, layoutAt(0, w, h, scale, rows(a.s.run), hasMem(a.s.run), true)}}
	}
	half := math.Floor(h / 2)
	return []pane{
		{a.s.run, layoutAt(0, w, half, scale, rows(a.s.run), hasMem(a.s.run), true)},
		{a.s.cmp.runB, layoutAt(half, w, h-half, scale, rows(a.s.cmp.runB), hasMem(a.s.cmp.runB), true)},
	}
}

// paintAll draws every pane; in compare mode both share one gap scale.
func (a *App) paintAll(dst *ebiten.Image) []label {
	ps := a.panes()
	dst.Fill(colBG)
	meas := append(a.s.overlays[:], a.chapterOverlay())
	if len(ps) == 1 {
		labels := paintPane(dst, a.tl.batch, a.s.run, &a.tl.view, ps[0].geo, meas, a.disp.lang)
		labels = append(labels, paintLegend(a.tl.batch, a.s.run, meas, ps[0].geo, a.disp.lang, 0)...)
		a.tl.batch.flush(dst)
		return labels
	}
	top := 0.0
	for _, p := range ps {
		top = math.Max(top, gapMaxInView(p.run, &a.tl.view))
	}
	for _, m := range meas {
		if m != nil {
			for _, gp := range m.Gaps {
				if t := gp.TRelInject + m.Origin; t >= a.tl.view.T0 && t <= a.tl.view.T0+a.tl.view.Span {
					top = math.Max(top, gp.Gap)
				}
			}
		}
	}
	var labels []label
	for i, p := range ps {
		p.geo.gapTop = top
		name := "A"
		var m []*play.Overlay
		st := a.s.state
		if i == 0 {
			m = []*play.Overlay{a.s.overlays[0], nil, a.chapterOverlay()} // A's measurement, and the chapter's other run
		} else {
			m = []*play.Overlay{nil, a.s.overlays[1]} // B's (its index keeps B's colour)
			name, st = "B", a.s.cmp.stateB
			// a line between the panes
			a.tl.batch.rect(0, p.geo.axisY-18*p.geo.s, float64(a.tl.w), 2*p.geo.s, colGrid)
		}
		title := name + " · " + runTitle(a.disp.lang, st)
		labels = append(labels, label{4 * p.geo.s, p.geo.axisY - 15*p.geo.s, title, "row"})
		if p.run == nil {
			continue
		}
		v := a.paneView(i)
		labels = append(labels, paintPane(dst, a.tl.batch, p.run, &v, p.geo, m, a.disp.lang)...)
		labels = append(labels, paintLegend(a.tl.batch, p.run, m, p.geo, a.disp.lang, 4*p.geo.s+textWidth(title, p.geo.s)*1.15+12*p.geo.s)...)
	}
	a.tl.batch.flush(dst)
	return labels
}

// runTitle names a run by its policy and what sets it apart.
func runTitle(lang string, st play.State) string {
	t := play.T(lang, "policy."+st.Policy)
	switch st.Policy {
	case "chunked":
		t += " · " + play.Tf(lang, "cmp.budget", st.EffectiveBudget())
	case scenario.Disaggregated:
		t += " · " + play.FormatNum(float64(st.PrefillGPUs)) + "P+" + play.FormatNum(float64(st.DecodeGPUs)) + "D"
	}
	return t + " · " + st.Model + " · " + st.GPU + " · " + play.FormatNum(st.Rate) + " " + play.T(lang, "unit.req/s")
}

// paneView is the view pane i draws: the selected or hovered step is
// outlined in its own run, and in the other run the step its first GPU was
// running at the same moment.
func (a *App) paneView(i int) View {
	v := a.tl.view
	same := func(pane, row, k int) (int, int) {
		if pane == i || k < 0 {
			return row, k
		}
		from, to := a.runOf(pane), a.runOf(i)
		if from == nil || to == nil || row < 0 || row >= len(from.Rows) || k >= len(from.Rows[row].Iters) {
			return -1, -1
		}
		it := &from.Rows[row].Iters[k]
		return 0, to.StepAt(0, it.Start+it.Duration/2)
	}
	v.SelRow, v.Sel = same(a.tl.view.SelPane, a.tl.view.SelRow, a.tl.view.Sel)
	v.HoverRow, v.Hover = same(a.tl.view.HoverPane, a.tl.view.HoverRow, a.tl.view.Hover)
	v.SelPane, v.HoverPane = i, i
	return v
}

// gapMaxInView is the largest inter-token gap shown in the view (up to the cursor).
func gapMaxInView(r *play.SimRun, v *View) float64 {
	if r == nil {
		return 0
	}
	t1 := v.T0 + v.Span
	if v.Cursor >= 0 {
		t1 = math.Min(t1, v.Cursor)
	}
	top := 0.0
	for i := sort.Search(len(r.ITL), func(i int) bool { return r.ITL[i].T >= v.T0 }); i < len(r.ITL) && r.ITL[i].T <= t1; i++ {
		top = math.Max(top, r.ITL[i].Gap)
	}
	return top
}

// hitPane finds the step under a device-pixel point in any pane.
func (a *App) hitPane(x, y float64) (pn, row, k int) {
	for i, p := range a.panes() {
		top := p.geo.axisY - 4*p.geo.s
		if y < top || y >= p.geo.h {
			continue
		}
		row, k = hit(p.run, &a.tl.view, p.geo, x, y)
		return i, row, k
	}
	return 0, -1, -1
}

// runOf is pane i's run.
func (a *App) runOf(i int) *play.SimRun {
	if i == 1 {
		return a.s.cmp.runB
	}
	return a.s.run
}

// setCompare turns compare mode on or off; on, run B starts as A's copy
// with chunking (the comparison most lectures make) unless it has settings.
func (a *App) setCompare(on bool) {
	c := &a.s.cmp
	c.pair.On = on
	if o := a.s.overlays[1]; on && o != nil {
		// Two measured runs: B simulates the second, as A the first.
		a.s.notes = append(a.s.notes, c.pair.TakeOverlay(a.s.state, o)...)
	} else if on && len(c.pair.B) == 0 {
		other := "chunked"
		if a.s.state.Policy == "chunked" {
			other = "prefill-first"
		}
		c.pair.SetB(a.s.state, "policy", other)
	}
	if !on {
		c.editB = false
	}
	a.tl.view.SelPane, a.tl.view.HoverPane = 0, 0
	a.s.needSim = true
	a.sched.urlDirty = true
}

// handleMore applies the events of compare mode, the split search and uploads.
func (a *App) handleMore(ev event) {
	switch e := ev.(type) {
	case evCompare:
		a.setCompare(e.on)
	case evEditB:
		if a.s.cmp.pair.On {
			a.s.cmp.editB = e.b
			a.render()
		}
	case evResetB:
		a.s.cmp.pair.B = map[string]string{}
		a.s.needSim, a.sched.urlDirty = true, true
	case evSplit:
		a.startSplit(e.gpus)
	case evSplitUse:
		if r := a.pn.splitSt.res; r != nil && r.Best.Total > 0 {
			a.change("xp", strconv.Itoa(r.Best.Prefill))
			a.change("yd", strconv.Itoa(r.Best.Decode))
		}
	case evReplace:
		o := a.pn.ask.pending
		a.pn.ask.pending = nil
		if o != nil && e.slot >= 0 {
			a.placeOverlay(o, e.slot)
		}
		a.render()
	case evSwitchConfig:
		if !e.keep && a.pn.ask.offerPolicy != "" {
			a.s.state.Policy = a.pn.ask.offerPolicy
			if a.pn.ask.offerBudget > 0 {
				a.s.state.Set("budget", play.FormatNum(float64(a.pn.ask.offerBudget)))
			}
			a.s.needSim = true
		}
		a.pn.ask.offerPolicy = ""
		a.render()
	}
}

// readScreenQuery reads the page's own URL keys: compare mode and run B
// (cmp=1&b.KEY=...), projector mode (proj=1) and playback speed.
func (a *App) readScreenQuery(q string) {
	a.s.cmp.pair = play.ParsePair(q)
	a.disp.projector = play.QueryFlag(q, "proj")
	if v, err := strconv.ParseFloat(play.QueryValue(q, "speed"), 64); err == nil && v > 0 && v <= 1000 {
		a.tl.speed = v
	}
}
