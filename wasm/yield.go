//go:build js && wasm

package main

import (
	"errors"
	"syscall/js"
	"time"
)

// yieldSlice is how long a job on a goroutine of its own (the background
// figures, a chapter's rows, a run made whole) goes between its yields to
// the browser: about half a frame.
const yieldSlice = 8 * time.Millisecond

// pauser is a sim.Config.Pause for a job on a goroutine of its own: every
// yieldSlice it lets the browser draw and answer (yieldTask), then waits
// while hold reports true (nil: never); it ends the run once stale does.
func pauser(stale, hold func() bool) func() bool {
	last := time.Now()
	return func() bool {
		if stale() || time.Since(last) < yieldSlice {
			return stale()
		}
		yieldTask()
		for hold != nil && !stale() && hold() {
			time.Sleep(4 * time.Millisecond)
		}
		last = time.Now()
		return stale()
	}
}

// yieldTask blocks the calling goroutine until a new JavaScript task has
// begun, so the browser draws and answers in between. A time.Sleep is not
// enough for a long job: once its timer has fired, the Go runtime runs the
// goroutine inside whichever call from JavaScript comes next, a frame's
// included, and the frame waits for the job's slice (a 50 MB upload held
// frames for 217-267 ms that way). The task is a message on a channel of
// its own, which browsers do not clamp as they clamp a chain of zero
// timers to 4 ms each.
func yieldTask() {
	ch := make(chan struct{})
	mc := js.Global().Get("MessageChannel").New()
	var f js.Func
	f = js.FuncOf(func(js.Value, []js.Value) any {
		mc.Get("port1").Call("close")
		f.Release()
		close(ch)
		return nil
	})
	mc.Get("port1").Set("onmessage", f)
	mc.Get("port2").Call("postMessage", nil)
	<-ch
}

// await blocks the calling goroutine (never the one that runs the page's
// frames) until the promise p settles: its value, or its reason as an error.
func await(p js.Value) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	var then, catch js.Func
	then = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{v: args[0]}
		return nil
	})
	catch = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{err: errors.New(js.Global().Get("String").Invoke(args[0]).String())}
		return nil
	})
	p.Call("then", then, catch)
	s := <-ch
	then.Release()
	catch.Release()
	return s.v, s.err
}
