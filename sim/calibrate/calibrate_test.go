package calibrate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/results"
)

// lectureStep is the lecture's step model: Llama-3.1-8B on an H100.
func lectureStep(t testing.TB) sim.StepModel {
	t.Helper()
	s, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A lab run simulated with known constants, written as a measured file,
// gives them back: the quiet decode step and the decode step while the long
// request decodes separate eff_mem from overhead, the long TTFT pins eff_compute.
func TestCalibrateRecoversLabConstants(t *testing.T) {
	truth, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	truth.EffCompute, truth.EffMem, truth.Overhead = 0.45, 0.7, 0.003
	truth, _ = truth.Prepare()
	p, _ := sim.NewPolicy("prefill-first", 0)
	w := sim.LabWorkload{ShortConcurrency: 8, ShortInputLen: 128, ShortOutputLen: 64, LongInputLen: 32000,
		LongOutputLen: 64, LongCount: 1, Duration: 5, InjectAfter: 1.5}
	out, err := sim.RunLab(sim.Config{Step: truth, Policy: p}, w)
	if err != nil {
		t.Fatal(err)
	}
	c := lab.DefaultConfig()
	c.LabWorkload = w
	m := &lab.Measured{Config: c, Summary: lab.Of(out), Gaps: lab.GapsFrom(out.Run.Arrivals, out.Run.Inject)}
	base, _ := sim.DefaultStepModel()
	ev, err := LabEvidence(sim.Config{Step: base, Policy: p}, m, "sim.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: %v %v", ev.Names, ev.Measured)
	cal, err := Fit(base, nil, []Evidence{ev})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cal.Constants {
		t.Logf("%s = %.4g (base %.4g) identified %v ±%.1f%% %s", f.Name, f.Value, f.Base, f.Identified, 100*f.RelStdErr, f.Note)
	}
	for _, tg := range cal.Targets {
		t.Logf("%s: measured %.2f ms, base %.2f, fitted %.2f", tg.Name, tg.Measured*1e3, tg.Base*1e3, tg.Fitted*1e3)
	}
	want := map[string]float64{"eff_compute": 0.45, "eff_mem": 0.7, "overhead": 0.003}
	for n, v := range want {
		got, _ := cal.Value(n)
		if math.Abs(got-v)/v > 0.03 {
			t.Errorf("%s = %.4g, want %.4g", n, got, v)
		}
	}
	if len(cal.NotIdentified) != 0 {
		t.Errorf("not identified: %v", cal.NotIdentified)
	}

	// Without the long request's decode steps (one output token) the
	// quiet step alone cannot separate eff_mem from overhead: one of them
	// is reported and kept.
	w.LongOutputLen = 1
	out, _ = sim.RunLab(sim.Config{Step: truth, Policy: p}, w)
	c.LabWorkload = w
	m = &lab.Measured{Config: c, Summary: lab.Of(out), Gaps: lab.GapsFrom(out.Run.Arrivals, out.Run.Inject)}
	ev, _ = LabEvidence(sim.Config{Step: base, Policy: p}, m, "short.json")
	cal, err = Fit(base, nil, []Evidence{ev})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.NotIdentified) != 1 {
		t.Errorf("want one constant not identified, got %v", cal.NotIdentified)
	}
	t.Logf("not identified: %v", cal.NotIdentified)
}

// The page's one call: a lab file in, the calibrated profile out.
func TestCalibrateMeasuredGivesAProfile(t *testing.T) {
	truth, _ := sim.DefaultStepModel()
	truth.EffCompute, truth.EffMem, truth.Overhead = 0.5, 0.75, 0.002
	truth, _ = truth.Prepare()
	p, _ := sim.NewPolicy("chunked", 2048)
	w := sim.LabWorkload{ShortConcurrency: 8, ShortInputLen: 128, ShortOutputLen: 64, LongInputLen: 24000,
		LongOutputLen: 32, LongCount: 1, Duration: 4, InjectAfter: 1}
	out, err := sim.RunLab(sim.Config{Step: truth, Policy: p}, w)
	if err != nil {
		t.Fatal(err)
	}
	c := lab.DefaultConfig()
	c.LabWorkload = w
	m := &lab.Measured{Config: c, Summary: lab.Of(out), Gaps: lab.GapsFrom(out.Run.Arrivals, out.Run.Inject)}
	lec, _ := sim.BuiltinProfile("lecture")
	base, _ := sim.DefaultStepModel()
	cal, prof, err := Lab(sim.Config{Step: base, Policy: p}, lec, m, "chunked.json", "mine")
	if err != nil {
		t.Fatal(err)
	}
	s, err := prof.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cal.Constants {
		t.Logf("%s %.4g ±%.1f%% %s", f.Name, f.Value, 100*f.RelStdErr, f.Note)
	}
	if math.Abs(s.EffMem-0.75)/0.75 > 0.05 || math.Abs(s.Overhead-0.002)/0.002 > 0.1 || math.Abs(s.EffCompute-0.5)/0.5 > 0.05 {
		t.Errorf("calibrated profile gives eff_compute %.4g, eff_mem %.4g, overhead %.4g", s.EffCompute, s.EffMem, s.Overhead)
	}
	if s.Profile != "mine" {
		t.Errorf("profile name %q", s.Profile)
	}
}

