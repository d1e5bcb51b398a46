package play

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"servelab/sim"
	"servelab/sim/scenario"
)

// The step-model profile the page simulates with: `lecture` (the course's
// model, the presets' default), `vllm`, or a profile uploaded (or
// calibrated) in this page. The state names it (URL key "profile"); the
// sliders effc, effm and ovh hold its eff_compute, eff_mem and overhead
// for the chosen GPU until the user moves them.

// AddProfile makes p pickable by its name (replacing one of that name);
// the built-in names cannot be replaced.
func (ss *Session) AddProfile(p *sim.Profile) error {
	if p == nil || strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("profile: name missing")
	}
	for _, n := range sim.ProfileNames() {
		if strings.EqualFold(n, p.Name) {
			return fmt.Errorf("profile %q: that name is built in; rename the profile in its file", p.Name)
		}
	}
	if ss.profiles == nil {
		ss.profiles = map[string]*sim.Profile{}
	}
	ss.profiles[p.Name] = p
	ss.gen++
	return nil
}

// ProfileChoices lists the built-in profiles, then the page's own, sorted.
func (ss *Session) ProfileChoices() []string {
	out := sim.ProfileNames()
	var own []string
	for n := range ss.profileMap() {
		own = append(own, n)
	}
	sort.Strings(own)
	return append(out, own...)
}

// ProfileByName is a built-in or page-loaded profile.
func (ss *Session) ProfileByName(name string) (*sim.Profile, error) {
	if name == "" {
		name = sim.DefaultProfile
	}
	if p, ok := ss.profileMap()[name]; ok {
		return p, nil
	}
	return sim.BuiltinProfile(name)
}

// ApplyProfile sets the assumptions not typed to the active profile's
// values for the state's GPU (after a new profile or GPU), as the sliders
// show them.
func ApplyProfile(s *State) { s.FillAssumptions() }

// ActiveProfile is the profile the state simulates with, before the typed
// assumptions.
func (s State) ActiveProfile() (*sim.Profile, error) {
	x := s.Experiment
	x.Loaded = s.Sess.profileMap()[x.Profile]
	return x.ActiveProfile()
}

// Const is one constant the step model uses, for the page: its value in
// the constant's unit, and where it came from ("" source: the page's slider).
type Const struct {
	Name, Unit, Meaning string
	Value               float64
	Source              string
	ByUser              bool // set on the page's slider, not the profile's value
}

// StepConsts lists the constants step uses under the state's profile, in
// display order, each with its source; an assumption the user typed (a
// slider moved away from the profile's value) is marked ByUser.
func StepConsts(s State, step sim.StepModel) []Const {
	p, err := s.ActiveProfile()
	if err != nil {
		p = nil
	}
	var out []Const
	for _, c := range sim.StepConstants(step, p) {
		k := Const{Name: c.Name, Unit: c.Unit, Meaning: ConstMeaning(s.Lang, c.ConstantInfo), Value: c.Value, Source: ProfileText(s.Lang, c.Source)}
		if kn, ok := scenario.KnobByName(c.Name); ok && kn.Bit != 0 && s.Typed&kn.Bit != 0 {
			k.ByUser, k.Source = true, ""
		}
		out = append(out, k)
	}
	return out
}

// GPUNote says whether the state's GPU has constants of its own in the
// active profile, in the state's language.
func GPUNote(s State) (fitted bool, note string) {
	p, err := s.ActiveProfile()
	if err != nil {
		return false, err.Error()
	}
	fitted, note = p.GPUNote(s.GPU)
	return fitted, ProfileText(s.Lang, note)
}

// EngineConfig is the engine the state runs on one GPU (its step model and
// policy), as a calibration re-runs it.
func EngineConfig(s State) (sim.Config, error) {
	b, err := build(s)
	if err != nil {
		return sim.Config{}, err
	}
	return sim.Config{Step: b.Step, Policy: b.Config.Policy}, nil
}

