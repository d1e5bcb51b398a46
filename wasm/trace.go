//go:build js && wasm

package main

import (
	"strconv"
	"syscall/js"
)

// traceOn is set when the page defines window.servelabTrace as an array
// before the app starts: the benchmarks then read where a change's time
// went (trace pushes [name, ms since navigation]). Off, a call costs a
// branch.
var traceOn bool

// trace notes a point of the page's work in window.servelabTrace.
func (a *App) trace(name string) {
	if !traceOn {
		return
	}
	now := a.pg.win.Get("performance").Call("now")
	if n := gcCycles(); n != gcSeen {
		// a collection ran since the last point: it may be why this one is late
		a.pg.win.Get("servelabTrace").Call("push", []any{"gc" + strconv.Itoa(int(n-gcSeen)), now})
		gcSeen = n
	}
	a.pg.win.Get("servelabTrace").Call("push", []any{name, now})
}

// gcSeen is gcCycles at the last trace point.
var gcSeen float64

// initTrace turns the trace on where the page (win, the parent window)
// defined window.servelabTrace as an array before the app started.
func initTrace(win js.Value) {
	t := win.Get("servelabTrace")
	traceOn = t.Truthy() && js.Global().Get("Array").Call("isArray", t).Bool()
}
