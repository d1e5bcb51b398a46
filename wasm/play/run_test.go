package play

import (
	"cmp"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"servelab/sim"
	"servelab/sim/scenario"
)

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
		// The same experiment built as the CLI builds it.
		x := s.Experiment
		b, err := x.Build()
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := x.RequestsAt(s.Rate)
		if err != nil {
			t.Fatal(err)
		}
		cfg := b.Config
		cfg.Trace, cfg.RecordTokens = true, true
		out, err := sim.Run(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) != 1 || !reflect.DeepEqual(r.Rows[0].Iters, out.Iterations) {
			t.Fatalf("%s: trace differs from sim.Run's (%d vs %d steps)", q, len(r.Rows[0].Iters), len(out.Iterations))
		}
		if want := sim.Summarize(out.Results); r.Summary != want {
			t.Errorf("%s: summary\n got %+v\nwant %+v", q, r.Summary, want)
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
		case s.Policy == scenario.Disaggregated && len(r.Rows) != s.PrefillGPUs+s.DecodeGPUs:
			t.Errorf("%s: %d GPU rows, want %d", p.Name, len(r.Rows), s.PrefillGPUs+s.DecodeGPUs)
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

// TestIndexIsTokenTimes checks the view's index, taken from the trace
// without token times, against a run of every preset that kept them: the
// summary, every gap, each step's largest gap (found by looking each
// token's time up) and every request's first prefill step — for one GPU,
// the lab's closed loop and disaggregated GPUs alike.
func TestIndexIsTokenTimes(t *testing.T) {
	for _, p := range Presets {
		s, _ := ParseQuery("preset=" + p.Name)
		r, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := simulate(s, true)
		if err != nil {
			t.Fatal(err)
		}
		if want := sim.Summarize(ref.Results); r.Summary != want {
			t.Errorf("%s: summary\n got %+v\nwant %+v", p.Name, r.Summary, want)
		}
		want := slices.Sorted(slices.Values(sim.ITLs(ref.Results)))
		var got []float64
		for _, c := range r.gaps {
			for range c.N {
				got = append(got, c.Gap)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: %d gaps counted, the token times have %d (equal: %v)", p.Name, len(got), len(want), slices.Equal(got, want))
		}
		pos := map[int]int{}
		for i, res := range ref.Results {
			pos[res.ID] = i
		}
		fp := make([]float64, len(ref.Results))
		for i := range fp {
			fp[i] = -1
		}
		type stepGap struct {
			row int
			g   GapAt
		}
		var steps []stepGap
		for row, rw := range ref.Rows {
			for _, it := range rw.Iters {
				mg := 0.0
				for _, item := range it.Items {
					i := pos[item.ID]
					if item.Prefill && (fp[i] < 0 || it.Start < fp[i]) {
						fp[i] = it.Start
					}
					ts := ref.Results[i].TokenTimes
					if j, ok := slices.BinarySearch(ts, it.End()); item.Emit && ok && j > 0 {
						mg = max(mg, ts[j]-ts[j-1])
					}
				}
				if mg > 0 {
					steps = append(steps, stepGap{row, GapAt{it.End(), mg}})
				}
			}
		}
		slices.SortStableFunc(steps, func(a, b stepGap) int { return cmp.Compare(a.g.T, b.g.T) })
		itl := make([]GapAt, len(steps))
		for k, sg := range steps {
			itl[k] = sg.g
		}
		if !reflect.DeepEqual(itl, r.ITL) || r.ITLMax != want[len(want)-1] {
			t.Errorf("%s: each step's largest gap differs from the token times' (%d vs %d steps)", p.Name, len(r.ITL), len(itl))
		}
		if !reflect.DeepEqual(fp, r.FirstPrefill) {
			t.Errorf("%s: first prefill steps differ", p.Name)
		}
	}
}

// TestGoodputIsAttainmentSearch checks the page's goodput search against
// the plain bisection over AttainmentAt's full runs (what the page ran
// before), for one GPU, chunked, with engine limits and disaggregated.
func TestGoodputIsAttainmentSearch(t *testing.T) {
	for _, q := range []string{"preset=demo2", "preset=demo4&policy=chunked", "preset=memory-pressure&n=300", "preset=distserve-2p1d&n=300"} {
		s, _ := ParseQuery(q)
		calls := 0
		got, gotSat, err := Goodput(s, 400, func() error { calls++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		want, wantSat, err := sim.Goodput(func(rate float64) (float64, error) {
			_, att, err := AttainmentAt(s, rate, nil)
			return att, err
		}, 0.9, 400)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || gotSat != wantSat || calls < 5 || got <= 0 {
			t.Errorf("%s: goodput %v (saturated %v, %d experiments), the bisection over full runs says %v (%v)", q, got, gotSat, calls, want, wantSat)
		}
	}
	s, _ := ParseQuery("preset=demo2")
	stop := errors.New("stop")
	if _, _, err := Goodput(s, 400, func() error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a yield's error did not end the search: %v", err)
	}
	// Within a run: the search's yields come every few dozen steps too, and
	// an error in the middle of a run ends it and the search.
	for _, k := range []int{3, 40} {
		calls := 0
		if _, _, err := Goodput(s, 400, func() error {
			if calls++; calls > k {
				return stop
			}
			return nil
		}); !errors.Is(err, stop) {
			t.Errorf("an error at yield %d did not end the search: %v", k+1, err)
		}
	}
}

// TestAttainmentAtYields checks that a background run yields as it goes
// without changing its figures, and that a yield's error ends it.
func TestAttainmentAtYields(t *testing.T) {
	s, _ := ParseQuery("preset=demo2")
	want, wantAtt, err := AttainmentAt(s, 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, gotAtt, err := AttainmentAt(s, 30, func() error { calls++; return nil })
	if err != nil || got != want || gotAtt != wantAtt {
		t.Errorf("yielding changed the run: %+v %v (%v), want %+v %v", got, gotAtt, err, want, wantAtt)
	}
	if calls < 10 {
		t.Errorf("the run yielded %d times: want one every few dozen steps", calls)
	}
	stop := errors.New("stop")
	if _, _, err := AttainmentAt(s, 30, func() error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a yield's error did not end the run: %v", err)
	}
}

// TestInstancesAlone runs DistServe's two kinds of instance alone: a
// prefill-only one gives each request its first token and is judged on
// TTFT alone; a decode-only one never prefills and is judged on TPOT alone.
func TestInstancesAlone(t *testing.T) {
	for _, pol := range []string{"prefill-only", "decode-only"} {
		s, _ := ParseQuery("preset=demo2&n=300&policy=" + pol)
		if s.Policy != pol {
			t.Fatalf("policy %q not taken: %q", pol, s.Policy)
		}
		r, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary.Completed != 300 {
			t.Fatalf("%s: %v", pol, r.Summary.Counts)
		}
		prefills := 0
		for _, it := range r.Rows[0].Iters {
			prefills += it.Prefill
		}
		switch pol {
		case "prefill-only":
			for _, res := range r.Results {
				if res.Generated != 1 {
					t.Fatalf("prefill-only: request %d got %d tokens, want its first only", res.ID, res.Generated)
				}
			}
			if prefills == 0 {
				t.Fatal("prefill-only: no prefill step")
			}
		case "decode-only":
			if prefills != 0 {
				t.Fatalf("decode-only: %d prefill tokens, want none (requests arrive with their KV)", prefills)
			}
		}
		// The other phase's SLO does not count: an impossible one leaves the attainment as it was.
		strict := s.Clone()
		if pol == "prefill-only" {
			strict.Set("slotpot", "0.001")
		} else {
			strict.Set("slottft", "0.001")
		}
		if a, b := r.Figures().Attainment, (&SimRun{State: strict, Results: r.Results}).Figures().Attainment; a != b || a <= 0 {
			t.Errorf("%s: attainment %v, %v with the other phase's SLO impossible", pol, a, b)
		}
	}
	s, _ := ParseQuery("workload=lab&policy=decode-only")
	if _, err := Simulate(s); err == nil {
		t.Error("the lab's closed loop ran on a decode-only instance")
	}
}

// TestSlicedJobIsWhole checks a run spread over many short slices (as the
// page spreads a long one over frames), and one abandoned half-way before
// it, against the run made at once: the same steps, results, summary and
// view index, for every preset.
func TestSlicedJobIsWhole(t *testing.T) {
	for _, p := range Presets {
		s, _ := ParseQuery("preset=" + p.Name)
		whole, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		half, err := Start(s)
		if err != nil {
			t.Fatal(err)
		}
		half.Advance(0)
		half.Abandon() // its arrays go back to the pool, half filled
		j, err := Start(s)
		if err != nil {
			t.Fatal(err)
		}
		slices, last := 0, -1.0
		for !j.Advance(0) {
			slices++
			if f := j.Progress(); f < last || f >= 1 {
				t.Fatalf("%s: progress %v after %v", p.Name, f, last)
			} else {
				last = f
			}
		}
		got := j.Run()
		if j.Progress() != 1 || got == nil {
			t.Fatalf("%s: a finished job without its run", p.Name)
		}
		if len(got.Rows) != len(whole.Rows) {
			t.Fatalf("%s: %d rows, want %d", p.Name, len(got.Rows), len(whole.Rows))
		}
		for i := range got.Rows {
			if !reflect.DeepEqual(got.Rows[i].Iters, whole.Rows[i].Iters) {
				t.Errorf("%s: row %d's trace differs when sliced", p.Name, i)
			}
		}
		if !reflect.DeepEqual(got.Results, whole.Results) || got.Summary != whole.Summary || got.End != whole.End ||
			!reflect.DeepEqual(got.ITL, whole.ITL) || !reflect.DeepEqual(got.FirstPrefill, whole.FirstPrefill) ||
			!reflect.DeepEqual(got.LongIDs, whole.LongIDs) || !reflect.DeepEqual(got.Lab, whole.Lab) {
			t.Errorf("%s: the sliced run (%d slices) differs from the whole one", p.Name, slices)
		}
		if s.Policy != scenario.Disaggregated && s.Replicas <= 1 && slices < 2 { // (a cluster's and replicas' runs are made whole at Start)
			t.Errorf("%s: only %d slices: the test did not slice", p.Name, slices)
		}
		whole.Recycle()
		got.Recycle()
	}
}

// A long run (thousands of requests of hundreds of tokens) reserves its
// trace at once and, given all the time it wants, still ends over three
// slices: its last step, its results, their percentiles. It is the run
// made at once.
func TestLongJobEndsInSlicesOfItsOwn(t *testing.T) {
	s := DefaultState()
	s.Requests, s.Output, s.Rate = 2000, 256, 8
	whole, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	j, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	if !j.Long() {
		t.Fatalf("a run of %d items is not long", j.items)
	}
	if c, n := cap(j.tr.its), len(whole.Rows[0].Iters); c < n || c > 2*n {
		t.Errorf("%d steps reserved for a run of %d", c, n)
	}
	calls := 1
	for !j.Advance(time.Hour) {
		calls++
	}
	if calls != 3 {
		t.Errorf("the long run landed after %d calls, want 3 (steps, results, percentiles)", calls)
	}
	got := j.Run()
	if !reflect.DeepEqual(got.Rows[0].Iters, whole.Rows[0].Iters) || !reflect.DeepEqual(got.Results, whole.Results) || got.Summary != whole.Summary {
		t.Error("the long run differs from the one made at once")
	}
	whole.Recycle()
	got.Recycle()
}

// An FP8 config.json uploaded in the page is priced at one byte per
// weight, as `servelab step --model-config` prices it (4.34 ms for the
// decode step of 32 at context 700 on an H100, not bf16's 7.67 ms).
func TestUploadedFP8ModelIsPricedAsTheCLIPricesIt(t *testing.T) {
	data, err := os.ReadFile("../../cmd/servelab/testdata/corpus-inputs/llama31_8b_fp8.json")
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultState()
	s.Sess = NewSession()
	name, err := s.Sess.AddModel("llama31_8b_fp8.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Set("model", name); n != "" {
		t.Fatal(n)
	}
	step, err := stepModel(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := step.Decode(32, 32*700).Seconds * 1e3; math.Abs(got-4.34) > 0.005 {
		t.Errorf("the FP8 model's decode step is %.3f ms, want the CLI's 4.34", got)
	}
}

// A 70B model does not fit one H100: the page refuses it as the CLI does,
// ideal engine or not, and names the tensor-parallel degree that fits.
func TestSeventyBillionNeedsTPInThePage(t *testing.T) {
	s, _ := ParseQuery("model=Llama-3.1-70B&ideal=1")
	if _, err := Simulate(s); err == nil || !strings.Contains(err.Error(), "--tp") {
		t.Errorf("70B on one H100: %v; want a refusal naming --tp", err)
	}
	s, _ = ParseQuery("model=Llama-3.1-70B&ideal=1&tp=4&n=50")
	if _, err := Simulate(s); err != nil {
		t.Errorf("70B at tp 4: %v", err)
	}
}
