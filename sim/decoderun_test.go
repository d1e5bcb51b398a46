package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"testing"
)

// plainRun is Run without its fast path: one Step per iteration.
func plainRun(t testing.TB, cfg Config, reqs []Request) *Outcome {
	out, _ := steppedRun(t, cfg, reqs, false, nil)
	return out
}

// lazyTracedRun is plainRun with the running batch settled lazily
// (SettleLazily), as the page's traced runs are driven; it reports how many
// decode steps were settled lazily.
func lazyTracedRun(t testing.TB, cfg Config, reqs []Request) (*Outcome, int) {
	return steppedRun(t, cfg, reqs, true, nil)
}

// steppedRun drives an engine one Step at a time (lazily settled when
// lazy, on mem's memory when mem is not nil), reading its gaps before its
// results, as the page reads them.
func steppedRun(t testing.TB, cfg Config, reqs []Request, lazy bool, mem *Scratch) (*Outcome, int) {
	t.Helper()
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if mem != nil {
		e.UseMemory(mem, len(reqs))
	}
	e.noItems = !cfg.Trace
	if lazy {
		e.SettleLazily()
	}
	for _, r := range reqs {
		_ = e.Submit(r)
	}
	out, lazySteps := &Outcome{}, 0
	for {
		it, ok := e.Step()
		if !ok {
			break
		}
		if e.lz.on && it.Decodes > 0 {
			lazySteps++
		}
		out.record(it, cfg.Trace)
	}
	gaps := slices.Clone(e.Gaps())
	out.finish(e)
	if cfg.CountGaps {
		out.Gaps = gaps
	}
	return out, lazySteps
}

// unknownPolicy hides a shipped policy's type, so the engine treats it as
// any other policy: no fast path, no shortcut of the queue walk.
type unknownPolicy struct{ Policy }

func (p unknownPolicy) Role() Role {
	if r, ok := p.Policy.(Roled); ok {
		return r.Role()
	}
	return Colocated
}

// mergedGaps is a gap multiset in one canonical form: by value, each value once.
func mergedGaps(gs []GapCount) []GapCount {
	gs = slices.Clone(gs)
	slices.SortFunc(gs, func(a, b GapCount) int {
		switch {
		case a.Gap < b.Gap:
			return -1
		case a.Gap > b.Gap:
			return 1
		}
		return 0
	})
	var out []GapCount
	for _, g := range gs {
		if n := len(out); n > 0 && out[n-1].Gap == g.Gap {
			out[n-1].N += g.N
		} else if g.N > 0 {
			out = append(out, g)
		}
	}
	return out
}

