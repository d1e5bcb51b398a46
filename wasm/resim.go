//go:build js && wasm

package main

import (
	"fmt"
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
	// apart: job is a run made whole (play.Job.Whole), under way on a
	// goroutine of its own; landed: it has ended, or failed (a panic).
	apart, landed bool
	failed        error
}

// beginResim starts re-simulating the current state; a re-simulation
// still under way is dropped (a newer change wins).
func (a *App) beginResim() {
	a.trace("resim")
	// A change that supersedes a long run gets no longer first slice: the
	// page is answering a drag.
	rs := &resim{}
	if a.sched.rs != nil && a.sched.rs.slices > 0 {
		rs.slices = 1
	}
	a.dropResim()
	if a.keepA() {
		rs.runA = a.s.run // compare mode: only run B's settings changed
	} else if a.lec != nil {
		rs.runA = a.lec.cache.Run(a.s.state) // the lab chapter may have made this run already
	}
	if rs.runA == nil {
		rs.job, rs.errA = play.Start(a.yielding(a.s.state, rs))
	}
	a.sched.rs = rs
}

// yielding is s with the Pause a run made whole calls (play.Job.Whole):
// it yields to the browser (pauser) and ends the run once rs is no longer
// the re-simulation under way (a newer change came).
func (a *App) yielding(s play.State, rs *resim) play.State {
	s.Pause = pauser(func() bool { return a.sched.rs != rs }, nil)
	return s
}

// timelineDue reports whether the timeline waits for a re-simulation.
func (a *App) timelineDue() bool { return a.s.needSim || a.sched.rs != nil }

// runApart makes rs's job, a run made whole, on a goroutine: its engines
// yield as they go (yielding), so a routed run of thousands of requests
// (200 ms natively) no longer holds the page; the frame after it ends
// lands it.
func (a *App) runApart(rs *resim, j *play.Job) {
	rs.apart = true
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.postNow("a re-simulation", func() {
					a.fail("a re-simulation", r)
					rs.landed, rs.failed = true, fmt.Errorf("%v", r)
				})
				a.workNow()
			}
		}()
		j.Advance(time.Hour)
		a.postNow("a re-simulation", func() { rs.landed = true })
		a.workNow()
	}()
}

// dropResim abandons a re-simulation under way, its arrays back to the pool.
func (a *App) dropResim() {
	rs := a.sched.rs
	if rs == nil {
		return
	}
	if rs.job != nil {
		rs.job.Abandon()
	}
	if r := rs.runA; r != nil && r != a.s.run && (a.lec == nil || !a.lec.holds(r)) {
		r.Recycle() // run A was made, run B was not yet
	}
	a.sched.rs = nil
}

// advanceResim runs the re-simulation under way for this frame's slice and
// lands it when both runs are made.
func (a *App) advanceResim() {
	rs := a.sched.rs
	budget := resimSlice
	switch {
	case a.s.gen == 0:
		budget = resimStart // nothing is drawn yet
	case rs.slices == 0:
		budget = resimFirst
	}
	// The slice is this frame's, counted from when its work began.
	deadline := a.sched.frameAt.Add(budget)
	if rs.slices == 0 {
		// A change's first slice: a run of a usual size lands in its frame.
		deadline = later(deadline, time.Now().Add(resimSlice))
	} else if rs.job != nil && time.Until(deadline) <= 0 {
		return
	}
	if rs.slices == 0 && a.s.gen > 0 && rs.job != nil && rs.job.Long() {
		// A run that cannot land in this frame starts in the next: this
		// one shows what began it (a file laid over the timeline).
		rs.slices++
		a.showResimProgress(rs.job)
		return
	}
	rs.slices++
	for {
		if j := rs.job; j != nil {
			switch {
			case rs.apart && !rs.landed:
				return // (its goroutine's end brings the next frame)
			case rs.apart:
				rs.apart, rs.landed = false, false
			case j.Whole():
				a.runApart(rs, j)
				return
			case !j.Advance(time.Until(deadline)):
				a.showResimProgress(j)
				return
			}
			rs.job = nil
			err := j.Err()
			if rs.failed != nil {
				err, rs.failed = rs.failed, nil
			}
			if rs.onB {
				rs.runB, rs.errB, rs.newB = j.Run(), err, true
			} else if rs.errA = err; err == nil {
				rs.runA, rs.simMsA = j.Run(), j.Run().SimMs
			}
		}
		if rs.onB {
			break
		}
		rs.onB = true
		if a.startB(rs) {
			rs.job, rs.errB = play.Start(a.yielding(a.s.cmp.stateB, rs))
			rs.newB = rs.errB != nil
		}
	}
	a.sched.rs = nil
	a.landResim(rs)
}

