//go:build js && wasm

package main

import (
	"syscall/js"
)

// liveState is the live mode: present only when the page is served by
// `servelab serve`, which answers GET /api/health.
type liveState struct {
	available bool
	running   bool
}

// probeLive asks the companion whether it is there; a static host answers
// 404 (or not JSON) and the live controls stay hidden.
func (a *App) probeLive() {
	fetch := a.win.Get("fetch")
	if fetch.IsUndefined() {
		return
	}
	var then, catch, gotJSON js.Func
	release := func() { then.Release(); catch.Release(); gotJSON.Release() }
	gotJSON = js.FuncOf(func(this js.Value, args []js.Value) any {
		a.post(func() {
			a.live.available = true
			if el := a.el("live"); !el.IsNull() {
				el.Set("hidden", false)
			}
		})
		release()
		return nil
	})
	then = js.FuncOf(func(this js.Value, args []js.Value) any {
		res := args[0]
		ct := res.Get("headers").Call("get", "content-type")
		if !res.Get("ok").Bool() || ct.IsNull() || !js.Global().Get("String").Invoke(ct).Call("includes", "json").Bool() {
			release()
			return nil
		}
		res.Call("json").Call("then", gotJSON).Call("catch", catch)
		return nil
	})
	catch = js.FuncOf(func(this js.Value, args []js.Value) any { release(); return nil })
	fetch.Invoke("api/health", map[string]any{"cache": "no-store"}).Call("then", then).Call("catch", catch)
}
