//go:build js && wasm

package play

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"servelab/sim"
)

func TestPercentilesMatchSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 400; n += 7 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(25)) // many ties, as step times give
		}
		sorted := append([]float64(nil), xs...)
		p50, p90, p99, top := percentiles(xs)
		want := [4]float64{sim.Percentile(sorted, 50), sim.Percentile(sorted, 90), sim.Percentile(sorted, 99), sorted[n-1]}
		if got := [4]float64{p50, p90, p99, top}; got != want {
			t.Fatalf("n=%d: percentiles %v, sim says %v", n, got, want)
		}
	}
}

// TestSimulateIsSimRun checks the playground's trace driver against sim.Run:
// the same steps, the same results and the same summary.
func TestSimulateIsSimRun(t *testing.T) {
	var prev *SimRun
	for _, q := range []string{"preset=demo2", "preset=demo4", "preset=demo1", "preset=demo2&rate=35&seed=7"} {
		s, _ := ParseQuery(q)
		prev.Recycle() // reused arrays must not change the answer
		r, err := Simulate(s)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		prev = r
		step, _ := stepModel(s)
		pol, _ := policy(s)
		reqs, _ := sim.Poisson(s.I("n"), s.F("rate"), s.I("prompt"), s.I("output"), uint64(s.I("seed")))
		out, err := sim.Run(sim.Config{Step: step, Policy: pol, Trace: true, RecordTokens: true}, reqs)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) != 1 || !reflect.DeepEqual(r.Rows[0].Iters, out.Iterations) {
			t.Fatalf("%s: trace differs from sim.Run's (%d vs %d steps)", q, len(r.Rows[0].Iters), len(out.Iterations))
		}
		if want := sim.Summarize(out.Results); r.Summary != want {
			t.Errorf("%s: summary\n got %+v\nwant %+v", q, r.Summary, want)
		}
		// The per-step gaps noted while stepping are the token times' gaps.
		ref := &SimRun{Rows: r.Rows, Results: out.Results}
		ref.index()
		if !reflect.DeepEqual(ref.ITL, r.ITL) || ref.ITLMax != r.ITLMax || !reflect.DeepEqual(ref.FirstPrefill, r.FirstPrefill) {
			t.Errorf("%s: gaps or first prefill steps differ from the results' token times", q)
		}
	}
}

func TestEveryPresetSimulates(t *testing.T) {
	for _, p := range Presets {
		s, _ := ParseQuery("preset=" + p.Name)
		r, err := Simulate(s)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if r.Truncated || r.Summary.Completed != r.Summary.Submitted {
			t.Errorf("%s: %v, truncated %v", p.Name, r.Summary.Counts, r.Truncated)
		}
		switch {
		case s.Workload == "lab" && (r.Lab == nil || r.Lab.WorstGap <= 0 || len(r.LongIDs) != 1):
			t.Errorf("%s: lab run without its summary or long prompt", p.Name)
		case s.Policy == "disagg" && len(r.Rows) != s.I("xp")+s.I("yd"):
			t.Errorf("%s: %d GPU rows, want %d", p.Name, len(r.Rows), s.I("xp")+s.I("yd"))
		}
	}
}

func TestTooBigRunIsCutShort(t *testing.T) {
	s, _ := ParseQuery("n=20000&rate=0.1&output=4096")
	r, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.Steps() > MaxIterations {
		t.Errorf("truncated %v after %d steps, want cut short by %d", r.Truncated, r.Steps(), MaxIterations)
	}
	// Many long outputs at once: the trace, not the step count, is the limit.
	for _, q := range []string{"n=20000&rate=20&output=4096", "n=20000&rate=20&output=4096&policy=disagg&xp=1&yd=1",
		"workload=lab&streams=256&duration=600&inject=10&output=4096"} {
		s, _ := ParseQuery(q)
		r, err := Simulate(s)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		items := 0
		for _, row := range r.Rows {
			for _, it := range row.Iters {
				items += len(it.Items)
			}
		}
		if !r.Truncated || items > MaxTraceItems+20000 {
			t.Errorf("%s: truncated %v with %d trace items, want cut short near %d", q, r.Truncated, items, MaxTraceItems)
		}
	}
	if f := r.Figures(); f.GoodputNote == "" {
		t.Error("a cut-short run offers a goodput")
	}
}

func TestBadSettingsAreErrors(t *testing.T) {
	s, _ := ParseQuery("workload=lab&inject=100&duration=60")
	if _, err := Simulate(s); err == nil {
		t.Error("a lab run that injects after its end simulated without error")
	}
}

// TestIndexIsTokenTimes checks the one-GPU index, taken from the trace,
// against the results' token times for the lab presets (whose runs index
// after the fact): every gap, the largest per step, the first prefills.
func TestIndexIsTokenTimes(t *testing.T) {
	for _, name := range []string{"lab-unchunked", "lab-chunked"} {
		s, _ := ParseQuery("preset=" + name)
		r, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		its := r.Rows[0].Iters
		emitted := make([]int, len(r.Results))
		fp := make([]float64, len(r.Results))
		for i := range fp {
			fp[i] = -1
		}
		var itl []GapAt
		var gaps []float64
		for k := range its {
			mg := 0.0
			for _, item := range its[k].Items {
				i := item.ID // lab requests are numbered by position
				if item.Prefill && fp[i] < 0 {
					fp[i] = its[k].Start
				}
				if !item.Emit {
					continue
				}
				j := emitted[i]
				emitted[i]++
				if ts := r.Results[i].TokenTimes; j > 0 {
					g := ts[j] - ts[j-1]
					gaps = append(gaps, g)
					mg = max(mg, g)
				}
			}
			if mg > 0 {
				itl = append(itl, GapAt{its[k].End(), mg})
			}
		}
		// (summarize reorders the gaps it selects from)
		slices.Sort(gaps)
		got := slices.Sorted(slices.Values(r.gaps))
		if !reflect.DeepEqual(itl, r.ITL) || !reflect.DeepEqual(fp, r.FirstPrefill) || !slices.Equal(gaps, got) || len(itl) == 0 {
			t.Errorf("%s: the index differs from the token times: per-step gaps %v, first prefills %v, gaps %v",
				name, reflect.DeepEqual(itl, r.ITL), reflect.DeepEqual(fp, r.FirstPrefill), slices.Equal(gaps, got))
		}
	}
}