// fastPathCases are runs that exercise every way a run of decode steps ends:
// arrivals, completions of mixed lengths, budgets smaller than the batch,
// KV blocks running out (preemption), reserved KV, sequence limits and a
// run cut short.
//
// Under js/wasm (make test-wasm: the tests under node, as the page runs the
// code) each policy meets each set of limits at one of the three rates, the
// rate turning from pair to pair, rather than at all three: a third of that
// grid, the other cases whole. The tests that walk these cases compare two
// paths of the same code, run by the same build: what wasm could change
// under them (float arithmetic, which neither amd64's nor wasm's Go fuses;
// int sizes; map order) is the same for both paths, so the whole grid, which
// native `go test` runs, would tell no more there; the third keeps every
// policy, every limit and every rate under node, in half the time (these
// three tests: 16.9 s under node before, 8.7 s after).
func fastPathCases(t testing.TB) []struct {
	name string
	cfg  Config
	reqs []Request
} {
	step := lectureStep(t)
	type tc = struct {
		name string
		cfg  Config
		reqs []Request
	}
	var cases []tc
	poisson := func(n int, rate float64, p, o Lengths, seed uint64) []Request {
		r, err := PoissonLengths(n, rate, p, o, seed)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	policies := []Policy{PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}, Chunked{Budget: 2048},
		Chunked{Budget: 512, ExcludeDecodes: true}, Chunked{Budget: 16}, DecodeOnlyPolicy{}, PrefillOnlyPolicy{MaxTokens: 4096}}
	limits := []Limits{{}, {MaxSeqs: 8}, {KVBlocks: 400, Preempt: true}, {KVBlocks: 300, BlockSize: 4, Preempt: true, MaxSeqs: 64},
		{KVBlocks: 500}, {MaxIterations: 777}}
	for pi, p := range policies {
		for li, l := range limits {
			for ri, rate := range []float64{3, 40, 400} {
				if runtime.GOOS == "js" && (pi+li+ri)%3 != 0 {
					continue
				}
				reqs := poisson(300, rate, Uniform(1, 700), LogNormal(4, 1, 1, 400), uint64(pi*10+li))
				cases = append(cases, tc{fmt.Sprintf("%s/limits%d/rate%g", p.Name(), li, rate),
					Config{Step: step, Policy: p, Limits: l}, reqs})
			}
		}
	}
	// The lecture's fixed lengths, where whole batches finish together.
	for _, p := range policies[:5] {
		cases = append(cases, tc{p.Name() + "/lecture", Config{Step: step, Policy: p}, poisson(1500, 20, Fixed(512), Fixed(64), 0)})
	}
	// The vllm profile's refined physics (per-sequence CPU cost, smooth
	// roofline...) and a sliding window price steps differently: the fast
	// path must still price each step as Step does.
	prof, err := BuiltinProfile("vllm")
	if err != nil {
		t.Fatal(err)
	}
	refined, err := prof.Apply(step)
	if err != nil {
		t.Fatal(err)
	}
	windowed := refined
	windowed.Model.SlidingWindow = 256
	for _, st := range []struct {
		name string
		step StepModel
	}{{"vllm", refined}, {"window", windowed}} {
		for _, p := range policies[:3] {
			for _, l := range []Limits{limits[2], {}} { // (without preemption a run may settle its batch lazily)
				cases = append(cases, tc{p.Name() + "/" + st.name, Config{Step: st.step, Policy: p, Limits: l},
					poisson(300, 40, Uniform(1, 700), LogNormal(4, 1, 1, 400), 7)})
			}
		}
	}
	// Requests out of order and at the same instant, one with output 1.
	same := []Request{{ID: 3, Arrival: 0.5, Prompt: 100, Output: 50}, {ID: 1, Arrival: 0, Prompt: 10, Output: 1},
		{ID: 2, Arrival: 0.5, Prompt: 100, Output: 200}, {ID: 0, Arrival: 0.01, Prompt: 3000, Output: 90}}
	for _, p := range policies {
		cases = append(cases, tc{p.Name() + "/handmade", Config{Step: step, Policy: p}, same})
	}
	return cases
}