// A fit that reaches a constant's lower bound keeps a model Prepare takes:
// exp(log(0.01)) rounds to just under 0.01, which it refuses.
func TestWithLogStaysInRange(t *testing.T) {
	infos := sim.ConstantInfos()
	var active []int
	var theta []float64
	for i, in := range infos {
		if in.Name == "eff_mem" || in.Name == "eff_compute" {
			active = append(active, i)
			theta = append(theta, math.Log(in.Lo))
		}
	}
	if len(active) != 2 {
		t.Fatalf("eff_mem and eff_compute not among the constants: %v", infos)
	}
	if _, err := withLog(lectureStep(t), infos, active, theta); err != nil {
		t.Errorf("constants at their lower bound refused: %v", err)
	}
}

// checkNotes fails when figures' keyed notes are not their names, one for
// one and word for word (the page shows the keyed ones, the CLI the others).
func checkNotes(t *testing.T, what string, lines []string, notes []sim.Note) {
	t.Helper()
	if len(lines) != len(notes) {
		t.Errorf("%s: %d lines but %d keyed notes", what, len(lines), len(notes))
		return
	}
	for i, n := range notes {
		if n.Key == "" || n.Text != lines[i] {
			t.Errorf("%s %d: keyed note %+v, line %q", what, i, n, lines[i])
		}
		if got := fmt.Sprint(n); got != lines[i] {
			t.Errorf("%s %d: the note prints %q", what, i, got)
		}
	}
}

func TestCalibrationNamesHaveKeys(t *testing.T) {
	b := &results.VLLM{ITLs: [][]float64{{0.01, 0.011}, {0.012}}, TTFTs: []float64{0.05, 0.06}, InputLens: []int{100, 200}, OutputLens: []int{3, 2}, Duration: 1}
	ev, err := BenchEvidence(b, "x.json")
	if err != nil {
		t.Fatal(err)
	}
	checkNotes(t, "bench evidence", ev.Names, ev.Keys)
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 4, 6, 2, 4000
	st, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: st, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	ev, err = LabEvidence(sim.Config{Step: st, Policy: pol}, &lab.Measured{Config: c, Summary: lab.Of(lo), Gaps: lab.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}, "lab.json")
	if err != nil {
		t.Fatal(err)
	}
	checkNotes(t, "lab evidence", ev.Names, ev.Keys)
	if len(ev.Keys) < 3 {
		t.Errorf("lab evidence has %d figures: %v", len(ev.Names), ev.Names)
	}
	n := sim.Say("cal.why.partner", "%s; it trades off against %s (measure another batch size, context or prompt length to separate them)", sim.Say("cal.why.nopin", "these files do not pin it"), "overhead")
	if want := "these files do not pin it; it trades off against overhead (measure another batch size, context or prompt length to separate them)"; n.Text != want {
		t.Errorf("a nested note reads %q, want %q", n.Text, want)
	}
}

// Calibration writes a profile that reproduces the fitted step model.
func TestCalibrationProfileRoundTrips(t *testing.T) {
	base, _ := sim.BuiltinProfile("lecture")
	m, _ := modelspecs.Get(modelspecs.Default)
	a100, _ := hwspecs.Get("A100-80GB")
	h100, _ := hwspecs.Get("H100-SXM")
	s, err := base.Apply(sim.StepModel{Model: m, GPU: a100, TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.EffMem, s.Overhead = 0.7, 0.003
	s, _ = s.Prepare()
	cal := &Calibration{Step: s, Constants: []FittedConstant{{Name: "eff_mem", Value: 0.7, Identified: true}, {Name: "overhead", Value: 0.003, Identified: true}}}
	p, err := cal.Profile(base, "mine", "a.json")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := p.Marshal()
	q, err := sim.ParseProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.Apply(sim.StepModel{Model: s.Model, GPU: s.GPU})
	if err != nil {
		t.Fatal(err)
	}
	if got.EffMem != 0.7 || got.Overhead != 0.003 || got.EffCompute != 0.6 {
		t.Errorf("round trip: %+v", got)
	}
	other, _ := q.Apply(sim.StepModel{Model: s.Model, GPU: h100})
	if other.EffMem != 0.85 {
		t.Errorf("another GPU took the calibration: eff_mem %g", other.EffMem)
	}
}

// A small file whose config asks for more than memory holds (1024 streams
// of 100,000 tokens for an hour) is refused before any re-run, as
// `servelab sim --like` refuses it.
func TestLabEvidenceHeldToBudget(t *testing.T) {
	p, _ := sim.NewPolicy("prefill-first", 0)
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.ShortOutputLen, c.Duration, c.InjectAfter = 1024, 100000, 3600, 20
	m := &lab.Measured{Config: c, Summary: lab.Summary{Label: "huge", ShortConcurrency: 1024, ITLQuietP50: 0.01, WorstGap: 0.5, LongTTFT: 0.4}}
	for i := range 64 {
		m.Gaps = append(m.Gaps, sim.Gap{TRelInject: -1 + float64(i)/100, Gap: 0.01})
	}
	ev, err := LabEvidence(sim.Config{Step: lectureStep(t), Policy: p}, m, "huge.json")
	if err == nil {
		t.Fatalf("evidence built with %d figures: a fit would re-run the whole hour", len(ev.Names))
	}
	if !strings.Contains(err.Error(), "GB a run may use") || !strings.Contains(err.Error(), "config.short_concurrency in huge.json") {
		t.Errorf("err %v", err)
	}
	if want := sim.CheckLab(shortLab(c.LabWorkload, m.Summary), lectureStep(t), "config.duration or config.short_concurrency in huge.json"); want == nil || want.Error() != err.Error() {
		t.Errorf("LabEvidence says %q, sim.CheckLab %v", err, want)
	}
}
