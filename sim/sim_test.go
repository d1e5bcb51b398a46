package sim

import (
	"math"
	"strings"
	"testing"

	"servelab/hwspecs"
	"servelab/modelspecs"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*want }

func TestStepFiguresMatchDesign(t *testing.T) {
	s := lectureStep(t)
	dec := s.Decode(32, 32*700)
	cases := []struct {
		name      string
		got, want float64
	}{
		{"decode 32 x 700", dec.Seconds, 7.67e-3},
		{"+ 512 prefill", s.Mixed(32, 32*700, 512).Seconds, 14.90e-3},
		{"+ 2048 prefill slowdown", s.Mixed(32, 32*700, 2048).Seconds / dec.Seconds, 7.23},
		{"+ 128 prefill", s.Mixed(32, 32*700, 128).Seconds, 7.68e-3},
		{"prefill-only 512", s.Prefill(512).Seconds, 14.07e-3},
	}
	for _, c := range cases {
		if !within(c.got, c.want, 0.02) {
			t.Errorf("%s = %.4g, want %.4g within 2%%", c.name, c.got, c.want)
		}
	}
	if dec.Bound != Memory || s.Mixed(32, 32*700, 512).Bound != Compute {
		t.Errorf("bounds: decode %s, mixed %s", dec.Bound, s.Mixed(32, 32*700, 512).Bound)
	}
}