// TestFastPathIsPlainPath runs every case through Run (which advances runs
// of decode steps at once), through Step alone, and with the policy hidden
// behind an unknown type (the plain path throughout): results, step counts,
// end times, token times and gap counts must be identical, bit for bit.
func TestFastPathIsPlainPath(t *testing.T) {
	for _, c := range fastPathCases(t) {
		for _, rec := range []bool{false, true} {
			cfg := c.cfg
			cfg.RecordTokens, cfg.CountGaps = rec, true
			fast, err := Run(cfg, c.reqs)
			if err != nil {
				t.Fatal(err)
			}
			plain := plainRun(t, cfg, c.reqs)
			cfg.Policy = unknownPolicy{cfg.Policy}
			unknown, err := Run(cfg, c.reqs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(unknown.Results, plain.Results) || unknown.Steps != plain.Steps || unknown.End != plain.End {
				t.Fatalf("%s (tokens %v): a shipped policy runs differently from the same policy unknown", c.name, rec)
			}
			if !reflect.DeepEqual(fast.Results, plain.Results) || fast.Steps != plain.Steps || fast.End != plain.End || fast.Truncated != plain.Truncated {
				t.Fatalf("%s (tokens %v): fast path differs: %d steps, end %v; plain %d steps, end %v", c.name, rec, fast.Steps, fast.End, plain.Steps, plain.End)
			}
			if !reflect.DeepEqual(mergedGaps(fast.Gaps), mergedGaps(plain.Gaps)) {
				t.Fatalf("%s: gap counts differ", c.name)
			}
			if rec {
				// Counted gaps give the figures every token's time gives.
				if got, want := fast.Summary(), Summarize(plain.Results); got != want {
					t.Fatalf("%s: summary from gap counts\n got %#v\nwant %#v", c.name, got, want)
				}
			}
		}
	}
}

// TestFastPathIsUsed checks the fast path does what it is for: a decode-heavy
// run takes most of its steps in runs, not one by one.
func TestFastPathIsUsed(t *testing.T) {
	step := lectureStep(t)
	reqs, _ := Poisson(200, 5, 512, 256, 0)
	e, _ := NewEngine(Config{Step: step, Policy: PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}})
	e.noItems = true
	for _, r := range reqs {
		_ = e.Submit(r)
	}
	e.allowLazy()
	fast, plain, lazy := 0, 0, 0
	for {
		fast += e.decodeRun(math.Inf(1))
		if _, ok := e.Step(); !ok {
			break
		}
		plain++
		if e.lz.on {
			lazy++
		}
	}
	if fast < 4*plain {
		t.Errorf("%d steps in runs, %d one by one: the fast path is barely used", fast, plain)
	}
	if lazy < plain*9/10 {
		t.Errorf("lazy in %d of %d steps one by one", lazy, plain)
	}
}

func TestGapPercentilesMatchPercentile(t *testing.T) {
	var counts []GapCount
	var all []float64
	for i := range 500 {
		g := GapCount{Gap: float64((i * 7919) % 37), N: i % 5}
		counts = append(counts, g)
		for range g.N {
			all = append(all, g.Gap)
		}
		if i%23 != 0 {
			continue
		}
		p50, p90, p99, top := GapPercentiles(slices.Clone(counts))
		sorted := slices.Clone(all)
		want := [4]float64{Percentile(sorted, 50), Percentile(sorted, 90), Percentile(sorted, 99), 0}
		if len(sorted) > 0 {
			want[3] = sorted[len(sorted)-1]
		}
		if got := [4]float64{p50, p90, p99, top}; got != want {
			t.Fatalf("%d counts: %v, Percentile gives %v", len(counts), got, want)
		}
	}
}

// The percentiles with NaN gaps among them (sorted first, as Percentile
// sorts them), several ranks on one value, and the sorting fallback of a
// selection whose pivots keep failing.
func TestGapPercentilesWithNaNsAndTheFallback(t *testing.T) {
	for _, nanN := range []int{0, 1, 40, 400, 5000} {
		counts := []GapCount{{Gap: math.NaN(), N: nanN}}
		all := slices.Repeat([]float64{math.NaN()}, nanN)
		for i := range 900 {
			g := GapCount{Gap: float64((i*104729)%613) / 7, N: 1 + i%4}
			counts = append(counts, g)
			for range g.N {
				all = append(all, g.Gap)
			}
		}
		sorted := slices.Clone(all)
		want := [3]float64{Percentile(sorted, 50), Percentile(sorted, 90), Percentile(sorted, 99)}
		p50, p90, p99, _ := GapPercentiles(slices.Clone(counts))
		if got := [3]float64{p50, p90, p99}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d NaNs: %v, Percentile gives %v", nanN, got, want)
		}
		// The fallback alone, on the numbers.
		nums := slices.DeleteFunc(slices.Clone(counts), func(c GapCount) bool { return c.Gap != c.Gap })
		total := len(all) - nanN
		rs := []int{0, rank(total, 50), rank(total, 50), rank(total, 99), total - 1}
		wantR := make([]float64, len(rs))
		for i, r := range rs {
			wantR[i] = sorted[nanN+r]
		}
		vs := make([]float64, len(rs))
		selectRanks(nums, slices.Clone(rs), vs, 64)
		if !slices.Equal(vs, wantR) {
			t.Errorf("sorting fallback: ranks %v give %v, want %v", rs, vs, wantR)
		}
	}
}

