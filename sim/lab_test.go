package sim

import (
	"math"
	"reflect"
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

// TestLabCountsAreSummariseLab checks the lab's summary, counted as the
// run goes, against the whole analysis over its arrivals, bit for bit:
// both schedulers, no, one and several long prompts, a long prompt that
// is rejected or never starts, an injection at time zero, a tight KV cache
// and a run cut short.
func TestLabCountsAreSummariseLab(t *testing.T) {
	step := lectureStep(t)
	base := LabWorkload{ShortConcurrency: 8, ShortInputLen: 200, ShortOutputLen: 60, LongInputLen: 12000, LongOutputLen: 40, LongCount: 1, Duration: 20, InjectAfter: 6}
	type variant struct {
		name string
		w    func(w *LabWorkload)
		lim  Limits
	}
	variants := []variant{
		{"default", func(*LabWorkload) {}, Limits{}},
		{"no long", func(w *LabWorkload) { w.LongCount = 0 }, Limits{}},
		{"three longs", func(w *LabWorkload) { w.LongCount = 3 }, Limits{}},
		{"inject at zero", func(w *LabWorkload) { w.InjectAfter = 0 }, Limits{}},
		{"inject at the end", func(w *LabWorkload) { w.InjectAfter = 19.999 }, Limits{}},
		{"long rejected", func(w *LabWorkload) { w.LongInputLen = 60000 }, Limits{KVBlocks: 2000, BlockSize: 16}},
		{"tight cache", func(w *LabWorkload) { w.ShortConcurrency = 64 }, Limits{KVBlocks: 900, BlockSize: 16, Preempt: true}},
		{"cut short", func(*LabWorkload) {}, Limits{MaxIterations: 700}},
		{"default lab", func(w *LabWorkload) { *w = DefaultLab() }, Limits{}},
	}
	fast := 0
	for _, v := range variants {
		for _, pol := range []Policy{PrefillFirst{MaxTokens: 65536}, Chunked{Budget: 512}} {
			w := base
			v.w(&w)
			l, err := NewLab(Config{Step: step, Policy: pol, Limits: v.lim}, w, nil)
			if err != nil {
				t.Fatalf("%s, %s: %v", v.name, pol.Name(), err)
			}
			for {
				if _, ok := l.Step(); !ok {
					break
				}
			}
			out := &Outcome{}
			out.finish(l.e)
			lo := l.Finish(out)
			if want := SummariseLab(lo.Run); lo.Summary != want {
				t.Errorf("%s, %s:\n counted %+v\n   whole %+v", v.name, pol.Name(), lo.Summary, want)
			}
			if _, ok := l.counted(lo.Run); ok {
				fast++
			} else {
				t.Logf("%s, %s: the whole analysis (long TTFT %v, %d long failed)", v.name, pol.Name(), lo.Summary.LongTTFT, lo.Summary.LongFailed)
			}
		}
	}
	if fast < 2*len(variants)-6 {
		t.Errorf("only %d of %d runs were summarised from their counts", fast, 2*len(variants))
	}
}

// The lab's loop on an engine that settles its batch lazily (as the page
// drives it, traced) gives the trace, the arrivals and the summary of the
// same loop step by step.
func TestLabSettledLazilyIsThePlainLab(t *testing.T) {
	step := lectureStep(t)
	base := LabWorkload{ShortConcurrency: 8, ShortInputLen: 200, ShortOutputLen: 60, LongInputLen: 12000, LongOutputLen: 40, LongCount: 1, Duration: 20, InjectAfter: 6}
	run := func(cfg Config, w LabWorkload, lazy bool) (*LabOutcome, []Iteration) {
		l, err := NewLab(cfg, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lazy {
			l.Engine().SettleLazily()
		}
		out := &Outcome{}
		for {
			it, ok := l.Step()
			if !ok {
				break
			}
			out.record(it, true)
		}
		out.finish(l.e)
		return l.Finish(out), out.Iterations
	}
	for _, w := range []LabWorkload{base, DefaultLab(), {ShortConcurrency: 16, ShortInputLen: 64, ShortOutputLen: 1, LongInputLen: 4000, LongOutputLen: 8, LongCount: 2, Duration: 5, InjectAfter: 1}} {
		for _, pol := range []Policy{PrefillFirst{MaxTokens: 65536}, Chunked{Budget: 512}} {
			for _, lim := range []Limits{{}, {KVBlocks: 2000, BlockSize: 16}, {MaxIterations: 700}} {
				cfg := Config{Step: step, Policy: pol, Limits: lim, Trace: true, CountGaps: true}
				plain, pits := run(cfg, w, false)
				lazy, lits := run(cfg, w, true)
				if !reflect.DeepEqual(lits, pits) {
					t.Fatalf("%+v, %s, %+v: the lazily settled lab's trace differs", w, pol.Name(), lim)
				}
				if !reflect.DeepEqual(lazy.Run, plain.Run) || lazy.Summary != plain.Summary || !reflect.DeepEqual(lazy.Outcome.Results, plain.Outcome.Results) {
					t.Fatalf("%+v, %s, %+v: the lazily settled lab's arrivals, summary or results differ", w, pol.Name(), lim)
				}
			}
		}
	}
}
