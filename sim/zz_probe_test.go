package sim

import "testing"

func BenchmarkZZDemo2Rate5(b *testing.B) {
	step, _ := DefaultStepModel()
	l := Lecture{Step: step, N: 1500, Prompt: 512, Output: 64}.on(&Scratch{})
	for b.Loop() {
		l.Demo2Rate(5)
	}
}