func TestPercentiles3MatchPercentile(t *testing.T) {
	for n := 0; n < 300; n += 7 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64((i*104729)%(n/3+1)) / 8 // many ties
		}
		sorted := slices.Clone(xs)
		want := [3]float64{Percentile(sorted, 50), Percentile(sorted, 90), Percentile(sorted, 99)}
		if a, b, c := Percentiles3(slices.Clone(xs)); [3]float64{a, b, c} != want {
			t.Fatalf("n=%d: %v, %v, %v; Percentile gives %v", n, a, b, c, want)
		}
		if got := percentile(xs, 90); got != want[1] {
			t.Fatalf("n=%d: P90 %v; Percentile gives %v", n, got, want[1])
		}
	}
}

// TestClusterFastPathIsPlainPath compares disaggregated runs with and
// without the trace (which keeps every step, so it takes the plain path):
// the same results, placements and per-instance figures.
func TestClusterFastPathIsPlainPath(t *testing.T) {
	step := lectureStep(t)
	for _, c := range []Cluster{
		{Prefill: 2, Decode: 1},
		{Prefill: 1, Decode: 3, Router: RoundRobin},
		{Prefill: 3, Decode: 2, Limits: Limits{KVBlocks: 300, Preempt: true}},
		{Prefill: 1, Decode: 1, Limits: Limits{MaxSeqs: 6, MaxIterations: 3000}},
		{Prefill: 2, Decode: 2, LinkBW: math.Inf(1)},
	} {
		for _, rate := range []float64{4, 30, 200} {
			for _, rec := range []bool{false, true} {
				reqs, _ := PoissonLengths(400, rate, Uniform(1, 900), LogNormal(4, 1, 1, 300), uint64(rate))
				c.Step, c.RecordTokens = step, rec
				fast, err := RunDisaggregated(c, reqs)
				if err != nil {
					t.Fatal(err)
				}
				c.Trace = true
				plain, err := RunDisaggregated(c, reqs)
				if err != nil {
					t.Fatal(err)
				}
				c.Trace = false
				for i := range plain.Instances {
					busy := 0.0 // each iteration's duration, summed in order: what Busy is
					for _, it := range plain.Instances[i].Iterations {
						busy += it.Duration
					}
					if plain.Instances[i].Busy != busy {
						t.Fatalf("%s at %g req/s: instance %d is busy %v s, its iterations sum to %v", c, rate, i, plain.Instances[i].Busy, busy)
					}
					plain.Instances[i].Iterations = nil
				}
				if !reflect.DeepEqual(fast.Results, plain.Results) || !reflect.DeepEqual(fast.Placements, plain.Placements) ||
					!reflect.DeepEqual(fast.Instances, plain.Instances) || fast.Steps != plain.Steps || fast.End != plain.End {
					t.Fatalf("%s at %g req/s (tokens %v): the fast path differs (%d vs %d steps)", c, rate, rec, fast.Steps, plain.Steps)
				}
			}
		}
	}
}

func TestSortFloatsIsSortFloat64s(t *testing.T) {
	for _, c := range [][2]int{{63, 7}, {64, 7}, {1024, 1}, {5000, 7}, {5000, 20}, {70000, 30}} {
		n, stretch := c[0], c[1]
		xs := make([]float64, n)
		for i := range xs {
			switch (i / stretch) % 11 { // stretches of one value, as a run's gaps come
			case 0:
				xs[i] = math.NaN()
			case 1:
				xs[i] = -float64(i%97) / 3
			case 2:
				xs[i] = math.Inf(1 - 2*(i%2))
			default:
				xs[i] = float64((i/stretch*7919)%1013) * 1e-3
			}
		}
		want := slices.Clone(xs)
		sort.Float64s(want)
		sortFloats(xs)
		for i := range xs {
			if !(xs[i] == want[i] || (xs[i] != xs[i] && want[i] != want[i])) {
				t.Fatalf("n=%d: at %d %v, sort.Float64s has %v", n, i, xs[i], want[i])
			}
		}
	}
}

