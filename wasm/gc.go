//go:build js && wasm

package main

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// A collection stops the page's one thread for 20-40 ms (80-160 ms on a
// slow CPU); one that falls inside a slider's answer doubles that answer.
// A slider move allocates a few MB (the run's requests, the drawing, the
// panels) against a heap goal of ~100 MB, so the runtime collects every
// dozen moves or so, at whichever allocation crosses the goal. idleCollect
// collects earlier instead, once the page has rested and the heap has used
// half its room: the collection the next moves would have met is done
// between them. A drag without rests still collects when the runtime
// must.
const gcRest = 120 * time.Millisecond

// heapNow reads the live heap at the last collection, the goal that
// triggers the next, and the heap now (live and not yet collected).
var heapNow = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/gc/heap/goal:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
}

// idleCollect collects now if the page has nothing to do (no change for
// gcRest, no run or table under way, the canvas drawn) and the heap is
// past halfway from its live size to the goal.
func (a *App) idleCollect() {
	if time.Since(a.bg.changedAt) < gcRest || a.timelineDue() || a.sched.restDue || a.tl.dirty || (a.lec != nil && a.lec.pending()) {
		return
	}
	metrics.Read(heapNow)
	for _, s := range heapNow {
		if s.Value.Kind() != metrics.KindUint64 {
			return // (a runtime without these metrics)
		}
	}
	live, goal, now := heapNow[0].Value.Uint64(), heapNow[1].Value.Uint64(), heapNow[2].Value.Uint64()
	if goal <= live || now < live+(goal-live)/2 {
		return
	}
	a.trace("idleGC")
	runtime.GC()
}
