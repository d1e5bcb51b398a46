//go:build js && wasm

package main

import "syscall/js"

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
	a.pg.win.Get("servelabTrace").Call("push", []any{name, a.pg.win.Get("performance").Call("now")})
}

// initTrace turns the trace on where the page (win, the parent window)
// defined window.servelabTrace as an array before the app started.
func initTrace(win js.Value) {
	t := win.Get("servelabTrace")
	traceOn = t.Truthy() && js.Global().Get("Array").Call("isArray", t).Bool()
}
