//go:build js && wasm

package main

import (
	"time"

	"servelab/wasm/play"
)

// A re-simulation gets this much of a frame, its first slice more: a run
// that fits (nearly all do) lands in the frame of the change, a long one (a
// replayed trace of thousands of requests) is spread over frames with its
// progress shown, and the page answers between.
const (
	resimFirst = 60 * time.Millisecond
	resimSlice = 35 * time.Millisecond
	resimStart = time.Second // the page's first run: nothing is drawn yet, its compiler still warms up
)

// resim is a re-simulation under way: run A's job, then in compare mode
// run B's. The runs shown stay on the canvas until it lands.
type resim struct {
	job    *play.Job
	slices int
	// run A once made (or kept, or the chapter's), and why it has none
	runA   *play.SimRun
	errA   error
	simMsA float64 // 0: A was not simulated again
	onB    bool    // A is settled; job (if any) is run B's
	runB   *play.SimRun
	errB   error
	newB   bool // B was re-simulated (else it stands, or compare mode is off)
}

// beginResim starts re-simulating the current state; a re-simulation
// still under way is dropped (a newer change wins).
func (a *App) beginResim() {
	// A change that supersedes a long run gets no longer first slice: the
	// page is answering a drag.
	rs := &resim{}
	if a.rs != nil && a.rs.slices > 0 {
		rs.slices = 1
	}
	a.dropResim()
	if a.keepA() {
		rs.runA = a.run // compare mode: only run B's settings changed
	} else if a.lec != nil {
		rs.runA = a.lec.cache.Run(a.state) // the lab chapter may have made this run already
	}
	if rs.runA == nil {
		rs.job, rs.errA = play.Start(a.state)
	}
	a.rs = rs
}

// dropResim abandons a re-simulation under way, its arrays back to the pool.
func (a *App) dropResim() {
	rs := a.rs
	if rs == nil {
		return
	}
	if rs.job != nil {
		rs.job.Abandon()
	}
	if r := rs.runA; r != nil && r != a.run && (a.lec == nil || !a.lec.holds(r)) {
		r.Recycle() // run A was made, run B was not yet
	}
	a.rs = nil
}

// advanceResim runs the re-simulation under way for this frame's slice and
// lands it when both runs are made.
func (a *App) advanceResim() {
	rs := a.rs
	budget := resimSlice
	switch {
	case a.gen == 0:
		budget = resimStart // nothing is drawn yet
	case rs.slices == 0:
		budget = resimFirst
	}
	// The slice is this frame's, counted from when its work began.
	deadline := a.frameAt.Add(budget)
	if rs.slices == 0 {
		// A change's first slice: a run of a usual size lands in its frame.
		deadline = later(deadline, time.Now().Add(resimSlice))
	} else if rs.job != nil && time.Until(deadline) <= 0 {
		return
	}
	if rs.slices == 0 && a.gen > 0 && rs.job != nil && rs.job.Long() {
		// A run that cannot land in this frame starts in the next: this
		// one shows what began it (a file laid over the timeline).
		rs.slices++
		a.showResimProgress(rs.job)
		return
	}
	rs.slices++
	for {
		if j := rs.job; j != nil {
			if !j.Advance(time.Until(deadline)) {
				a.showResimProgress(j)
				return
			}
			rs.job = nil
			if rs.onB {
				rs.runB, rs.newB = j.Run(), true
			} else {
				rs.runA, rs.simMsA = j.Run(), j.Run().SimMs
			}
		}
		if rs.onB {
			break
		}
		rs.onB = true
		if a.startB(rs) {
			rs.job, rs.errB = play.Start(a.cmp.stateB)
			rs.newB = rs.errB != nil
		}
	}
	a.rs = nil
	a.landResim(rs)
}

// showResimProgress says how far a long re-simulation has come.
func (a *App) showResimProgress(j *play.Job) {
	a.message(play.Tf(a.lang, "msg.simulating", 100*j.Progress()), false)
}

// landResim shows the runs a re-simulation made and refreshes everything shown.
func (a *App) landResim(rs *resim) {
	a.gen++
	a.landed = true
	if a.gen == 1 {
		a.mark("simulated")
	}
	if a.run != rs.runA && (a.lec == nil || !a.lec.holds(a.run)) {
		a.run.Recycle() // its arrays go to the next simulation
	}
	if rs.runA != nil && rs.runA != a.run {
		a.cmp.filesA = a.sess.FilesGen()
	}
	a.run = rs.runA
	if rs.errA != nil {
		a.simErr = rs.errA.Error()
		a.run = nil
		a.simMs = 0
		a.message(play.Tf(a.lang, "msg.cannot", rs.errA.Error()), true)
	} else {
		a.simErr = ""
		a.simMs = rs.simMsA
		if a.run.Truncated {
			a.message(play.Tf(a.lang, "msg.truncated", a.run.Steps(), play.FormatDur(a.run.End)), true)
		} else {
			a.message("", false)
		}
	}
	if rs.newB {
		a.landB(rs.runB, rs.errB)
	}
	a.view.T0 = a.state.View.T0
	a.view.Span = a.state.View.Span
	a.view.Cursor = a.state.View.Cursor
	a.view.Sel, a.view.SelRow, a.view.SelPane = a.state.View.Sel, 0, 0
	if a.run != nil && a.view.Sel >= 0 {
		a.view.SelRow, a.view.Sel = a.locateStep(a.view.Sel)
	} else if a.run != nil && a.lec != nil && a.lec.ch.Layout == "step" {
		a.selectMixedStep()
	}
	if a.run != nil && a.view.Cursor > a.run.End {
		a.view.Cursor = -1
	}
	a.dirty = true
	a.figs = play.Figures{Goodput: -1}
	if a.run != nil {
		a.figs = a.run.Figures()
	}
	a.figGen++
	if a.rates != nil {
		a.oldRates = a.rates
	}
	a.rates = nil
	if a.lec != nil {
		a.lec.settingsChanged(a.state)
	}
	a.render()
	a.urlDirty = true
	// The sweep and goodput start once the settings rest for a few frames
	// after the last change (while a slider is dragged they would only be
	// cancelled); this re-simulation counts as part of the rest.
	a.bgPending, a.bgAt = true, a.changedAt.Add(bgRest)
}

// later is the later of two times.
func later(x, y time.Time) time.Time {
	if x.After(y) {
		return x
	}
	return y
}
