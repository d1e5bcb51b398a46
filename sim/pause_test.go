package sim

import (
	"reflect"
	"testing"
)

// TestPauseChangesNothingAndCanEnd checks Config.Pause: called every
// pauseEvery steps, it leaves a run's results as they were; returning true
// ends the run there, cut short as MaxIterations would.
func TestPauseChangesNothingAndCanEnd(t *testing.T) {
	reqs, _ := PoissonLengths(300, 40, Uniform(100, 2000), Uniform(20, 300), 3)
	cfg := Config{Step: lectureStep(t), Policy: Chunked{Budget: 512}}
	want, err := Run(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	cfg.Pause = func() bool { calls++; return false }
	got, err := Run(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Results, want.Results) || got.Steps != want.Steps || got.Truncated {
		t.Errorf("a pause that never stops changed the run: %d steps (truncated %v), want %d", got.Steps, got.Truncated, want.Steps)
	}
	// decodeRun takes decode-only stretches without Step: fewer calls than steps/pauseEvery.
	if calls == 0 || calls > want.Steps/pauseEvery {
		t.Errorf("%d pauses in %d steps: want about one every %d steps of Step", calls, want.Steps, pauseEvery)
	}
	n := 0
	cfg.Pause = func() bool { n++; return n == 3 }
	cut, err := Run(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if c := Count(cut.Results); !cut.Truncated || c.Unfinished == 0 || cut.Steps >= want.Steps || n != 3 {
		t.Errorf("a pause that stops at its third call: %d steps of %d, truncated %v, %s, %d calls", cut.Steps, want.Steps, cut.Truncated, c, n)
	}
}
