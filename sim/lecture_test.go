package sim

import (
	"reflect"
	"testing"
)

// lectureTables runs every demo job of l, one after another on mem.
func lectureTables(t *testing.T, l Lecture, d Demos, mem *Scratch) *Interference {
	t.Helper()
	res, jobs := l.Interference(d)
	for _, j := range jobs {
		if err := j.Run(mem); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range l.Demo3Splits(res) {
		if err := j.Run(mem); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// TestLectureReuseIsExact checks that the demos' tables are the same when
// every run reuses one Scratch (as the page runs its jobs) as when each
// run has its own memory, for two workloads in a row on the same Scratch.
func TestLectureReuseIsExact(t *testing.T) {
	step := lectureStep(t)
	shared := &Scratch{}
	for _, w := range []struct{ n, prompt, output int }{{400, 512, 64}, {300, 256, 128}} {
		d := LectureDemos(SLO{TTFT: 0.2, TPOT: 0.015})
		d.Rates = []float64{10, 40}
		l := Lecture{Step: step, N: w.n, Prompt: w.prompt, Output: w.output}
		want := lectureTables(t, l, d, nil)
		got := lectureTables(t, l, d, shared)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: tables with a reused Scratch differ:\n got %+v\nwant %+v", w, got, want)
		}
		if len(got.Demo3.Simulated) == 0 || got.Demo3.Colocated <= 0 {
			t.Fatalf("%+v: demo 3 is empty: %+v", w, got.Demo3)
		}
	}
}