// TestDecodeOnlyKeepsItsLimits: arrivals a decode instance cannot admit yet
// wait; they used to be swept into the batch with the next finisher.
func TestDecodeOnlyKeepsItsLimits(t *testing.T) {
	step := lectureStep(t)
	reqs, _ := Poisson(50, 1000, 512, 64, 0)
	for _, lim := range []Limits{{MaxSeqs: 4}, {KVBlocks: 200}, {KVBlocks: 200, Preempt: true}} {
		e, _ := NewEngine(Config{Step: step, Policy: DecodeOnlyPolicy{}, Limits: lim})
		for _, r := range reqs {
			_ = e.Submit(r)
		}
		for {
			if _, ok := e.Step(); !ok {
				break
			}
			if _, r := e.Queued(); lim.MaxSeqs > 0 && r > lim.MaxSeqs {
				t.Fatalf("%+v: %d sequences running", lim, r)
			}
			if e.freeKV < 0 {
				t.Fatalf("%+v: KV cache overcommitted by %d blocks", lim, -e.freeKV)
			}
		}
		if c := Count(e.Results()); c.Completed != len(reqs) {
			t.Errorf("%+v: %v", lim, c)
		}
	}
}

// TestScratchRunsAreFreshRuns: a search's runs reuse the memory of the one
// before (scratch); each must come out as a run of its own would.
func TestScratchRunsAreFreshRuns(t *testing.T) {
	step := lectureStep(t)
	var sc scratch
	var csc clusterScratch
	for i, n := range []int{300, 900, 40, 600, 1} {
		reqs, _ := PoissonLengths(n, float64(10+30*i), Uniform(1, 800), Uniform(1, 200), uint64(i))
		for _, p := range []Policy{PrefillFirst{MaxTokens: 4096}, Chunked{Budget: 256}, DecodeOnlyPolicy{}} {
			cfg := Config{Step: step, Policy: p, Limits: Limits{MaxSeqs: 64}}
			want, _ := Run(cfg, reqs)
			got, _ := run(cfg, reqs, &sc)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("run %d (%s): a run on scratch differs from a fresh one", i, p.Name())
			}
		}
		c := Cluster{Step: step, Prefill: 1 + i%3, Decode: 1 + i%2, Limits: Limits{MaxSeqs: 32}}
		want, _ := RunDisaggregated(c, reqs)
		got, _ := runDisaggregated(c, reqs, &csc)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cluster run %d: a run on scratch differs from a fresh one", i)
		}
	}
}

// TestSecondsIsPrice checks the hot loops' prices: Seconds and the decode
// pricer give Price's seconds bit for bit, under every profile, under TP
// and with a sliding window, for decode steps, chunks and mixed steps.
func TestSecondsIsPrice(t *testing.T) {
	var steps []StepModel
	for _, prof := range ProfileNames() {
		for _, tp := range []int{1, 2, 8} {
			steps = append(steps, profiled(t, prof, "Llama-3.1-8B", "H100-SXM", tp))
		}
	}
	windowed := steps[len(steps)-1]
	windowed.Model.SlidingWindow = 256
	steps = append(steps, windowed)
	for _, s := range steps {
		for _, n := range []int{1, 7, 32, 256} {
			p := s.decodePricer(n)
			for kv := n; kv < 2_000_000; kv = kv*3 + 1 {
				nf, kvf := float64(n), float64(kv)
				w := Work{Tokens: nf, Pairs: kvf, KVTokens: kvf + nf, Seqs: nf, Sampled: nf}
				if got, want := p.at(kvf), s.Price(w).Seconds; got != want {
					t.Fatalf("%s TP %d: decode of %d over %d: pricer %v, Price %v", s.Profile, s.TP, n, kv, got, want)
				}
				w.Window = s.Model.SlidingWindow
				w.AddChunk(kv%1000, 1+kv%3000, kv%2 == 0)
				if got, want := s.Seconds(&w), s.Price(w).Seconds; got != want {
					t.Fatalf("%s TP %d: %+v: Seconds %v, Price %v", s.Profile, s.TP, w, got, want)
				}
			}
		}
	}
}

