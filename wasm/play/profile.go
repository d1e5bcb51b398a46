package play

import (
	"fmt"
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
