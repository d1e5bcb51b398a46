package sim

import "testing"

func BenchmarkZZSplit(b *testing.B) {
	l := Lecture{Step: lectureStep(b), N: 1500, Prompt: 512, Output: 64}
	mem := &Scratch{}
	for b.Loop() {
		if _, err := l.on(mem).SimulatedSplit(2, 1, SLO{TTFT: 0.2, TPOT: 0.1}, 0.9, 20); err != nil {
			b.Fatal(err)
		}
	}
}
