package play

import (
	"strings"
	"testing"

	"servelab/sim"
)

// The lecture's profile is the page's old step model, unchanged; vllm's
// constants go on the sliders, change the step, survive the link, and a
// lecture preset brings the lecture back.
func TestProfileInState(t *testing.T) {
	s := DefaultState()
	lec, err := stepModel(s)
	if err != nil {
		t.Fatal(err)
	}
	if d := lec.Decode(32, 32*700).Seconds; d < 7.66e-3 || d > 7.68e-3 {
		t.Errorf("lecture decode step %.4g s, want the lecture's 7.67 ms", d)
	}
	if n := s.Set("profile", "vllm"); n != "" {
		t.Fatal(n)
	}
	ApplyProfile(&s)
	if s.EffCompute != 0.6875 || s.EffMem != 0.7385 {
		t.Errorf("vllm's H100 constants not on the sliders: %v %v", s.EffCompute, s.EffMem)
	}
	v, err := stepModel(s)
	if err != nil {
		t.Fatal(err)
	}
	if v.Profile != "vllm" || v.Decode(32, 32*700).Seconds == lec.Decode(32, 32*700).Seconds {
		t.Errorf("vllm profile %q gives the lecture's step", v.Profile)
	}
	q := s.Query()
	if !strings.Contains(q, "profile=vllm") {
		t.Errorf("query lacks the profile: %s", q)
	}
	back, notes := ParseQuery(q)
	if back.Profile != "vllm" || back.EffCompute != 0.6875 || len(notes) != 0 {
		t.Errorf("link gave profile %q effc %v notes %v", back.Profile, back.EffCompute, notes)
	}
	if strings.Contains(q, "effc=") {
		t.Errorf("the profile's own values are no setting of the link: %s", q)
	}
	// A link's own slider values win over the profile's.
	mine, _ := ParseQuery(q + "&effc=0.5")
	if mine.EffCompute != 0.5 {
		t.Errorf("link's effc %v, want 0.5", mine.EffCompute)
	}
	mv, err := stepModel(mine)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range StepConsts(mine, mv) {
		if c.Name == "eff_compute" && !c.ByUser {
			t.Errorf("eff_compute 0.5 is not marked as set on the page: %+v", c)
		}
		if c.Name == "roofline_p" && (c.ByUser || c.Source == "") {
			t.Errorf("roofline_p lacks its source: %+v", c)
		}
	}
	p, _ := PresetByName("demo2")
	s.ApplyPreset(p)
	if s.Profile != "lecture" || s.EffCompute != 0.6 || (s.Overhead*1e3) != 1 {
		t.Errorf("preset kept profile %q effc %v ovh %v", s.Profile, s.EffCompute, (s.Overhead * 1e3))
	}
	if n := s.Set("profile", "nosuch"); !strings.Contains(n, "nosuch") {
		t.Errorf("unknown profile note %q", n)
	}
}

// An uploaded profile is pickable by name; a built-in name is refused.
func TestAddProfile(t *testing.T) {
	lec, _ := sim.BuiltinProfile("lecture")
	mine, err := lec.With("H100-SXM", "eff_mem", 0.5, "a test")
	if err != nil {
		t.Fatal(err)
	}
	ss := NewSession()
	if err := ss.AddProfile(mine); err == nil {
		t.Errorf("a profile named lecture replaced the built-in one")
	}
	mine.Name = "mine"
	if err := ss.AddProfile(mine); err != nil {
		t.Fatal(err)
	}
	s := DefaultState()
	s.Sess = ss
	if n := s.Set("profile", "mine"); n != "" {
		t.Fatal(n)
	}
	ApplyProfile(&s)
	if s.EffMem != 0.5 {
		t.Errorf("uploaded profile's eff_mem %v on the slider", s.EffMem)
	}
}
