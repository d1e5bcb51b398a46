package scenario

import (
	"flag"
	"io"
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"servelab/modelspecs"
	"servelab/sim"
)

func TestKnobTableIsConsistent(t *testing.T) {
	seen := map[string]string{}
	for i := range Knobs {
		k := &Knobs[i]
		for _, key := range append([]string{"name:" + k.Name, "flag:" + k.Flag, "url:" + k.URL}, k.Aliases...) {
			if strings.HasSuffix(key, ":") {
				continue
			}
			if other, dup := seen[key]; dup {
				t.Errorf("%s is both %s's and %s's", key, other, k.Name)
			}
			seen[key] = k.Name
		}
		if k.Flag == "" && k.URL == "" {
			t.Errorf("%s has neither a flag nor a URL key", k.Name)
		}
		if k.Kind != Choice {
			if !(k.Min <= k.Def && k.Def <= k.Max) || k.Step <= 0 {
				t.Errorf("%s: default %g outside [%g, %g] or step %g", k.Name, k.Def, k.Min, k.Max, k.Step)
			}
			if k.get == nil || k.set == nil {
				t.Errorf("%s has no accessors", k.Name)
			}
		} else if k.getS == nil || k.setS == nil {
			t.Errorf("%s has no accessors", k.Name)
		}
	}
}

// TestEveryKnobReachesItsField sets each numeric knob off its default and
// checks the experiment changed (a row wired to the wrong field would
// leave it equal, or change another knob).
func TestEveryKnobReachesItsField(t *testing.T) {
	for i := range Knobs {
		k := &Knobs[i]
		x := Default()
		if k.Kind == Choice {
			continue
		}
		v := k.Max
		if v == k.Def {
			v = k.Min
		}
		k.SetValue(&x, v)
		if got := k.Get(&x); got != v {
			t.Errorf("%s: set %g, read %g", k.Name, v, got)
		}
		for j := range Knobs {
			o := &Knobs[j]
			if j != i && o.Kind != Choice && !o.IsDefault(&x) {
				t.Errorf("setting %s moved %s to %g", k.Name, o.Name, o.Get(&x))
			}
		}
	}
}

func TestURLRoundTrip(t *testing.T) {
	for _, p := range Presets {
		x := Default()
		p.Apply(&x)
		x.Seed = 7
		x.EffMem, x.Typed = 0.7, TypedEffMem
		q := x.Query()
		vals, err := url.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		y := Default()
		notes, other, _ := y.ParseQuery(vals)
		if len(notes) > 0 || len(other) > 0 {
			t.Errorf("%s: notes %v, other %v", p.Name, notes, other)
		}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: %q read back as\n%+v, not\n%+v", p.Name, q, y, x)
		}
		if q2 := y.Query(); q2 != q {
			t.Errorf("%s: query %q became %q", p.Name, q, q2)
		}
	}
}

func TestFlagsRoundTrip(t *testing.T) {
	all := StepGroup | EngineGroup | ClusterGroup | PoissonGroup | LabGroup | SLOGroup | ProbeGroup | WorkloadGroup
	for _, p := range Presets {
		x := Default()
		p.Apply(&x)
		x.Seed, x.Overhead, x.Typed = 3, 0.002, TypedOverhead
		args := Flags(&x, all)
		y := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		BindFlags(fs, &y, all)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%s: %v: %v", p.Name, args, err)
		}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: %v read back as\n%+v, not\n%+v", p.Name, args, y, x)
		}
	}
}

func TestOldLinksStayValid(t *testing.T) {
	x := Default()
	vals, _ := url.ParseQuery("policy=disagg&lendist=2&effc=0.6&ovh=1&rate=30&view=1")
	notes, other, _ := x.ParseQuery(vals)
	if len(notes) > 0 {
		t.Errorf("notes %v", notes)
	}
	if x.Policy != Disaggregated || x.LengthDist != "lognormal" || x.Rate != 30 {
		t.Errorf("read %q %q %g", x.Policy, x.LengthDist, x.Rate)
	}
	if x.Typed != 0 {
		t.Errorf("the lecture's own values should not count as typed: %b", x.Typed)
	}
	if other.Get("view") != "1" {
		t.Errorf("a key of no knob should be handed back: %v", other)
	}
}

func TestLinkValuesAreClampedWithANote(t *testing.T) {
	x := Default()
	vals, _ := url.ParseQuery("rate=500&ovh=abc&policy=fastest")
	notes, _, _ := x.ParseQuery(vals)
	keys := map[string]bool{}
	for _, n := range notes {
		keys[n.Key+":"+n.Knob.Name] = true
	}
	for _, want := range []string{"range:rate", "notnum:overhead", "choice:policy"} {
		if !keys[want] {
			t.Errorf("no %s note in %v", want, notes)
		}
	}
	if x.Rate != 200 || x.Policy != PrefillFirst {
		t.Errorf("rate %g policy %q", x.Rate, x.Policy)
	}
}

