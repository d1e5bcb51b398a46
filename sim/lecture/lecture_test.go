package lecture

import (
	"reflect"
	"strings"
	"testing"

	"servelab/sim"
)

// lectureStep is the lecture's step model: Llama-3.1-8B on an H100.
func lectureStep(t testing.TB) sim.StepModel {
	t.Helper()
	s, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lecture is the lecture's setup: 1500 requests of 512 prompt and 64 output tokens.
func lecture(t testing.TB) Lecture {
	return Lecture{Step: lectureStep(t), N: 1500, Prompt: 512, Output: 64}
}

// lectureTables runs every demo job of l, one after another on mem.
func lectureTables(t *testing.T, l Lecture, d Demos, mem *sim.Scratch) *Interference {
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
	shared := &sim.Scratch{}
	for _, w := range []struct{ n, prompt, output int }{{400, 512, 64}, {300, 256, 128}} {
		d := Defaults(sim.SLO{TTFT: 0.2, TPOT: 0.015})
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

func TestDemo2Shape(t *testing.T) {
	l := lecture(t)
	lo, err := l.Demo2Rate(5)
	if err != nil {
		t.Fatal(err)
	}
	hi, _ := l.Demo2Rate(50)
	if lo.ColocatedTPOT90 < 7.5e-3 || lo.ColocatedTPOT90 > 7.8e-3 {
		t.Errorf("colocated P90 TPOT at 5 req/s = %.2f ms, want 7.6-7.7", lo.ColocatedTPOT90*1e3)
	}
	if hi.ColocatedTPOT90 < 20e-3 || hi.ColocatedTPOT90 > 100e-3 {
		t.Errorf("colocated P90 TPOT at 50 req/s = %.2f ms, want tens of ms", hi.ColocatedTPOT90*1e3)
	}
	if hi.DecodeTPOT90 > 1.2*lo.DecodeTPOT90 {
		t.Errorf("decode-only TPOT should barely move: %.2f -> %.2f ms", lo.DecodeTPOT90*1e3, hi.DecodeTPOT90*1e3)
	}
}

func TestDemo4Shape(t *testing.T) {
	l := lecture(t)
	rows := map[int]Demo4Row{}
	for _, b := range []int{0, 256, 512, 1024, 2048} {
		r, err := l.Demo4Row(40, b)
		if err != nil {
			t.Fatal(err)
		}
		rows[b] = r
	}
	if v := rows[2048].TTFTP90; v < 50e-3 || v > 54e-3 {
		t.Errorf("budget 2048 P90 TTFT = %.1f ms, want ~51-53", v*1e3)
	}
	if v := rows[256].TTFTP90; v < 58e-3 || v > 62e-3 {
		t.Errorf("budget 256 P90 TTFT = %.1f ms, want ~59-61", v*1e3)
	}
	monotonic := rows[256].TTFTP90 >= rows[512].TTFTP90 && rows[512].TTFTP90 >= rows[1024].TTFTP90 && rows[1024].TTFTP90 >= rows[2048].TTFTP90
	if monotonic {
		t.Errorf("P90 TTFT should not be monotonic in the budget: %+v", rows)
	}
	for _, b := range []int{256, 512, 1024, 2048} {
		if rows[b].TPOTP90 >= rows[0].TPOTP90 {
			t.Errorf("budget %d P90 TPOT %.2f ms not below prefill-first %.2f ms", b, rows[b].TPOTP90*1e3, rows[0].TPOTP90*1e3)
		}
	}
}

func TestDeterministicForASeed(t *testing.T) {
	l := lecture(t)
	a, _ := l.run(sim.Chunked{Budget: 512}, 30)
	b, _ := l.run(sim.Chunked{Budget: 512}, 30)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	l.Seed = 7
	c, _ := l.run(sim.Chunked{Budget: 512}, 30)
	if reflect.DeepEqual(a, c) {
		t.Fatal("a different seed gave the same run")
	}
}

// TestEmptyWorkloadIsAnError checks that a search over a workload that
// cannot be drawn reports PoissonLengths' error.
func TestEmptyWorkloadIsAnError(t *testing.T) {
	lec := Lecture{N: 0, Prompt: 512, Output: 64}
	if _, err := lec.searchWorkload()(10); err == nil || !strings.Contains(err.Error(), "requests must be") {
		t.Errorf("an empty lecture workload: %v", err)
	}
}

// BenchmarkSplitSearch is one of demo 3's simulated splits (2P+1D): a
// goodput search over full cluster runs on reused memory, as the page's
// chapter and `demo interference` run it.
func BenchmarkSplitSearch(b *testing.B) {
	l := Lecture{Step: lectureStep(b), N: 1500, Prompt: 512, Output: 64}
	mem := &sim.Scratch{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.on(mem).SimulatedSplit(2, 1, sim.SLO{TTFT: 0.2, TPOT: 0.1}, 0.9, 20); err != nil {
			b.Fatal(err)
		}
	}
}