// TestMergeRunsIsSortStable checks the cluster's ordering of requests by
// time against the stable sort it replaces: sorted, interleaved stretches,
// reversed, random, ties and NaNs.
func TestMergeRunsIsSortStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 400; trial++ {
		n := r.IntN(300)
		keys := make([]float64, n)
		for i := range keys {
			switch trial % 5 {
			case 0:
				keys[i] = float64(i / 3)
			case 1:
				keys[i] = float64(i%7)*100 + float64(i/7) // seven interleaved ascending stretches
			case 2:
				keys[i] = float64(n - i)
			case 3:
				keys[i] = float64(r.IntN(20))
			default:
				keys[i] = r.Float64()
				if r.IntN(10) == 0 {
					keys[i] = math.NaN()
				}
			}
		}
		idx := r.Perm(n) // request indices in the order the requests come
		want := slices.Clone(idx)
		key := make(map[int]float64, n)
		for i, j := range idx {
			key[j] = keys[i]
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(key[a], key[b]) })
		mergeRuns(idx, slices.Clone(keys))
		if !slices.Equal(idx, want) {
			t.Fatalf("trial %d (n %d): mergeRuns %v, stable sort %v", trial, n, idx, want)
		}
	}
}

// TestSearchesCutRunsExactly checks the goodput searches that end a run
// once its answer is known: each finds the rate the plain search finds
// (every run to the end, Attainment of all its results).
func TestSearchesCutRunsExactly(t *testing.T) {
	step := lectureStep(t)
	prof, _ := BuiltinProfile("vllm")
	vllm, err := prof.Apply(step) // a per-request latency outside the engine shifts every TTFT
	if err != nil {
		t.Fatal(err)
	}
	wl := func(rate float64) ([]Request, error) {
		return PoissonLengths(400, rate, Uniform(64, 1024), LogNormal(4, 0.8, 1, 300), 3)
	}
	for _, slo := range []SLO{{TTFT: 0.1, TPOT: 0.015}, {TTFT: 0.3}, {TPOT: 0.02}, {TTFT: 0.05, TPOT: 0.03}} {
		for _, target := range []float64{0.5, 0.9, 0.99} {
			for _, cfg := range []Config{{Step: step, Policy: PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}},
				{Step: step, Policy: Chunked{Budget: 512}, Limits: Limits{MaxSeqs: 32}},
				{Step: vllm, Policy: PrefillOnlyPolicy{MaxTokens: 8192}}} {
				got, gotSat, err := InstanceGoodput(cfg, wl, slo, target, 300)
				if err != nil {
					t.Fatal(err)
				}
				want, wantSat, _ := Goodput(func(rate float64) (float64, error) {
					reqs, _ := wl(rate)
					out, err := Run(cfg, reqs)
					if err != nil {
						return 0, err
					}
					return Attainment(out.Results, slo), nil
				}, target, 300)
				if got != want || gotSat != wantSat {
					t.Errorf("%s %+v target %g: search %v (saturated %v), plain search %v (%v)", cfg.Policy.Name(), slo, target, got, gotSat, want, wantSat)
				}
			}
			c := Cluster{Step: step, Prefill: 2, Decode: 1}
			got, _, gotSat, err := ClusterGoodput(c, wl, slo, target, 300)
			if err != nil {
				t.Fatal(err)
			}
			want, wantSat, _ := Goodput(func(rate float64) (float64, error) {
				reqs, _ := wl(rate)
				out, err := RunDisaggregated(c, reqs)
				if err != nil {
					return 0, err
				}
				return Attainment(out.Results, slo), nil
			}, target, 300)
			if got != want || gotSat != wantSat {
				t.Errorf("cluster %+v target %g: search %v (saturated %v), plain search %v (%v)", slo, target, got, gotSat, want, wantSat)
			}
		}
	}
}