// showResimProgress says how far a long re-simulation has come.
func (a *App) showResimProgress(j *play.Job) {
	a.message(play.Tf(a.disp.lang, "msg.simulating", 100*j.Progress()), false)
}

// landResim shows the runs a re-simulation made and refreshes everything shown.
func (a *App) landResim(rs *resim) {
	a.trace("land")
	defer a.trace("landed")
	a.s.gen++
	a.sched.landed = true
	if a.s.gen == 1 {
		a.mark("simulated")
	}
	if a.s.run != rs.runA && (a.lec == nil || !a.lec.holds(a.s.run)) {
		a.s.run.Recycle() // its arrays go to the next simulation
	}
	if rs.runA != nil && rs.runA != a.s.run {
		a.s.cmp.filesA = a.s.files.FilesGen()
	}
	a.s.run = rs.runA
	if rs.errA != nil {
		a.s.simErr = rs.errA.Error()
		a.s.run = nil
		a.bg.simMs = 0
		a.message(play.Tf(a.disp.lang, "msg.cannot", rs.errA.Error()), true)
	} else {
		a.s.simErr = ""
		a.bg.simMs = rs.simMsA
		if a.s.run.Truncated {
			a.message(play.Tf(a.disp.lang, "msg.truncated", a.s.run.Steps(), play.FormatDur(a.s.run.End)), true)
		} else {
			a.message("", false)
		}
	}
	if rs.newB {
		a.landB(rs.runB, rs.errB)
	}
	a.tl.view.T0 = a.s.state.View.T0
	a.tl.view.Span = a.s.state.View.Span
	a.tl.view.Cursor = a.s.state.View.Cursor
	a.tl.view.Sel, a.tl.view.SelRow, a.tl.view.SelPane = a.s.state.View.Sel, 0, 0
	if a.s.run != nil && a.tl.view.Sel >= 0 {
		a.tl.view.SelRow, a.tl.view.Sel = a.locateStep(a.tl.view.Sel)
	} else if a.s.run != nil && a.lec != nil && a.lec.ch.Layout == "step" {
		a.selectMixedStep()
	}
	if a.s.run != nil && a.tl.view.Cursor > a.s.run.End {
		a.tl.view.Cursor = -1
	}
	a.tl.dirty = true
	a.coarsen()
	a.bg.figs = play.Figures{Goodput: -1}
	if a.s.run != nil {
		a.bg.figs = a.s.run.Figures()
	}
	a.bg.gen++
	if a.bg.rates != nil {
		a.bg.oldRates = a.bg.rates
	}
	a.bg.rates = nil
	if a.lec != nil {
		a.lec.settingsChanged(a.s.state)
	}
	a.renderLanded()
	a.sched.urlDirty = true
	// The sweep and goodput start once the settings rest for a few frames
	// after the last change (while a slider is dragged they would only be
	// cancelled); this re-simulation counts as part of the rest.
	a.bg.pending, a.bg.at = true, a.bg.changedAt.Add(bgRest)
}

// later is the later of two times.
func later(x, y time.Time) time.Time {
	if x.After(y) {
		return x
	}
	return y
}