func TestStepModelRejectsBadAssumptions(t *testing.T) {
	s := lectureStep(t)
	for _, edit := range []func(*StepModel){
		func(s *StepModel) { s.EffCompute = math.NaN() },
		func(s *StepModel) { s.EffMem = 3 },
		func(s *StepModel) { s.Overhead = -1 },
		func(s *StepModel) { s.TP = 1000 },
	} {
		c := s
		edit(&c)
		if _, err := c.Prepare(); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

func TestTensorParallelSplitsWorkAndAddsCommunication(t *testing.T) {
	s := lectureStep(t)
	s.TP = 4
	s, _ = s.Prepare()
	one := lectureStep(t)
	c4, c1 := s.Mixed(32, 32*700, 2048), one.Mixed(32, 32*700, 2048)
	if !(c4.ComputeTime < c1.ComputeTime/3.9 && c4.CommTime > 0 && c4.Seconds < c1.Seconds) {
		t.Errorf("TP4 %+v vs TP1 %+v", c4, c1)
	}
}

func TestSeventyBDoesNotFitOneH100(t *testing.T) {
	m, _ := modelspecs.Get("Llama-3.1-70B")
	g, _ := hwspecs.Get("H100-SXM")
	s, _ := NewStepModel(m, g)
	_, err := MemorySplit{}.KVBlocks(s)
	if err == nil || !strings.Contains(err.Error(), "does not fit") || !strings.Contains(err.Error(), "--tp 4") {
		t.Fatalf("70B on one H100: %v", err)
	}
	s.TP = 4
	s, _ = s.Prepare()
	blocks, err := MemorySplit{}.KVBlocks(s)
	if err != nil || blocks < 1000 {
		t.Fatalf("70B on 4 H100s: %d blocks, %v", blocks, err)
	}
}

func TestPercentileIsTheScriptsNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	// Python: sorted[int(round(p/100*(n-1)))], round half to even.
	for p, want := range map[float64]float64{0: 1, 50: 3, 90: 5, 99: 5, 12.5: 1, 37.5: 3} {
		if got := Percentile(append([]float64(nil), xs...), p); got != want {
			t.Errorf("p%g = %g, want %g", p, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty percentile should be 0")
	}
}

// The online driver (submit as time passes) and the whole-run driver are the same engine.
func TestOnlineSubmissionMatchesWholeRun(t *testing.T) {
	step := lectureStep(t)
	reqs, _ := Poisson(300, 30, 512, 64, 3)
	whole, err := Run(Config{Step: step, Policy: Chunked{Budget: 1024}}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := NewEngine(Config{Step: step, Policy: Chunked{Budget: 1024}})
	next := 0
	for next < len(reqs) || e.Busy() {
		// Submit everything that has arrived by the engine's clock, as a server would.
		for next < len(reqs) && reqs[next].Arrival <= e.Now() {
			e.Submit(reqs[next])
			next++
		}
		if !e.Busy() {
			e.AdvanceTo(reqs[next].Arrival)
			continue
		}
		if _, ok := e.Step(); !ok {
			t.Fatal("busy engine did not step")
		}
	}
	online := e.Results()
	for i := range reqs {
		// A request submitted between steps joins the next step, exactly as in the whole run.
		if online[i].FirstToken != whole.Results[i].FirstToken || online[i].Finish != whole.Results[i].Finish {
			t.Fatalf("request %d: online %+v, whole %+v", i, online[i], whole.Results[i])
		}
	}
}

func TestIterationsAccountForEveryToken(t *testing.T) {
	reqs, _ := Poisson(200, 20, 300, 40, 1)
	out, err := Run(Config{Step: lectureStep(t), Policy: Chunked{Budget: 256}, Trace: true}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	prefill, emitted := map[int]int{}, map[int]int{}
	last := 0.0
	for _, it := range out.Iterations {
		if it.Start < last-1e-12 || it.Duration <= 0 {
			t.Fatalf("iteration %d starts at %g before %g or has duration %g", it.Index, it.Start, last, it.Duration)
		}
		last = it.End()
		budget := 0
		for _, item := range it.Items {
			budget += item.Tokens
			if item.Prefill {
				prefill[item.ID] += item.Tokens
			}
			if item.Emit {
				emitted[item.ID]++
			}
		}
		if budget > 256 {
			t.Fatalf("iteration %d carried %d tokens over the 256 budget", it.Index, budget)
		}
	}
	for _, r := range reqs {
		if prefill[r.ID] != r.Prompt || emitted[r.ID] != r.Output {
			t.Fatalf("request %d: prefilled %d of %d, emitted %d of %d", r.ID, prefill[r.ID], r.Prompt, emitted[r.ID], r.Output)
		}
	}
}

func TestMemoryPressureAccountsForEveryRequest(t *testing.T) {
	step := lectureStep(t)
	reqs, _ := PoissonLengths(400, 200, Uniform(100, 3000), Uniform(50, 600), 5)
	reqs = append(reqs, Request{ID: 400, Arrival: 0.5, Prompt: 200000, Output: 10}) // longer than the context
	for _, preempt := range []bool{true, false} {
		cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: Limits{KVBlocks: 2000, BlockSize: 16, MaxSeqs: 64, Preempt: preempt}}
		out, err := Run(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		c := Count(out.Results)
		if c.Completed+c.Rejected+c.Unfinished != c.Submitted || c.Submitted != len(reqs) || c.Unfinished != 0 {
			t.Fatalf("preempt=%v: %s", preempt, c)
		}
		if c.Rejected != 1 || !strings.Contains(out.Results[400].Rejected, "max context") {
			t.Fatalf("preempt=%v: want the over-long request rejected with a reason: %s %q", preempt, c, out.Results[400].Rejected)
		}
		if preempt && c.Preemptions == 0 {
			t.Errorf("a 32k-token cache under this load should preempt: %s", c)
		}
		if !preempt && c.Preemptions != 0 {
			t.Errorf("wait mode must never preempt: %s", c)
		}
		for _, r := range out.Results {
			if r.Completed() && r.Generated != r.Output {
				t.Fatalf("request %d completed with %d of %d tokens", r.ID, r.Generated, r.Output)
			}
		}
	}
}

func TestAbsurdInputIsBounded(t *testing.T) {
	step := lectureStep(t)
	if _, err := Poisson(10, math.NaN(), 512, 64, 0); err == nil {
		t.Error("NaN rate accepted")
	}
	if _, err := Poisson(0, 1, 512, 64, 0); err == nil {
		t.Error("zero requests accepted")
	}
	if _, err := Poisson(10, 1, -5, 64, 0); err == nil {
		t.Error("negative prompt accepted")
	}
	// Rate 1e7 with a prompt longer than any context: everything rejected, nothing hangs.
	reqs, err := Poisson(1000, 1e7, 5_000_000, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Run(Config{Step: step, Policy: PrefillFirst{MaxTokens: 8192}}, reqs)
	if c := Count(out.Results); c.Rejected != 1000 {
		t.Errorf("want all rejected: %s", c)
	}
	// An iteration cap cuts a run short and says so.
	reqs, _ = Poisson(1000, 1e6, 512, 64, 0)
	out, _ = Run(Config{Step: step, Policy: Chunked{Budget: 64}, Limits: Limits{MaxIterations: 100}}, reqs)
	if !out.Truncated || out.Steps != 100 || Count(out.Results).Unfinished == 0 {
		t.Errorf("cap ignored: steps %d truncated %v", out.Steps, out.Truncated)
	}
	if _, err := NewPolicy("fifo", 0); err == nil || !strings.Contains(err.Error(), "chunked") {
		t.Errorf("unknown policy error should list names: %v", err)
	}
}

func TestParseLengths(t *testing.T) {
	for spec, want := range map[string]Lengths{
		"512": Fixed(512), "fixed:64": Fixed(64), "uniform:10,20": Uniform(10, 20), "lognormal:6,0.5,16,4096": LogNormal(6, 0.5, 16, 4096),
	} {
		got, err := ParseLengths(spec)
		if err != nil || got != want {
			t.Errorf("ParseLengths(%q) = %v, %v", spec, got, err)
		}
	}
	for _, bad := range []string{"", "abc", "uniform:5", "uniform:20,10", "lognormal:1,nan,1,2", "fixed:1e99", "normal:3"} {
		if _, err := ParseLengths(bad); err == nil {
			t.Errorf("ParseLengths(%q) accepted", bad)
		}
	}
	reqs, _ := PoissonLengths(2000, 10, LogNormal(6, 0.7, 16, 4096), Uniform(10, 20), 1)
	for _, r := range reqs {
		if r.Prompt < 16 || r.Prompt > 4096 || r.Output < 10 || r.Output > 20 {
			t.Fatalf("draw out of range: %+v", r)
		}
	}
}

func TestGoodputFindsTheKnee(t *testing.T) {
	// Attainment falls linearly from 1 at rate 0 to 0 at rate 100: the 90% knee is at 10.
	g, sat, err := Goodput(func(r float64) (float64, error) { return 1 - r/100, nil }, 0.9, 400)
	if err != nil || sat || math.Abs(g-10) > 0.2 {
		t.Fatalf("goodput = %g (saturated %v, %v), want 10", g, sat, err)
	}
	if _, sat, _ := Goodput(func(float64) (float64, error) { return 1, nil }, 0.9, 50); !sat {
		t.Error("always-met objective should report saturation")
	}
}

// The engine keeps the running set's KV sum incrementally; check it against a
// walk after every step of a run with preemptions, budget-limited decodes and finishes.
func TestRunningKVSumStaysExact(t *testing.T) {
	reqs, _ := PoissonLengths(300, 100, Uniform(50, 2000), Uniform(5, 300), 9)
	for _, p := range []Policy{Chunked{Budget: 512}, Chunked{Budget: 16}, PrefillFirst{MaxTokens: 4096}, DecodeOnlyPolicy{}} {
		e, _ := NewEngine(Config{Step: lectureStep(t), Policy: p, Limits: Limits{KVBlocks: 400, MaxSeqs: 64, Preempt: true}})
		for _, r := range reqs {
			e.Submit(r)
		}
		for steps := 0; ; steps++ {
			if _, ok := e.Step(); !ok {
				break
			}
			sum := 0
			for _, s := range e.running {
				sum += s.kv
			}
			if sum != e.runKV {
				t.Fatalf("%s step %d: runKV %d, walk %d", p.Name(), steps, e.runKV, sum)
			}
		}
		if c := Count(e.Results()); c.Completed+c.Rejected != c.Submitted || c.Preemptions == 0 {
			t.Fatalf("%s: %s (the test wants preemptions)", p.Name(), c)
		}
	}
}

func TestCancelFreesTheBatch(t *testing.T) {
	e, _ := NewEngine(Config{Step: lectureStep(t), Policy: Chunked{Budget: 2048}, Limits: Limits{KVBlocks: 1000, Preempt: true}})
	for i := range 4 {
		e.Submit(Request{ID: i, Prompt: 100, Output: 50})
	}
	e.Submit(Request{ID: 9, Arrival: 5, Prompt: 100, Output: 50}) // still pending
	for range 3 {
		e.Step()
	}
	if !e.Cancel(2) || !e.Cancel(9) || e.Cancel(2) || e.Cancel(77) {
		t.Fatal("Cancel should succeed once for a live request and fail otherwise")
	}
	it, _ := e.Step()
	for _, x := range it.Items {
		if x.ID == 2 {
			t.Fatal("a cancelled request is still in the batch")
		}
	}
	if it.Decodes != 3 {
		t.Fatalf("want 3 decodes after the cancel, got %d", it.Decodes)
	}
	for e.Busy() {
		e.Step()
	}
	c := Count(e.Results())
	if c.Completed != 3 || c.Cancelled != 2 || e.freeKV != 1000 || e.active != 0 {
		t.Fatalf("%s; free blocks %d, active %d", c, e.freeKV, e.active)
	}
}

// A request that fits the KV cache alone is never rejected, even when
// preemption puts it back in front of partly prefilled sequences holding the
// room it needs (they give it back and recompute).
func TestPreemptedHeadIsNotRejectedWhenItFits(t *testing.T) {
	reqs, _ := PoissonLengths(400, 200, Uniform(100, 30000), Uniform(1, 2000), 0)
	out, err := Run(Config{Step: lectureStep(t), Policy: Chunked{Budget: 2048}, Trace: true,
		Limits: Limits{KVBlocks: 2641, BlockSize: 16, MaxSeqs: 256, Preempt: true}}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	c := Count(out.Results)
	if c.Completed != 400 || c.Preemptions == 0 {
		t.Fatalf("%s (want all 400 completed, with preemptions)", c)
	}
	for _, it := range out.Iterations {
		if len(it.Rejected) > 0 {
			t.Fatalf("iteration %d rejected %v", it.Index, it.Rejected)
		}
	}
}

func TestDropFinishedKeepsOnlyWhatIsInFlight(t *testing.T) {
	e, _ := NewEngine(Config{Step: lectureStep(t), Policy: Chunked{Budget: 2048}})
	e.Submit(Request{ID: 1, Prompt: 10, Output: 2})
	e.Submit(Request{ID: 2, Prompt: 10, Output: 500})
	e.Submit(Request{ID: 3, Prompt: 10, Output: 0}) // rejected
	for range 5 {
		e.Step()
	}
	e.DropFinished()
	rs := e.Results()
	if len(rs) != 1 || rs[0].ID != 2 {
		t.Fatalf("after DropFinished: %+v", rs)
	}
	for e.Busy() {
		e.Step()
	}
	if rs := e.Results(); len(rs) != 1 || !rs[0].Completed() {
		t.Fatalf("the request in flight must still finish: %+v", rs)
	}
}

// attains, which ends a run once the target is out of reach or surely
// reached, answers as Attainment over the whole run does: policies and
// limits (with preemptions), objectives on TTFT, TPOT or both, rates across
// the knee and targets on either side. Some of the runs end early each way,
// or the watch would not be tried.
func TestAttainsAnswersAsTheWholeRun(t *testing.T) {
	step := lectureStep(t)
	reqs0, _ := PoissonLengths(400, 1, Uniform(64, 1024), Uniform(2, 128), 5)
	policies := []struct {
		p Policy
		l Limits
	}{{PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}, Limits{}}, {Chunked{Budget: 512, ExcludeDecodes: true}, Limits{}},
		{Chunked{Budget: 256}, Limits{KVBlocks: 600, MaxSeqs: 32, Preempt: true}}, {DecodeOnlyPolicy{}, Limits{}}, {PrefillOnlyPolicy{MaxTokens: DefaultMaxPrefillTokens}, Limits{}}}
	slos := []SLO{{TTFT: 0.2}, {TPOT: 0.012}, {TTFT: 0.2, TPOT: 0.015}, {TTFT: 0.05, TPOT: 0.009}}
	sc := &scratch{}
	cut, made := 0, 0 // runs ended early out of reach, and with the target reached
	for _, pc := range policies {
		cfg := Config{Step: step, Policy: pc.p, Limits: pc.l}
		for _, slo := range slos {
			for _, rate := range []float64{2, 8, 20, 40, 80, 200} {
				reqs := make([]Request, len(reqs0))
				for i, r := range reqs0 {
					r.Arrival /= rate
					reqs[i] = r
				}
				whole, err := Run(cfg, reqs)
				if err != nil {
					t.Fatal(err)
				}
				a := Attainment(whole.Results, slo)
				for _, target := range []float64{0.5, 0.9, 0.99} {
					got, err := attains(cfg, reqs, sc, slo, target)
					if err != nil {
						t.Fatal(err)
					}
					if want := a >= target; got != want {
						t.Errorf("%T %+v at %g req/s, target %g: attains says %v, the whole run's attainment %.4f", pc.p, slo, rate, target, got, a)
					}
					if e, out, _ := startRun(cfg, reqs, sc); e != nil {
						w := missWatch{e: e, slo: slo, budget: missBudget(len(e.all), target)}
						e.runOut(out, w.decided)
						if w.out && e.Busy() {
							cut++
						}
						if w.in && e.Busy() {
							made++
						}
					}
				}
			}
		}
	}
	if cut == 0 || made == 0 {
		t.Errorf("runs ended early: %d out of reach, %d with the target reached; both kinds must be tried", cut, made)
	}
	t.Logf("%d runs ended early out of reach, %d with the target reached", cut, made)
}
