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
	if s.EffCompute != 0.6886 || s.EffMem != 0.744 {
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
	if back.Profile != "vllm" || back.EffCompute != 0.6886 || len(notes) != 0 {
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

// calibrated is a profile as the page's calibration makes one: base's
// constants for gpu in the GPU's entry, with fitted values over them.
func calibrated(t *testing.T, base, name, gpu string, fitted map[string]float64) *sim.Profile {
	t.Helper()
	b, err := sim.BuiltinProfile(base)
	if err != nil {
		t.Fatal(err)
	}
	p := b.Clone()
	p.Name = name
	for _, r := range b.Resolve(gpu) {
		if p, err = p.With(gpu, r.Name, r.Value, r.Source); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range fitted {
		if p, err = p.With(gpu, k, v, "fitted"); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestLinkCarriesACalibratedProfile: a link from a page whose profile was
// calibrated there (profile=cal-m, which no recipient has) names the base
// profile with the fitted constants as typed assumptions, so its recipient
// simulates the same steps with no "unknown profile"; the sender's note
// says so. A profile whose other constants a link cannot carry keeps its
// name, and the notes say what the link needs, in both languages.
func TestLinkCarriesACalibratedProfile(t *testing.T) {
	for _, c := range []struct {
		base   string
		fitted map[string]float64
		exact  bool
	}{
		{"lecture", map[string]float64{"eff_compute": 0.4123456789, "eff_mem": 0.7712345, "overhead": 0.00234567}, true},
		{"vllm", map[string]float64{"eff_compute": 0.4123456789, "eff_mem": 0.7712345}, true},
		// vllm's per-sequence costs scale with a typed overhead, so a fitted
		// overhead cannot travel as ovh; nor can eff_kv, no link key.
		{"vllm", map[string]float64{"overhead": 0.00234567}, false},
		{"vllm", map[string]float64{"eff_kv": 0.5}, false},
	} {
		for _, lang := range Langs() {
			s := DefaultState()
			s.Sess, s.Lang = NewSession(), lang
			if err := s.Sess.AddProfile(calibrated(t, c.base, "cal-m", s.GPU, c.fitted)); err != nil {
				t.Fatal(err)
			}
			if note := s.Set("profile", "cal-m"); note != "" {
				t.Fatal(note)
			}
			s.Set("rate", "25")
			q, note := s.Link()
			r, notes := ParseQueryIn(q, lang)
			what := c.base + " " + lang
			if !c.exact {
				if !strings.Contains(q, "profile=cal-m") || !strings.Contains(note, "cal-m") || !strings.Contains(note, "JSON") {
					t.Errorf("%s %v: a profile a link cannot carry: link %s, note %q", what, c.fitted, q, note)
				}
				if len(notes) != 1 || !strings.Contains(notes[0], "cal-m") || !strings.Contains(notes[0], "JSON") {
					t.Errorf("%s %v: its recipient is told %v", what, c.fitted, notes)
				}
				continue
			}
			if len(notes) > 0 || strings.Contains(q, "cal-m") {
				t.Errorf("%s: the link %s gives its recipient %v", what, q, notes)
			}
			want, _ := linkSteps(s)
			got, err := linkSteps(r)
			if err != nil || !sameSteps(got, want) {
				t.Errorf("%s: the recipient's steps %v, the sender's %v (%v)", what, got, want, err)
			}
			if r.Rate != 25 || !strings.Contains(note, "cal-m") || !strings.Contains(note, c.base) {
				t.Errorf("%s: rate %g, note %q", what, r.Rate, note)
			}
		}
	}
	// A built-in profile's link is the state's query, with no note.
	d := DefaultState()
	d.Set("profile", "vllm")
	if q, note := d.Link(); q != d.Query() || note != "" {
		t.Errorf("a built-in profile's link %s, note %q", q, note)
	}
}

// TestTrustBesideVLLMPredictions: a vllm-profile run states its held-out
// error per regime (issue 30 item 5); the lecture profile and a run whose
// constant the student moved state none.
func TestTrustBesideVLLMPredictions(t *testing.T) {
	s := DefaultState()
	s.Set("profile", "vllm")
	ApplyProfile(&s)
	s.SetNum("n", 50)
	r, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range Langs() {
		got := r.Trust(lang)
		if !strings.Contains(got, "TTFT") || !strings.Contains(got, "TPOT/ITL") || !strings.Contains(got, "±") || !strings.Contains(got, "H100") {
			t.Errorf("%s: vllm run's trust line %q: want TTFT, TPOT/ITL and throughput errors on H100", lang, got)
		}
	}
	s.SetNum("effc", 0.5)
	moved, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := moved.Trust("en"); got != "" {
		t.Errorf("with a moved constant: %q; want none (the fit's error no longer applies)", got)
	}
	lec, err := Simulate(DefaultState())
	if err != nil {
		t.Fatal(err)
	}
	if got := lec.Trust("en"); got != "" {
		t.Errorf("lecture profile: %q; want none", got)
	}
}
