package lab

import (
	"cmp"
	"math"
	"math/rand/v2"
	"servelab/sim"
	"slices"
	"testing"
)

func TestLabStallWithAndWithoutChunking(t *testing.T) {
	step := lectureStep(t)
	w := sim.DefaultLab()
	pf, err := sim.RunLab(sim.Config{Step: step, Policy: sim.PrefillFirst{MaxTokens: 32768}}, w)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sim.RunLab(sim.Config{Step: step, Policy: sim.Chunked{Budget: 2048}, Trace: true}, w)
	if err != nil {
		t.Fatal(err)
	}
	a, b := Of(pf), Of(ch)
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
	w := sim.DefaultLab()
	w.LongInputLen, w.Duration, w.InjectAfter = 200000, 5, 1
	out, err := sim.RunLab(sim.Config{Step: lectureStep(t), Policy: sim.Chunked{Budget: 2048}}, w)
	if err != nil {
		t.Fatal(err)
	}
	if Of(out).LongFailed != 1 || Of(out).LongError == "" || Of(out).LongTTFT != 0 {
		t.Fatalf("want a failed long request with its reason: %+v", Of(out))
	}
}

func TestLabValidates(t *testing.T) {
	for _, edit := range []func(*sim.LabWorkload){
		func(w *sim.LabWorkload) { w.InjectAfter = w.Duration },
		func(w *sim.LabWorkload) { w.Duration = math.Inf(1) },
		func(w *sim.LabWorkload) { w.ShortConcurrency = 0 },
		func(w *sim.LabWorkload) { w.LongInputLen = -1 },
	} {
		w := sim.DefaultLab()
		edit(&w)
		if _, err := sim.RunLab(sim.Config{Step: lectureStep(t), Policy: sim.Chunked{Budget: 2048}}, w); err == nil {
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
	base := sim.LabWorkload{ShortConcurrency: 8, ShortInputLen: 200, ShortOutputLen: 60, LongInputLen: 12000, LongOutputLen: 40, LongCount: 1, Duration: 20, InjectAfter: 6}
	type variant struct {
		name string
		w    func(w *sim.LabWorkload)
		lim  sim.Limits
	}
	variants := []variant{
		{"default", func(*sim.LabWorkload) {}, sim.Limits{}},
		{"no long", func(w *sim.LabWorkload) { w.LongCount = 0 }, sim.Limits{}},
		{"three longs", func(w *sim.LabWorkload) { w.LongCount = 3 }, sim.Limits{}},
		{"inject at zero", func(w *sim.LabWorkload) { w.InjectAfter = 0 }, sim.Limits{}},
		{"inject at the end", func(w *sim.LabWorkload) { w.InjectAfter = 19.999 }, sim.Limits{}},
		{"long rejected", func(w *sim.LabWorkload) { w.LongInputLen = 60000 }, sim.Limits{KVBlocks: 2000, BlockSize: 16}},
		{"tight cache", func(w *sim.LabWorkload) { w.ShortConcurrency = 64 }, sim.Limits{KVBlocks: 900, BlockSize: 16, Preempt: true}},
		{"cut short", func(*sim.LabWorkload) {}, sim.Limits{MaxIterations: 700}},
		{"default lab", func(w *sim.LabWorkload) { *w = sim.DefaultLab() }, sim.Limits{}},
	}
	fast := 0
	for _, v := range variants {
		for _, pol := range []sim.Policy{sim.PrefillFirst{MaxTokens: 65536}, sim.Chunked{Budget: 512}} {
			w := base
			v.w(&w)
			lo, err := sim.RunLab(sim.Config{Step: step, Policy: pol, Limits: v.lim}, w)
			if err != nil {
				t.Fatalf("%s, %s: %v", v.name, pol.Name(), err)
			}
			if want := Summarise(lo.Run); Of(lo) != want {
				t.Errorf("%s, %s:\n counted %+v\n   whole %+v", v.name, pol.Name(), Of(lo), want)
			}
			if lo.Counts != nil {
				fast++
			} else {
				t.Logf("%s, %s: the whole analysis (long TTFT %v, %d long failed)", v.name, pol.Name(), Of(lo).LongTTFT, Of(lo).LongFailed)
			}
		}
	}
	if fast < 2*len(variants)-6 {
		t.Errorf("only %d of %d runs were summarised from their counts", fast, 2*len(variants))
	}
}

// TestSummariseLabCountsAsItSorts checks Summarise's window figures,
// taken from gap counts, against Percentile over every gap: arrivals in
// order and not, ties, and NaNs.
func TestSummariseCountsAsItSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 200; trial++ {
		run := Run{Inject: 3, Long: []StreamResult{{OK: true, TTFT: 2}}, Wall: 10}
		for i := 0; i < 1+r.IntN(400); i++ {
			g := float64(r.IntN(6)) / 100
			if trial%7 == 0 && r.IntN(30) == 0 {
				g = math.NaN()
			}
			run.Arrivals = append(run.Arrivals, Arrival{T: float64(r.IntN(100)) / 10, Gap: g})
		}
		if trial%2 == 0 { // in order, as a simulated run records them
			slices.SortFunc(run.Arrivals, func(a, b Arrival) int { return cmp.Or(cmp.Compare(a.T, b.T), cmp.Compare(a.Gap, b.Gap)) })
		}
		got := Summarise(run)
		var all, quiet, during, after []float64
		for _, a := range run.Arrivals {
			all = append(all, a.Gap)
			switch {
			case a.T < 3:
				quiet = append(quiet, a.Gap)
			case a.T <= 5:
				during = append(during, a.Gap)
			default:
				after = append(after, a.Gap)
			}
		}
		last := func(xs []float64) float64 {
			if len(xs) == 0 {
				return 0
			}
			return xs[len(xs)-1]
		}
		want := [...]float64{sim.Percentile(all, 50), sim.Percentile(all, 90), sim.Percentile(all, 99), last(all),
			sim.Percentile(quiet, 50), sim.Percentile(quiet, 99), sim.Percentile(during, 50), sim.Percentile(during, 99), last(during), sim.Percentile(after, 99)}
		have := [...]float64{got.ITLP50, got.ITLP90, got.ITLP99, got.ITLMax,
			got.ITLQuietP50, got.ITLQuietP99, got.ITLDuringP50, got.ITLDuringP99, got.ITLDuringMax, got.ITLAfterP99}
		for i := range want {
			if !(have[i] == want[i] || (have[i] != have[i] && want[i] != want[i])) {
				t.Fatalf("trial %d: figure %d is %v, sorting gives %v", trial, i, have[i], want[i])
			}
		}
	}
}