// TestPoissonDrawsArePoisson checks a search's workload, drawn once,
// against PoissonLengths at each rate.
func TestPoissonDrawsArePoisson(t *testing.T) {
	for _, l := range [][2]Lengths{{Fixed(512), Fixed(64)}, {Uniform(1, 700), LogNormal(4, 1, 1, 400)}} {
		d, err := DrawPoisson(500, l[0], l[1], 9)
		if err != nil {
			t.Fatal(err)
		}
		for _, rate := range []float64{0.3, 7, 40, 333.3, 1e6} {
			got, _ := d.at(rate)
			want, _ := PoissonLengths(500, rate, l[0], l[1], 9)
			if !slices.EqualFunc(got, want, func(a, b Request) bool { return reflect.DeepEqual(a, b) }) {
				t.Fatalf("%v at %g req/s: drawn once differs from PoissonLengths", l, rate)
			}
		}
		if _, err := d.at(0); err == nil {
			t.Error("rate 0 accepted")
		}
	}
}

// TestTracedGapsAreTokenTimes checks what a traced run notes for a view
// without keeping token times: the gaps counted by value give every token
// time's figures, and each step's MaxGap is the largest gap before one of
// the tokens it emits (each token found by its time).
func TestTracedGapsAreTokenTimes(t *testing.T) {
	for _, c := range fastPathCases(t) {
		cfg := c.cfg
		cfg.Trace, cfg.RecordTokens, cfg.CountGaps = true, true, true
		out, err := Run(cfg, c.reqs)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := out.Summary(), Summarize(out.Results); got != want {
			t.Fatalf("%s: summary from gap counts\n got %#v\nwant %#v", c.name, got, want)
		}
		pos := map[int]int{}
		for i, r := range out.Results {
			pos[r.ID] = i
		}
		withGap := 0
		for _, it := range out.Iterations {
			want := 0.0
			for _, item := range it.Items {
				ts := out.Results[pos[item.ID]].TokenTimes
				if j, ok := slices.BinarySearch(ts, it.End()); item.Emit && ok && j > 0 {
					want = max(want, ts[j]-ts[j-1])
				}
			}
			if it.MaxGap != want {
				t.Fatalf("%s: step %d's largest gap %v, its tokens' times say %v", c.name, it.Index, it.MaxGap, want)
			}
			if want > 0 {
				withGap++
			}
		}
		if withGap == 0 && len(ITLs(out.Results)) > 0 {
			t.Fatalf("%s: no step has a gap", c.name)
		}
	}
}

// A traced run whose batch is settled lazily gives the trace and results
// of the same run step by step: every iteration with its items and largest
// gap, every result, the gap counts; and most steps of a decode-heavy run
// are lazy ones. So does the run on memory that earlier runs used.
func TestSettleLazilyIsThePlainTrace(t *testing.T) {
	lazySteps, steps := 0, 0
	mem := &Scratch{}
	for _, c := range fastPathCases(t) {
		cfg := c.cfg
		cfg.Trace, cfg.CountGaps = true, true
		plain := plainRun(t, cfg, c.reqs)
		lazy, n := lazyTracedRun(t, cfg, c.reqs)
		lazySteps, steps = lazySteps+n, steps+plain.Steps
		// As the page runs: on memory the runs before it used (its results in it).
		onMem, _ := steppedRun(t, cfg, c.reqs, true, mem)
		if !reflect.DeepEqual(onMem.Results, plain.Results) || !reflect.DeepEqual(onMem.Iterations, plain.Iterations) {
			t.Fatalf("%s: a run on reused memory differs", c.name)
		}
		if !reflect.DeepEqual(lazy.Iterations, plain.Iterations) {
			for k := range min(len(lazy.Iterations), len(plain.Iterations)) {
				if !reflect.DeepEqual(lazy.Iterations[k], plain.Iterations[k]) {
					t.Fatalf("%s: step %d differs:\n lazy %+v\nplain %+v", c.name, k, lazy.Iterations[k], plain.Iterations[k])
				}
			}
			t.Fatalf("%s: %d steps lazily, %d plain", c.name, len(lazy.Iterations), len(plain.Iterations))
		}
		if !reflect.DeepEqual(lazy.Results, plain.Results) || lazy.End != plain.End || lazy.Truncated != plain.Truncated {
			t.Fatalf("%s: results differ", c.name)
		}
		if !reflect.DeepEqual(mergedGaps(lazy.Gaps), mergedGaps(plain.Gaps)) {
			t.Fatalf("%s: gap counts differ", c.name)
		}
	}
	if lazySteps < steps/3 {
		t.Errorf("only %d of %d steps were settled lazily", lazySteps, steps)
	}
	t.Logf("%d of %d steps settled lazily", lazySteps, steps)
}

