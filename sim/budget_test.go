package sim

import (
	"strings"
	"testing"
)

// The budget is a pure function of the workload and the step model: run.py's
// default workload passes, the hour of 1024 streams of 100,000
// tokens does not, and the open loop counts requests and outputs.
func TestBudgetChecks(t *testing.T) {
	step, err := DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLab(DefaultLab(), step, "x"); err != nil {
		t.Errorf("run.py's defaults: %v", err)
	}
	w := DefaultLab()
	w.ShortConcurrency, w.ShortOutputLen, w.Duration = 1024, 100000, 3600
	err = CheckLab(w, step, "the knobs")
	if err == nil || !strings.Contains(err.Error(), "GB a run may use: lower the knobs") {
		t.Errorf("an hour of 1024 long streams: %v", err)
	}
	if _, _, b := LabBytes(LabWorkload{ShortConcurrency: 1}, step); b != 0 {
		t.Errorf("a workload of no duration is left to RunLab: %g bytes", b)
	}
	if err := CheckOpenLoop(make([]Request, 1000), "x"); err != nil {
		t.Errorf("1000 requests: %v", err)
	}
	reqs := []Request{{Output: 1 << 30}}
	if err := CheckOpenLoop(reqs, "--output"); err == nil || !strings.Contains(err.Error(), "the workload (--output) keeps 1 requests") {
		t.Errorf("a billion output tokens: %v", err)
	}
}