// linkConsts are the profile constants a link carries as typed assumptions.
var linkConsts = map[string]bool{"eff_compute": true, "eff_mem": true, "overhead": true}

// Link is the query a link to s carries, and a note when it cannot name
// s's profile: a profile uploaded or calibrated in this page lives only
// here, so its name tells a recipient nothing. When a built-in profile with
// the page's own eff_compute, eff_mem and overhead (what a calibration fits:
// links carry them as effc, effm, ovh) simulates the same steps, the link
// names that profile and carries the three constants, and the note says so.
// Otherwise the link keeps the name and the note says its recipient needs
// the profile's file.
func (s State) Link() (query, note string) {
	own := s.Sess.profileMap()[s.Profile]
	if own == nil {
		return s.Query(), ""
	}
	want, err := linkSteps(s)
	if err != nil {
		return s.Query(), ""
	}
	x := s.Clone()
	x.Sess = nil
	for _, c := range own.Resolve(s.GPU) {
		if !linkConsts[c.Name] {
			continue
		}
		if k, ok := scenario.KnobByName(c.Name); ok && x.Typed&k.Bit == 0 {
			k.SetValue(&x.Experiment, c.Value) // the profile's exact value, typed
		}
	}
	for _, base := range sim.ProfileNames() {
		x.Profile, x.Loaded = base, nil
		q := x.Query()
		r, notes := ParseQueryIn(q, s.Lang)
		if len(notes) > 0 {
			continue
		}
		if got, err := linkSteps(r); err == nil && sameSteps(got, want) {
			return q, Tf(s.Lang, "note.linkprofile", s.Profile, base)
		}
	}
	return s.Query(), Tf(s.Lang, "note.linkneedsprofile", s.Profile)
}

// linkSteps prices steps of every kind with x's step model (its profile
// from x's own session), to tell whether two settings simulate alike.
func linkSteps(x State) ([]float64, error) {
	e := x.Experiment
	e.Loaded = x.Sess.profileMap()[e.Profile]
	step, _, err := e.StepModel()
	if err != nil {
		return nil, err
	}
	if step, err = step.Prepare(); err != nil {
		return nil, err
	}
	return []float64{
		step.Decode(1, 100).Seconds, step.Decode(32, 32*700).Seconds, step.Decode(256, 256*4000).Seconds,
		step.Prefill(512).Seconds, step.Prefill(8192).Seconds, step.Prefill(128, 2048).Seconds,
	}, nil
}

// sameSteps reports whether two runs of linkSteps agree to a part in 10^9.
func sameSteps(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Abs(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// Trust is how far to trust this run's predictions: the active profile's
// error on published points held out of its fit, per regime, in one line
// of lang. It is "" where the profile states none (the lecture's), for
// FP8 weights (not validated), and once the student moved a constant.
func (r *SimRun) Trust(lang string) string {
	if t, ok := r.trust[lang]; ok {
		return t // (a render per frame must not parse the profile again)
	}
	t := r.trustIn(lang)
	if r.trust == nil {
		r.trust = map[string]string{}
	}
	r.trust[lang] = t
	return t
}

func (r *SimRun) trustIn(lang string) string {
	x := r.State.Experiment
	if x.Typed&(scenario.TypedEffCompute|scenario.TypedEffMem|scenario.TypedOverhead) != 0 {
		return ""
	}
	prof, err := r.State.ActiveProfile()
	if err != nil || prof == nil {
		return ""
	}
	var parts []string
	for _, reg := range []struct{ name, regime string }{{"TTFT", sim.RegimeTTFT}, {"TPOT/ITL", sim.RegimeTPOT}, {T(lang, "fig.tput"), sim.RegimeThroughput}} {
		if n, ok := prof.TrustFor(r.Step, reg.regime); ok {
			parts = append(parts, reg.name+" "+Say(lang, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return Tf(lang, "fig.trust", x.Profile, strings.Join(parts, " · "))
}
