package sim

import (
	"math"
	"testing"
)

// A lab run simulated with known constants, written as a measured file,
// gives them back: the quiet decode step and the decode step while the long
// request decodes separate eff_mem from overhead, the long TTFT pins eff_compute.
func TestCalibrateRecoversLabConstants(t *testing.T) {
	truth, err := DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	truth.EffCompute, truth.EffMem, truth.Overhead = 0.45, 0.7, 0.003
	truth, _ = truth.Prepare()
	p, _ := NewPolicy("prefill-first", 0)
	w := LabWorkload{ShortConcurrency: 8, ShortInputLen: 128, ShortOutputLen: 64, LongInputLen: 32000,
		LongOutputLen: 64, LongCount: 1, Duration: 5, InjectAfter: 1.5}
	out, err := RunLab(Config{Step: truth, Policy: p}, w)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultLabConfig()
	c.LabWorkload = w
	m := &Measured{Config: c, Summary: out.Summary, Gaps: GapsFrom(out.Run.Arrivals, out.Run.Inject)}
	base, _ := DefaultStepModel()
	ev, err := LabEvidence(Config{Step: base, Policy: p}, m, "sim.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: %v %v", ev.Names, ev.Measured)
	cal, err := Calibrate(base, nil, []Evidence{ev})
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
	out, _ = RunLab(Config{Step: truth, Policy: p}, w)
	c.LabWorkload = w
	m = &Measured{Config: c, Summary: out.Summary, Gaps: GapsFrom(out.Run.Arrivals, out.Run.Inject)}
	ev, _ = LabEvidence(Config{Step: base, Policy: p}, m, "short.json")
	cal, err = Calibrate(base, nil, []Evidence{ev})
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
	truth, _ := DefaultStepModel()
	truth.EffCompute, truth.EffMem, truth.Overhead = 0.5, 0.75, 0.002
	truth, _ = truth.Prepare()
	p, _ := NewPolicy("chunked", 2048)
	w := LabWorkload{ShortConcurrency: 8, ShortInputLen: 128, ShortOutputLen: 64, LongInputLen: 24000,
		LongOutputLen: 32, LongCount: 1, Duration: 4, InjectAfter: 1}
	out, err := RunLab(Config{Step: truth, Policy: p}, w)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultLabConfig()
	c.LabWorkload = w
	m := &Measured{Config: c, Summary: out.Summary, Gaps: GapsFrom(out.Run.Arrivals, out.Run.Inject)}
	lec, _ := BuiltinProfile("lecture")
	base, _ := DefaultStepModel()
	cal, prof, err := CalibrateMeasured(Config{Step: base, Policy: p}, lec, m, "chunked.json", "mine")
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
	infos := ConstantInfos()
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
