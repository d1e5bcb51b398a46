//go:build js && wasm

package play

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"servelab/hwspecs"
	"servelab/sim"
)

// The step-model profile the page simulates with: `lecture` (the course's
// model, the presets' default), `vllm`, or a profile uploaded (or
// calibrated) in this page. The state names it (URL key "profile"); the
// sliders effc, effm and ovh hold its eff_compute, eff_mem and overhead
// for the chosen GPU until the user moves them.

// uploaded holds the profiles this page loaded or calibrated, by name.
var uploaded = map[string]*sim.Profile{}

// AddProfile makes p pickable by its name (replacing one of that name);
// the built-in names cannot be replaced.
func AddProfile(p *sim.Profile) error {
	if p == nil || strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("profile: name missing")
	}
	for _, n := range sim.ProfileNames() {
		if strings.EqualFold(n, p.Name) {
			return fmt.Errorf("profile %q: that name is built in; rename the profile in its file", p.Name)
		}
	}
	uploaded[p.Name] = p
	return nil
}

// ProfileChoices lists the built-in profiles, then the page's own, sorted.
func ProfileChoices() []string {
	out := sim.ProfileNames()
	var own []string
	for n := range uploaded {
		own = append(own, n)
	}
	sort.Strings(own)
	return append(out, own...)
}

// ProfileByName is a built-in or page-loaded profile.
func ProfileByName(name string) (*sim.Profile, error) {
	if name == "" {
		name = sim.DefaultProfile
	}
	if p, ok := uploaded[name]; ok {
		return p, nil
	}
	return sim.BuiltinProfile(name)
}

// profileName is the state's profile, "" read as the default.
func (s State) profileName() string {
	if s.Profile == "" {
		return sim.DefaultProfile
	}
	return s.Profile
}

// ActiveProfile is the profile the state simulates with.
func (s State) ActiveProfile() (*sim.Profile, error) { return ProfileByName(s.profileName()) }

// sliderConstants are the profile constants the page's sliders hold: the
// constant's name, its slider, and the slider's unit per constant unit.
var sliderConstants = []struct {
	name, key string
	scale     float64
}{{"eff_compute", "effc", 1}, {"eff_mem", "effm", 1}, {"overhead", "ovh", 1e3}}

// setProfile picks a profile by name (a note when it is not loaded).
func (s *State) setProfile(v string) string {
	v = strings.TrimSpace(v)
	for _, n := range ProfileChoices() {
		if strings.EqualFold(n, v) {
			s.Profile = n
			if n == sim.DefaultProfile {
				s.Profile = ""
			}
			return ""
		}
	}
	return Tf(s.Lang, "note.noprofile", v, strings.Join(ProfileChoices(), ", "))
}

// ApplyProfile sets the sliders to the active profile's eff_compute,
// eff_mem and overhead for the state's GPU (after a new profile or GPU).
func ApplyProfile(s *State) {
	p, err := s.ActiveProfile()
	if err != nil {
		return
	}
	vals := map[string]float64{}
	for _, c := range p.Resolve(s.GPU) {
		vals[c.Name] = c.Value
	}
	for _, sc := range sliderConstants {
		if v, ok := vals[sc.name]; ok {
			s.set(sc.key, round4(v*sc.scale))
		} else if n, ok := numIndex[sc.key]; ok {
			s.set(sc.key, n.Def)
		}
	}
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// profileStep is the state's step model under a profile other than the
// lecture's: the profile's physics and constants for the GPU, with the
// sliders' eff_compute, eff_mem and overhead on top.
func profileStep(s State) (sim.StepModel, error) {
	p, err := s.ActiveProfile()
	if err != nil {
		return sim.StepModel{}, err
	}
	m, err := model(s.Model) // the catalogue or an uploaded config.json
	if err != nil {
		return sim.StepModel{}, err
	}
	g, err := hwspecs.Get(s.GPU)
	if err != nil {
		return sim.StepModel{}, err
	}
	st, err := p.Apply(sim.StepModel{Model: m, GPU: g, TP: s.I("tp")})
	if err != nil {
		return sim.StepModel{}, err
	}
	st.EffCompute, st.EffMem, st.Overhead = s.F("effc"), s.F("effm"), s.F("ovh")/1e3
	return st.Prepare()
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
// display order, each with its source; a slider moved away from the
// profile's value is marked ByUser.
func StepConsts(s State, step sim.StepModel) []Const {
	p, err := s.ActiveProfile()
	if err != nil {
		p = nil
	}
	prof := map[string]float64{}
	if p != nil {
		for _, c := range p.Resolve(step.GPU.Name) {
			prof[c.Name] = c.Value
		}
	}
	var out []Const
	for _, c := range sim.StepConstants(step, p) {
		k := Const{Name: c.Name, Unit: c.Unit, Meaning: ConstMeaning(s.Lang, c.ConstantInfo), Value: c.Value, Source: ProfileText(s.Lang, c.Source)}
		for _, sc := range sliderConstants {
			if sc.name == c.Name {
				// The sliders hold the profile's values rounded (ApplyProfile).
				pv, ok := prof[c.Name]
				if !ok || round4(pv*sc.scale) != round4(c.Value*sc.scale) {
					k.ByUser, k.Source = true, ""
				}
			}
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
	step, err := stepModel(s)
	if err != nil {
		return sim.Config{}, err
	}
	pol, err := policy(s)
	if err != nil {
		return sim.Config{}, err
	}
	return sim.Config{Step: step, Policy: pol}, nil
}
