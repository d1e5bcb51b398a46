//go:build js && wasm

package main

import (
	"sync"
	"syscall/js"

	"servelab/wasm/play"
)

// touchScreen reports whether the page is on a touch screen: a coarse
// pointer (a finger) or touch events. It is asked once; a tablet that
// gains a mouse keeps the touch wording.
var touchScreen = sync.OnceValue(func() bool {
	w := js.Global()
	if mm := w.Get("matchMedia"); mm.Type() == js.TypeFunction && w.Call("matchMedia", "(pointer: coarse)").Get("matches").Bool() {
		return true
	}
	return w.Get("ontouchstart").Type() != js.TypeUndefined
})

// hint is the text for key, its touch wording (key.touch) on a touch
// screen: a hint that says hover, click, drag or keys speaks of taps there.
func (u *uiState) hint(key string) string {
	if touchScreen() {
		if s := play.T(u.lang, key+".touch"); s != key+".touch" {
			return s
		}
	}
	return u.tr(key)
}
