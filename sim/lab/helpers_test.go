package lab

import (
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
