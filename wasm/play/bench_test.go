//go:build js && wasm

package play

import (
	"runtime/debug"
	"servelab/sim"
	"syscall/js"
	"testing"
)

// BenchmarkPresets is the page's re-simulation of each preset, as a slider
// change runs it (Simulate: the run, its trace, its index and summary), in
// the browser's runtime (these tests run under node).
func BenchmarkPresets(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as the page sets it (wasm/main.go)
	var prev *SimRun
	for _, p := range Presets {
		s, _ := ParseQuery("preset=" + p.Name)
		b.Run(p.Name, func(b *testing.B) {
			defer reportCPU(b, cpuMs())
			for b.Loop() {
				prev.Recycle() // the page recycles the run it replaces
				r, err := Simulate(s)
				if err != nil {
					b.Fatal(err)
				}
				prev = r
			}
		})
	}
}

// BenchmarkPanels is the page's background figures for the demo-2 preset:
// the latency-vs-rate points and the goodput search (see wasm/background.go).
func BenchmarkPanels(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	s, _ := ParseQuery("preset=demo2")
	for b.Loop() {
		for _, rate := range RatesFor(s.Rate) {
			if _, _, err := AttainmentAt(s, rate, nil); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := Goodput(s, 400, func() error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChapterJobs is the CPU a chapter's table costs in the browser's
// runtime: the jobs of its demo (demo 3 with its split jobs), as the page
// runs them after a slider change, without the frames between them.
func BenchmarkChapterJobs(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	for _, ch := range Chapters {
		if ch.Demo == 0 {
			continue
		}
		s, _ := ParseQuery("chapter=" + ch.ID + "&preset=" + ch.Preset)
		b.Run(ch.ID, func(b *testing.B) {
			defer reportCPU(b, cpuMs())
			mem := &sim.Scratch{}
			for b.Loop() {
				l, d, err := LectureOf(s)
				if err != nil {
					b.Fatal(err)
				}
				res, jobs := l.Interference(d)
				for _, j := range jobs {
					if j.Demo == ch.Demo {
						if err := j.Run(mem); err != nil {
							b.Fatal(err)
						}
					}
				}
				if ch.Demo == 3 {
					for _, j := range l.Demo3Splits(res) {
						if err := j.Run(mem); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
}

// cpuMs is the process's CPU time so far in ms (node's process.cpuUsage):
// on a shared machine it moves less with other work than wall time does.
func cpuMs() float64 {
	u := js.Global().Get("process").Call("cpuUsage")
	return (u.Get("user").Float() + u.Get("system").Float()) / 1e3
}

// reportCPU reports the CPU ms per iteration since start.
func reportCPU(b *testing.B, start float64) {
	b.ReportMetric((cpuMs()-start)/float64(b.N), "cpu-ms/op")
}
