//go:build js && wasm

package main

import (
	"syscall/js"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
)

// The page's work runs in an animation-frame loop of its own (tick), and
// while the pointer is off the canvas ebiten runs a frame (Update, Draw)
// only when the canvas must change (FPSModeVsyncOffMinimum). Run every
// frame, ebiten presents its screen again in the three frames after each
// change (for swap chains of several buffers; a browser's canvas keeps
// what it was last given), and where there is no GPU each present costs
// the browser's GPU process tens of ms of software rendering: four
// presents per slider change where one shows it. Over the canvas ebiten
// runs every frame again: in the minimum mode it presents at every input
// event, each mouse move included, where hover changes nothing mostly.

// startFrames begins the page's frame loop; call it before ebiten.RunGame,
// so that a tick that asks for a frame comes before ebiten's in the same
// animation frame.
func (a *App) startFrames() {
	ebiten.SetFPSMode(ebiten.FPSModeVsyncOffMinimum)
	root := a.pg.own.Get("documentElement")
	for ev, mode := range map[string]ebiten.FPSModeType{"pointerenter": ebiten.FPSModeVsyncOn, "pointerleave": ebiten.FPSModeVsyncOffMinimum} {
		root.Call("addEventListener", ev, js.FuncOf(func(js.Value, []js.Value) any {
			ebiten.SetFPSMode(mode)
			return nil
		}))
	}
	var f js.Func
	f = js.FuncOf(func(js.Value, []js.Value) any {
		a.pg.win.Call("requestAnimationFrame", f)
		a.tick()
		return nil
	})
	a.pg.win.Call("requestAnimationFrame", f)
}

// tick is one animation frame's work: it drains queued changes,
// re-simulates when a setting changed, advances playback and the
// background figures, and asks ebiten for a frame when the canvas must be
// repainted. A panic is reported, not fatal.
func (a *App) tick() {
	if a.sched.inFrame {
		return // (only if a frame's work blocked: it ends first)
	}
	defer a.busy("a frame", true)()
	a.trace("tick")
	presenting := a.sched.presenting
	if !presenting {
		a.renderRest() // (before this frame's work: the canvas drew in the last frame)
	}
	a.work(false)
	a.sharpen()
	a.tickEdge()
	a.tickPlayback()
	if !a.timelineDue() && !presenting {
		a.pickBackground()
	}
	a.sched.presenting = false
	// The address bar waits for a frame that neither began nor landed a
	// re-simulation (history.replaceState took 10-30 ms of a big one's).
	if a.sched.urlDirty && time.Since(a.sched.urlAt) > 250*time.Millisecond && !a.sched.simmed && !a.sched.landed && a.sched.rs == nil {
		a.writeURL()
	}
	a.idleCollect()
	a.sched.frameAt, a.sched.simmed, a.sched.landed = time.Time{}, false, false
	if a.tl.dirty || a.tl.exportReq {
		ebiten.ScheduleFrame()
	}
}
