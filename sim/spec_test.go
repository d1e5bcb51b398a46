package sim

import (
	"math"
	"reflect"
	"testing"

	"servelab/modelspecs"
)

func TestExpectedTokensIsTheFormula(t *testing.T) {
	for _, a := range []float64{0, 0.3, 0.6, 0.8, 0.95} {
		for _, k := range []int{1, 2, 4, 7} {
			p := Speculation{K: k, Accept: []float64{a}}
			want := (1 - math.Pow(a, float64(k+1))) / (1 - a)
			if got := p.ExpectedTokens(); math.Abs(got-want) > 1e-12 {
				t.Errorf("α %g, k %d: %g tokens per step, want %g", a, k, got, want)
			}
		}
	}
	p := Speculation{K: 3, Accept: []float64{0.9, 0.5, 0.2}}
	if got, want := p.ExpectedTokens(), 1+0.9+0.9*0.5+0.9*0.5*0.2; math.Abs(got-want) > 1e-12 {
		t.Errorf("per-position rates: %g, want %g", got, want)
	}
}

func TestVerifyOfOneIsADecode(t *testing.T) {
	for _, win := range []int{0, 100} {
		a, b := Work{Window: win}, Work{Window: win}
		a.AddDecode(700)
		b.AddVerify(700, 1)
		if a != b {
			t.Errorf("window %d: verify of one token %+v, decode %+v", win, b, a)
		}
	}
}

// TestSpecAtOneSequence is the target: one sequence alone, the
// simulated speed-up (TPOT without over TPOT with) is the formula's
// expected tokens per step divided by the step-cost ratio (a speculating
// step's time, drafter included, over a plain decode step's), within 2%.
// Shape: Leviathan et al. 2023 ("Fast Inference from Transformers via
// Speculative Decoding", ICML), section 3.4: improvement factor
// (1-α^(γ+1)) / ((1-α)(γc+1)) for a drafter costing c of a step. Eight
// sequences run one after another (one at a time), so the mean over their
// ~45000 steps holds the draws' noise well under 1%.
func TestSpecAtOneSequence(t *testing.T) {
	step := lectureStep(t)
	const prompt, output = 200, 16000
	var reqs []Request
	for i := range 8 {
		reqs = append(reqs, Request{ID: i, Arrival: 300 * float64(i), Prompt: prompt, Output: output})
	}
	tpot := func(out *Outcome) float64 {
		sum := 0.0
		for i, r := range out.Results {
			if i > 0 && r.Arrival < out.Results[i-1].Finish {
				t.Fatalf("request %d arrived before the one before it finished: not one sequence at a time", i)
			}
			sum += r.TPOT()
		}
		return sum / float64(len(out.Results))
	}
	plain := tpot(mustRun(t, Config{Step: step, Policy: Chunked{Budget: 2048}}, reqs))
	draftModel, err := modelspecs.Get("Llama-3.2-1B")
	if err != nil {
		t.Fatal(err)
	}
	small, err := NewStepModel(draftModel, step.GPU)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range []Speculation{
		{K: 4, Accept: []float64{0.7}, DraftCost: 0.05, Seed: 1},
		{K: 2, Accept: []float64{0.9}, DraftCost: 0, Seed: 2},
		{K: 5, Accept: []float64{0.9, 0.8, 0.7, 0.6, 0.5}, Draft: &small, Seed: 3},
	} {
		cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Spec: sp}
		out := mustRun(t, cfg, reqs)
		got := plain / tpot(out)
		// The step-cost ratio at the run's middle context.
		mid := prompt + output/2
		var v, d Work
		v.AddVerify(mid, sp.K+1)
		d.AddDecode(mid)
		e, _ := NewEngine(cfg)
		specStep := step.Seconds(&v) + e.draftSeconds(1, float64(mid), &d)
		want := sp.ExpectedTokens() / (specStep / step.Seconds(&d))
		t.Logf("k %d, draft %v: speed-up %.3f, formula %.3f (%.3f tokens/step, cost ratio %.3f; measured %.3f tokens/step)",
			sp.K, sp.Draft != nil, got, want, sp.ExpectedTokens(), specStep/step.Seconds(&d), out.Spec.TokensPerStep())
		if math.Abs(got/want-1) > 0.02 {
			t.Errorf("k %d: speed-up %.3f is not within 2%% of the formula's %.3f", sp.K, got, want)
		}
		if got <= 1 {
			t.Errorf("k %d: no speed-up at one sequence (%.3f)", sp.K, got)
		}
	}
}