// An FP8 checkpoint is priced at one byte per weight whoever builds it.
func TestFP8ConfigPricesOneByte(t *testing.T) {
	cfg := `{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,
"num_key_value_heads":8,"num_hidden_layers":32,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":false,
"quantization_config":{"quant_method":"fp8"}}`
	m, err := modelspecs.FromHFConfig([]byte(cfg), "fp8.json")
	if err != nil {
		t.Fatal(err)
	}
	x := Default()
	x.Custom, x.Model = &m, m.Name
	step, _, err := x.StepModel()
	if err != nil {
		t.Fatal(err)
	}
	fp8 := step.Decode(32, 32*700).Seconds
	x.Custom = nil
	x.Model = modelspecs.Default
	step, _, _ = x.StepModel()
	bf16 := step.Decode(32, 32*700).Seconds
	if !(fp8 < 0.7*bf16) {
		t.Errorf("FP8 decode step %.2f ms, bf16 %.2f ms: FP8 should read half the weights", fp8*1e3, bf16*1e3)
	}
	x.Custom, x.DtypeBytes, x.Typed = &m, 2, TypedDtype
	step, _, _ = x.StepModel()
	if got := step.Decode(32, 32*700).Seconds; math.Abs(got-bf16) > 1e-12 {
		t.Errorf("a typed dtype of 2 should price FP8's shape as bf16: %.3f vs %.3f ms", got*1e3, bf16*1e3)
	}
}

// A 70B model does not fit one H100, ideal engine or not.
func TestSeventyBillionRefusedOnOneGPU(t *testing.T) {
	x := Default()
	x.Model, x.Ideal = "Llama-3.1-70B", true
	if _, err := x.Build(); err == nil || !strings.Contains(err.Error(), "tp") {
		t.Errorf("Build = %v; want a refusal naming --tp", err)
	}
	x.TP = 4
	if _, err := x.Build(); err != nil {
		t.Errorf("70B on 4 GPUs: %v", err)
	}
}

// The lecture's acceptance figures come out of the default experiment.
func TestDefaultIsTheLecture(t *testing.T) {
	x := Default()
	b, err := x.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Step.Decode(32, 32*700).Seconds * 1e3; math.Abs(got-7.67) > 0.01 {
		t.Errorf("decode step %.3f ms, want 7.67", got)
	}
	if got := b.Step.Mixed(32, 32*700, 512).Seconds * 1e3; math.Abs(got-14.90) > 0.01 {
		t.Errorf("mixed step %.3f ms, want 14.90", got)
	}
	if b.Config.Policy.Name() != "prefill-first" || b.Cluster != nil {
		t.Errorf("policy %s cluster %v", b.Config.Policy.Name(), b.Cluster)
	}
	reqs, err := x.RequestsAt(x.Rate)
	if err != nil || len(reqs) != 1500 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	if _, err := sim.Run(b.Config, reqs); err != nil {
		t.Fatal(err)
	}
}

// TestCourseKnobsRoundTrip: the course's settings (prefix caching, shared
// prompts and sessions, replicas, speculation) off their defaults go
// through a link and through flags and come back equal, and build.
func TestCourseKnobsRoundTrip(t *testing.T) {
	x := Default()
	x.Policy, x.PrefixCaching, x.SystemPrompt, x.Turns, x.ThinkTime = Chunked, true, 1000, 4, 12.5
	x.Replicas, x.Route, x.RouteStale, x.RouteThreshold = 3, string(sim.RoutePrefixAware), 0.25, 4
	x.SpecTokens, x.SpecAcceptList, x.SpecDraft, x.SpecDraftCost = 3, "0.9,0.7,0.5", "Llama-3.2-1B", 0.1
	vals, err := url.ParseQuery(x.Query())
	if err != nil {
		t.Fatal(err)
	}
	y := Default()
	if notes, other, _ := y.ParseQuery(vals); len(notes) > 0 || len(other) > 0 || !reflect.DeepEqual(x, y) {
		t.Errorf("link: notes %v, other %v,\n%+v read back as\n%+v", notes, other, x, y)
	}
	all := StepGroup | EngineGroup | ClusterGroup | PoissonGroup | LabGroup | SLOGroup | ProbeGroup | WorkloadGroup
	z := Default()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	BindFlags(fs, &z, all)
	if err := fs.Parse(Flags(&x, all)); err != nil || !reflect.DeepEqual(x, z) {
		t.Errorf("flags %v: %v, read back as\n%+v", Flags(&x, all), err, z)
	}
	b, err := x.Build()
	if err != nil {
		t.Fatal(err)
	}
	if b.Replicas == nil || b.Replicas.N != 3 || !b.Config.Limits.PrefixCaching || b.Config.Spec.K != 3 || b.Config.Spec.Draft == nil || len(b.Config.Spec.Accept) != 3 {
		t.Errorf("built %+v, spec %+v", b.Replicas, b.Config.Spec)
	}
	for _, bad := range []func(*Experiment){
		func(x *Experiment) { x.Policy = Disaggregated },
		func(x *Experiment) { x.SpecAcceptList = "0.9,x" },
		func(x *Experiment) { x.SpecAcceptList = "0.9,0.8" },
		func(x *Experiment) { x.SpecDraft = "GPT-9" },
		func(x *Experiment) { x.Route = "nearest" },
		func(x *Experiment) { x.Workload = Lab },
	} {
		y := x
		bad(&y)
		if _, err := y.Build(); err == nil {
			t.Errorf("built %+v", y)
		}
	}
}
