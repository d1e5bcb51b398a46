package sim

import (
	"math"
	"strings"
	"testing"

	"servelab/hwspecs"
	"servelab/modelspecs"
)

func model(t *testing.T, name string) modelspecs.Model {
	t.Helper()
	m, err := modelspecs.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func gpu(t *testing.T, name string) hwspecs.GPU {
	t.Helper()
	g, err := hwspecs.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func profiled(t *testing.T, prof, m, g string, tp int) StepModel {
	t.Helper()
	p, err := BuiltinProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Apply(StepModel{Model: model(t, m), GPU: gpu(t, g), TP: tp})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The lecture profile is the lecture's model, bit for bit.
func TestLectureProfileIsTheLectureModel(t *testing.T) {
	ref, _ := DefaultStepModel()
	got := profiled(t, "lecture", modelspecs.Default, hwspecs.Default, 1)
	if got.Physics != (Physics{}) {
		t.Fatalf("lecture profile switches refinements on: %+v", got.Physics)
	}
	for _, w := range []Work{{Tokens: 32, Pairs: 32 * 700, KVTokens: 32 * 701}, {Tokens: 512, Pairs: 512 * 513 / 2, KVTokens: 512}} {
		if a, b := ref.Price(w), got.Price(w); a != b {
			t.Errorf("%+v: lecture profile %+v, lecture model %+v", w, b, a)
		}
	}
	if d := got.Decode(32, 32*700).Seconds; math.Abs(d-7.67e-3) > 0.01e-3 {
		t.Errorf("decode step %.3f ms, lecture 7.67", d*1e3)
	}
}

// Every constant of every built-in profile says where it came from, and a
// GPU without published points says so.
func TestProfilesCarrySources(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := BuiltinProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range hwspecs.Names() {
			cs := p.Resolve(g)
			if len(cs) < 3 {
				t.Errorf("%s on %s: only %d constants", name, g, len(cs))
			}
			for _, c := range cs {
				if strings.TrimSpace(c.Source) == "" || c.Source == "guess" {
					t.Errorf("%s on %s: %s has no source", name, g, c.Name)
				}
			}
			if _, note := p.GPUNote(g); note == "" {
				t.Errorf("%s on %s: no note", name, g)
			}
		}
	}
	v, _ := BuiltinProfile("vllm")
	if fitted, note := v.GPUNote("B200"); fitted || !strings.Contains(note, "no published points") {
		t.Errorf("vllm on B200: fitted %v, note %q", fitted, note)
	}
	if fitted, _ := v.GPUNote("H100-SXM"); !fitted {
		t.Errorf("vllm on H100-SXM is not fitted")
	}
}

func TestParseProfileErrorsNameTheProblem(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":"x","constants":{"eff_comp":{"value":0.5}}}`:          "eff_comp: unknown constant",
		`{"name":"x","constants":{"eff_mem":{"value":1.5}}}`:           "eff_mem: 1.5 is outside",
		`{"name":"x","constants":{},"gpus":{"H900":{"constants":{}}}}`: "gpus.H900",
		`{"name":"x","constants":{},"physic":{}}`:                      "physic",
		`{"constants":{}}`: "name missing",
		`{"name":"x","constants":{},"calibrates":["eff_compute","speed"]}`: "speed",
	} {
		_, err := ParseProfile([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProfile(%s) = %v, want an error mentioning %q", in, err, want)
		}
	}
}

// MoE: a batch-1 decode of Mixtral reads the two routed experts per layer
// (about 26 GB in bf16), not all eight (93 GB); a large batch reads all.
func TestMoEReadsTheSelectedExperts(t *testing.T) {
	v := profiled(t, "vllm", "Mixtral-8x7B", "H100-SXM", 2)
	one := Work{Tokens: 1, Pairs: 100, KVTokens: 101, Seqs: 1, Sampled: 1}
	if b := v.WeightBytesRead(one); b < 24e9 || b > 28e9 {
		t.Errorf("batch 1 reads %.1f GB of weights, want about 26", b/1e9)
	}
	if e := v.ExpectedExperts(64); e < 0.99*8 {
		t.Errorf("64 tokens read %.2f experts, want nearly all 8", e)
	}
	if e := v.ExpectedExperts(8); math.Abs(e-8*(1-math.Pow(0.75, 8))) > 1e-12 {
		t.Errorf("8 tokens read %.4f experts", e)
	}
	off := v
	off.Physics.MoEUnion = false
	off, _ = off.Prepare()
	if b := off.WeightBytesRead(one); b < 90e9 {
		t.Errorf("without the union every step reads %.1f GB, want all experts (~93)", b/1e9)
	}
	if a, b := v.Price(one).Seconds, off.Price(one).Seconds; a > 0.45*b {
		t.Errorf("batch-1 Mixtral step %.2f ms with the union, %.2f ms without", a*1e3, b*1e3)
	}
}

// TP: each of the two all-reduces per layer costs a fixed latency on top
// of its bandwidth term.
func TestTPCollectiveLatency(t *testing.T) {
	v := profiled(t, "vllm", "Llama-3.1-70B", "H100-SXM", 4)
	if v.Physics.CollectiveLatency < 10e-6 || v.Physics.CollectiveLatency > 60e-6 {
		t.Errorf("collective latency %.1f µs, want tens of µs", v.Physics.CollectiveLatency*1e6)
	}
	off := v
	off.Physics.CollectiveLatency = 0
	off, _ = off.Prepare()
	d, d0 := v.Decode(8, 8*100), off.Decode(8, 8*100)
	if got, want := d.CommTime-d0.CommTime, 160*v.Physics.CollectiveLatency; math.Abs(got-want) > 1e-12 {
		t.Errorf("collective latency adds %.3f ms, want 160 x %.1f µs", got*1e3, v.Physics.CollectiveLatency*1e6)
	}
	one := profiled(t, "vllm", "Llama-3.1-8B", "H100-SXM", 1)
	if c := one.Decode(8, 800).CommTime; c != 0 {
		t.Errorf("TP1 pays %.3f ms of collectives", c*1e3)
	}
}

// Per-sequence and per-request CPU costs are charged per sequence in the
// step and per prompt whose prefill starts.
func TestCPUCosts(t *testing.T) {
	v := profiled(t, "vllm", "Llama-3.1-8B", "H100-SXM", 1)
	ph := v.Physics
	if ph.SeqCost <= 0 || ph.ReqCost <= 0 {
		t.Fatalf("vllm has no CPU costs: %+v", ph)
	}
	var w Work
	for range 10 {
		w.AddDecode(500)
	}
	w.AddChunk(0, 256, false) // a new prompt's first chunk: no token sampled
	w.AddChunk(256, 100, true)
	if w.Seqs != 12 || w.Sampled != 11 || w.NewPrompts != 1 {
		t.Fatalf("work %+v", w)
	}
	c := v.Price(w)
	if want := 12*ph.SeqCost + ph.ReqCost; math.Abs(c.CPUTime-want) > 1e-15 {
		t.Errorf("CPU %.4f ms, want %.4f", c.CPUTime*1e3, want*1e3)
	}
	if math.Abs(c.Seconds-(c.GPUTime+c.CommTime+c.Overhead+c.CPUTime)) > 1e-15 {
		t.Errorf("the parts do not add up: %+v", c)
	}
}

// lm_head only where sampled: a 2048-token prefill computes one row of logits.
func TestLogitsOnlyWhereSampled(t *testing.T) {
	v := profiled(t, "vllm", "Llama-3.1-8B", "H100-SXM", 1)
	l := profiled(t, "lecture", "Llama-3.1-8B", "H100-SXM", 1)
	var w Work
	w.AddPrefill(0, 2048)
	m := v.Model
	head := 2 * m.EmbedParams()
	if got, want := l.Price(w).FLOPs-v.Price(w).FLOPs, 2047*head; math.Abs(got-want) > 1e-6*want {
		t.Errorf("the vllm prefill computes %.3g fewer FLOPs, want 2047 rows of lm_head (%.3g)", got, want)
	}
}

func TestSmoothRoofline(t *testing.T) {
	if r := roof(2, 3, 0); r != 3 {
		t.Errorf("hard max %g", r)
	}
	if r := roof(1, 1, 1.25); math.Abs(r-math.Pow(2, 0.8)) > 1e-12 {
		t.Errorf("at the ridge %g, want 2^(1/p)", r)
	}
	if r := roof(1, 100, 1.25); r < 100 || r > 100.5 {
		t.Errorf("far from the ridge %g, want just above 100", r)
	}
	if r := roof(1e300, 1e300, 40); math.IsInf(r, 0) || math.IsNaN(r) {
		t.Errorf("large p overflowed: %g", r)
	}
}

// Per-request cost: a lone request's TTFT is its time outside the engine
// plus its prefill step, which pays the per-iteration overhead, one
// sequence's cost and the cost of admitting a prompt; without the
// per-request and per-sequence costs it comes out exactly that much lower.
func TestLightLoadTTFTPaysTheRequestCost(t *testing.T) {
	v := profiled(t, "vllm", "Llama-3.1-8B", "H100-SXM", 1)
	p, _ := NewPolicy("chunked", 2048)
	ttft := func(s StepModel) float64 {
		o, err := Run(Config{Step: s, Policy: p}, []Request{{ID: 0, Arrival: 0, Prompt: 128, Output: 4}})
		if err != nil {
			t.Fatal(err)
		}
		return o.Results[0].TTFT()
	}
	off := v
	off.Physics.ReqCost, off.Physics.SeqCost = 0, 0
	off, _ = off.Prepare()
	got, without := ttft(v), ttft(off)
	if d := got - without; math.Abs(d-(v.Physics.ReqCost+v.Physics.SeqCost)) > 1e-12 {
		t.Errorf("TTFT %.3f ms, %.3f ms without CPU costs: differ by %.4f ms, want %.4f", got*1e3, without*1e3, d*1e3, (v.Physics.ReqCost+v.Physics.SeqCost)*1e3)
	}
	step := v.Prefill(128)
	if math.Abs(got-step.Seconds-v.Physics.ReqLatency) > 1e-12 || step.CPUTime <= 0 {
		t.Errorf("TTFT %.3f ms, its prefill step %+v", got*1e3, step)
	}
}

// A sliding window caps what a query attends and reads, in decode and in
// a prefill chunk past the window; the engine prices with it.
func TestSlidingWindow(t *testing.T) {
	w := Work{Window: 4}
	w.AddDecode(10)
	if w.Pairs != 4 || w.KVTokens != 5 {
		t.Errorf("decode at context 10, window 4: %+v", w)
	}
	w = Work{Window: 4}
	w.AddChunk(2, 5, true) // queries at positions 3..7 attend 3, 4, 4, 4, 4
	if w.Pairs != 19 || w.KVTokens != 7 {
		t.Errorf("chunk of 5 after 2, window 4: %+v", w)
	}
	full := Work{}
	full.AddChunk(2, 5, true)
	if full.Pairs != 5*2+15 {
		t.Errorf("no window: %+v", full)
	}
	m := model(t, "Mistral-7B")
	m.SlidingWindow = 1024
	s, err := NewStepModel(m, gpu(t, "H100-SXM"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := NewPolicy("prefill-first", 0)
	run := func(s StepModel) float64 {
		o, err := Run(Config{Step: s, Policy: p}, []Request{{ID: 0, Prompt: 8000, Output: 50}})
		if err != nil {
			t.Fatal(err)
		}
		return o.Results[0].Finish
	}
	noWin := s
	noWin.Model.SlidingWindow = 0
	if a, b := run(s), run(noWin); a >= b {
		t.Errorf("an 8000-token prompt with a 1024 window takes %.1f ms, without %.1f ms", a*1e3, b*1e3)
	}
}

// The per-request latency outside the engine adds to TTFT and E2E and
// occupies no iteration: ITLs and throughput stay.
func TestRequestLatencyShiftsTTFTOnly(t *testing.T) {
	v := profiled(t, "vllm", "Llama-3.1-8B", "H100-SXM", 1)
	if v.Physics.ReqLatency <= 0 {
		t.Fatal("vllm has no per-request latency")
	}
	off := v
	off.Physics.ReqLatency = 0
	off, _ = off.Prepare()
	reqs, _ := Poisson(200, 20, 512, 64, 1)
	p, _ := NewPolicy("chunked", 2048)
	run := func(s StepModel) *Outcome {
		o, err := Run(Config{Step: s, Policy: p}, reqs)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b := run(v), run(off)
	if a.Steps != b.Steps || a.End != b.End {
		t.Errorf("the latency changed the engine's work: %d steps to %.3f s vs %d to %.3f s", a.Steps, a.End, b.Steps, b.End)
	}
	for i := range a.Results {
		ra, rb := a.Results[i], b.Results[i]
		if math.Abs(ra.TTFT()-rb.TTFT()-v.Physics.ReqLatency) > 1e-9 || math.Abs(ra.E2E()-rb.E2E()-v.Physics.ReqLatency) > 1e-9 || ra.TPOT() != rb.TPOT() {
			t.Fatalf("request %d: TTFT %.4f vs %.4f, E2E %.4f vs %.4f, TPOT %g vs %g", i, ra.TTFT(), rb.TTFT(), ra.E2E(), rb.E2E(), ra.TPOT(), rb.TPOT())
		}
	}
}

// FP8 weights run on the FP8 tensor peak in the vllm profile (not on A100s,
// which have none); the lecture keeps the bf16 peak.
func TestFP8Compute(t *testing.T) {
	var w Work
	w.AddPrefill(0, 4096)
	for _, c := range []struct {
		prof, gpu string
		faster    bool
	}{{"vllm", "H100-SXM", true}, {"vllm", "A100-80GB", false}, {"lecture", "H100-SXM", false}} {
		bf := profiled(t, c.prof, "Llama-3.1-8B", c.gpu, 1)
		f8 := bf
		f8.DtypeBytes = 1
		f8, _ = f8.Prepare()
		r := f8.Price(w).ComputeTime / bf.Price(w).ComputeTime
		want := 1.0
		if c.faster {
			want = bf.GPU.FLOPS / bf.GPU.FP8FLOPS
		}
		if math.Abs(r-want) > 1e-9 {
			t.Errorf("%s on %s: FP8 compute time %.3f of bf16's", c.prof, c.gpu, r)
		}
	}
}