// TestSpecLosesUnderLoad: at a high rate, where the batch makes each step
// compute-bound, the engine's throughput with speculation is below its
// throughput without, while at a low rate its TPOT is lower. Shape: Liu et
// al. 2024 ("Optimizing Speculative Decoding for Serving Large Language
// Models Using Goodput", SmartSpec), fig. 1: speculation's speed-up falls
// below 1 as the request rate rises; vLLM's blog, "How Speculative
// Decoding Boosts vLLM Performance by up to 2.8x" (Oct 2024): at high QPS
// it slows the engine down.
func TestSpecLosesUnderLoad(t *testing.T) {
	step := lectureStep(t)
	sp := Speculation{K: 4, Accept: []float64{0.6}, DraftCost: 0.05, Seed: 1}
	lim := engineLimits(t, step, false)
	for _, c := range []struct {
		rate   float64
		faster bool
	}{{1, true}, {80, false}} {
		reqs, err := Poisson(1500, c.rate, 512, 256, 3)
		if err != nil {
			t.Fatal(err)
		}
		var s [2]Summary
		for i, on := range []bool{false, true} {
			cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: lim}
			if on {
				cfg.Spec = sp
			}
			s[i] = mustRun(t, cfg, reqs).Summary()
		}
		t.Logf("%g req/s: throughput %.0f -> %.0f tok/s, TPOT P50 %.2f -> %.2f ms", c.rate, s[0].Throughput, s[1].Throughput, s[0].TPOTP50*1e3, s[1].TPOTP50*1e3)
		if c.faster && !(s[1].TPOTP50 < s[0].TPOTP50) {
			t.Errorf("%g req/s: speculation did not lower TPOT", c.rate)
		}
		if !c.faster && !(s[1].Throughput < s[0].Throughput) {
			t.Errorf("%g req/s: throughput with speculation %.0f is not below %.0f without", c.rate, s[1].Throughput, s[0].Throughput)
		}
	}
}

// TestSpecIsDeterministic: the acceptance draws depend on the seed and the
// request alone: the same run twice is the same, traced or not, and a
// traced step's items say how many drafts each sequence kept.
func TestSpecIsDeterministic(t *testing.T) {
	step := lectureStep(t)
	reqs, _ := Poisson(300, 20, 300, 100, 4)
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: engineLimits(t, step, true), Spec: Speculation{K: 3, Accept: []float64{0.8}, DraftCost: 0.1, Seed: 9}}
	a, b := mustRun(t, cfg, reqs), mustRun(t, cfg, reqs)
	cfg.Trace = true
	c := mustRun(t, cfg, reqs)
	if !reflect.DeepEqual(a.Results, b.Results) || !reflect.DeepEqual(a.Results, c.Results) || !reflect.DeepEqual(a.Spec, c.Spec) {
		t.Fatal("the same speculating run differs")
	}
	accepted, emitted := 0, 0
	for _, it := range c.Iterations {
		if it.Decodes > 0 && it.Cost.Draft <= 0 {
			t.Fatalf("step %d decodes without a drafter's cost", it.Index)
		}
		for _, item := range it.Items {
			if !item.Prefill {
				accepted += int(item.Accepted)
				if item.Tokens != 4 {
					t.Fatalf("a speculating decode processed %d tokens, want k+1 = 4", item.Tokens)
				}
			}
		}
	}
	for _, r := range c.Results {
		emitted += r.Generated
	}
	if accepted != c.Spec.Accepted || c.Spec.Emitted != emitted-len(reqs) {
		t.Errorf("items say %d accepted, stats %+v; %d tokens emitted after the first", accepted, *c.Spec, emitted-len(reqs))
	}
	if r := c.Spec.AcceptRate(); math.Abs(r-0.8*(1-math.Pow(0.8, 3))/(3*(1-0.8))) > 0.03 {
		t.Errorf("acceptance rate %.3f, want about the mean accepted of 3 drafts at 0.8 over 3", r)
	}
	cfg.Spec.Seed = 10
	if d := mustRun(t, cfg, reqs); reflect.DeepEqual(d.Results, c.Results) {
		t.Error("another seed drew the same acceptances")
	}
}

func TestSpecRefusesBadSettings(t *testing.T) {
	step := lectureStep(t)
	for _, sp := range []Speculation{
		{K: -1}, {K: MaxSpecTokens + 1, Accept: []float64{0.5}}, {K: 3}, {K: 3, Accept: []float64{0.5, 0.5}},
		{K: 2, Accept: []float64{1.5}}, {K: 2, Accept: []float64{math.NaN()}}, {K: 2, Accept: []float64{0.5}, DraftCost: 2},
		{K: 2, Accept: []float64{0.5}, Draft: &StepModel{}},
	} {
		if _, err := NewEngine(Config{Step: step, Policy: Chunked{Budget: 2048}, Spec: sp}); err == nil {
			t.Errorf("%+v accepted", sp)
		}
	}
}