// A request cancelled while the batch is settled lazily leaves the run as
// it leaves the same run step by step.
func TestCancelWhileSettledLazily(t *testing.T) {
	reqs, err := PoissonLengths(300, 20, Uniform(1, 700), LogNormal(4, 1, 1, 400), 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Step: lectureStep(t), Policy: PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}, Trace: true, CountGaps: true}
	run := func(lazy bool) (*Outcome, int) {
		e, err := NewEngine(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if lazy {
			e.SettleLazily()
		}
		for _, r := range reqs {
			_ = e.Submit(r)
		}
		out, cancelledLazily := &Outcome{}, 0
		for k := 0; ; k++ {
			it, ok := e.Step()
			if !ok {
				break
			}
			out.record(it, true)
			if k%97 == 50 && len(e.running) > 2 {
				if e.lz.on {
					cancelledLazily++
				}
				e.Cancel(e.running[1].Req.ID)
			}
		}
		out.finish(e)
		return out, cancelledLazily
	}
	plain, _ := run(false)
	lazy, n := run(true)
	if n == 0 {
		t.Fatal("no request was cancelled in lazy mode")
	}
	if !reflect.DeepEqual(lazy.Iterations, plain.Iterations) || !reflect.DeepEqual(lazy.Results, plain.Results) ||
		!reflect.DeepEqual(mergedGaps(lazy.Gaps), mergedGaps(plain.Gaps)) {
		t.Fatalf("cancelling %d requests in lazy mode changed the run", n)
	}
}

// TestLazyClockSlides runs a busy batch that never empties for thousands of
// decode steps: the decode clock keeps a window of them, not all, the queue
// of those due to finish stays the batch's size, and the results are still
// the plain path's, bit for bit.
func TestLazyClockSlides(t *testing.T) {
	step := lectureStep(t)
	reqs, _ := Poisson(3000, 30, 512, 64, 1)
	cfg := Config{Step: step, Policy: PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}, CountGaps: true}
	e, out, err := startRun(cfg, reqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	widest, queue, batch := 0, 0, 0
	e.runOut(out, func() bool {
		widest, queue, batch = max(widest, cap(e.lz.ends)), max(queue, cap(e.lz.due)), max(batch, len(e.running))
		return false
	})
	out.finish(e)
	plain := plainRun(t, cfg, reqs)
	if !reflect.DeepEqual(out.Results, plain.Results) || out.End != plain.End || !reflect.DeepEqual(mergedGaps(out.Gaps), mergedGaps(plain.Gaps)) {
		t.Fatal("a run whose clock slides differs from the plain path")
	}
	if e.lz.base == 0 || widest > 1024 || e.lz.n < 8*widest {
		t.Errorf("the clock did not slide: %d lazy steps, base %d, at most %d ends held", e.lz.n, e.lz.base, widest)
	}
	if queue > 2*batch+8 {
		t.Errorf("the queue of sequences due grew to %d for batches of at most %d", queue, batch)
	}
}

// TestSeqHoldsNoPointer keeps a Seq free of pointers: a run holds one per
// request, and pointer-free slabs are never scanned by the collector (nor
// their untouched pages read, then copied on the first write).
func TestSeqHoldsNoPointer(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		case reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
			t.Errorf("%s is a %s: a Seq must hold no pointer", path, ty.Kind())
		}
	}
	walk(reflect.TypeOf(Seq{}), "Seq")
}
