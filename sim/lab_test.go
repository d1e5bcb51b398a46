package sim

import (
	"math"
	"testing"
)

func TestLabStallWithAndWithoutChunking(t *testing.T) {
	step := lectureStep(t)
	w := DefaultLab()
	pf, err := RunLab(Config{Step: step, Policy: PrefillFirst{MaxTokens: 32768}}, w)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := RunLab(Config{Step: step, Policy: Chunked{Budget: 2048}, Trace: true}, w)
	if err != nil {
		t.Fatal(err)
	}
	a, b := pf.Summary, ch.Summary
	whole := step.Prefill(w.LongInputLen).Seconds
	// Prefill-first: the worst gap is the whole prefill (plus at most one decode step) ...
	if a.WorstGap < whole || a.WorstGap > whole+2*a.ITLQuietP50 {
		t.Errorf("prefill-first worst gap %.1f ms, whole prefill %.1f ms", a.WorstGap*1e3, whole*1e3)
	}
	// ... and the stall starts within one step of the injection.
	if start := a.WorstGapOffset - a.WorstGap; math.Abs(start) > 1.5*a.ITLQuietP50 {
		t.Errorf("prefill-first stall starts %.1f ms from injection, more than a step", start*1e3)
	}
	// Chunked: bounded by about one chunk's step, an order of magnitude smaller.
	longest := 0.0
	for _, it := range ch.Outcome.Iterations {
		longest = math.Max(longest, it.Duration)
	}
	if b.WorstGap > longest+b.ITLQuietP50 || b.WorstGap*10 > a.WorstGap {
		t.Errorf("chunked worst gap %.1f ms (longest step %.1f ms) vs prefill-first %.1f ms", b.WorstGap*1e3, longest*1e3, a.WorstGap*1e3)
	}
	if r := b.LongTTFT / a.LongTTFT; r < 0.9 || r > 1.2 {
		t.Errorf("long TTFT should move little: %.3f s -> %.3f s", a.LongTTFT, b.LongTTFT)
	}
	if a.ShortCompleted < 400 || a.ShortFailed != 0 || a.LongFailed != 0 || a.TokensObserved < 100000 {
		t.Errorf("implausible run: %+v", a)
	}
	t.Logf("prefill-first worst gap %.1f ms at %+.3f s, long TTFT %.1f ms; chunked 2048 worst gap %.1f ms, long TTFT %.1f ms; spike %.0fx vs %.1fx",
		a.WorstGap*1e3, a.WorstGapOffset, a.LongTTFT*1e3, b.WorstGap*1e3, b.LongTTFT*1e3, a.SpikeRatio, b.SpikeRatio)
}

func TestLabLongPromptTooLongFails(t *testing.T) {
	w := DefaultLab()
	w.LongInputLen, w.Duration, w.InjectAfter = 200000, 5, 1
	out, err := RunLab(Config{Step: lectureStep(t), Policy: Chunked{Budget: 2048}}, w)
	if err != nil {
		t.Fatal(err)
	}
	if out.Summary.LongFailed != 1 || out.Summary.LongError == "" || out.Summary.LongTTFT != 0 {
		t.Fatalf("want a failed long request with its reason: %+v", out.Summary)
	}
}

func TestLabValidates(t *testing.T) {
	for _, edit := range []func(*LabWorkload){
		func(w *LabWorkload) { w.InjectAfter = w.Duration },
		func(w *LabWorkload) { w.Duration = math.Inf(1) },
		func(w *LabWorkload) { w.ShortConcurrency = 0 },
		func(w *LabWorkload) { w.LongInputLen = -1 },
	} {
		w := DefaultLab()
		edit(&w)
		if _, err := RunLab(Config{Step: lectureStep(t), Policy: Chunked{Budget: 2048}}, w); err == nil {
			t.Errorf("accepted %+v", w)
		}
	}
}
