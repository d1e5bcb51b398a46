// Package play is the playground's model, apart from the page: the settings
// (State: the experiment, the view, the URL and presets), the simulation the
// view draws (Simulate) and the measured runs laid over it. It has no DOM and
// no canvas: it builds and tests natively, and under node, the same wasm
// runtime as the browser.
//
// It imports sim and its sub-packages and the catalogues; the page (wasm)
// imports it, and the CLI's tests do, to check the page runs what the CLI runs.
package play

import (
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"servelab/sim/scenario"
)

// State is every setting the page shows: the experiment (scenario's, the
// same value the CLI builds from its flags), the preset it came from, the
// view and the language. The URL holds all of it but the language, so a
// shared link reproduces the view exactly.
type State struct {
	scenario.Experiment
	Preset string
	View   View
	// Lang is the language of the notes Set returns ("" is English); it
	// is the page's, not part of the simulation or its query.
	Lang string
	// Sess is the page's session: what it uploaded and the memory its runs
	// reuse (nil: nothing uploaded, nothing reused).
	Sess *Session
}

// View is where the timeline looks: from T0, Span seconds wide, the
// playback cursor (-1: none) and the selected step (-1: none). It is the
// page's alone: no CLI flag has it.
type View struct {
	T0, Span, Cursor float64
	Sel              int
}

// viewKey is one URL key of the view, with its range.
type viewKey struct {
	key         string
	min, max, d float64
	whole       bool
	field       func(*View) *float64
}

// viewKeys are the view's URL keys.
var viewKeys = []viewKey{
	{"t0", 0, 1e6, 0, false, func(v *View) *float64 { return &v.T0 }},
	{"span", 0.001, 1e6, 1, false, func(v *View) *float64 { return &v.Span }},
	{"cursor", -1, 1e6, -1, false, func(v *View) *float64 { return &v.Cursor }},
	{"sel", -1, 1e8, -1, true, nil},
}

// DefaultState is the page with no URL: the experiment every knob's
// default describes (the lecture's colocated setup) and the whole first second.
func DefaultState() State {
	return State{Experiment: scenario.Default(), View: View{T0: 0, Span: 1, Cursor: -1, Sel: -1}}
}

// Clone copies s (the trace's requests are shared: nothing changes them).
func (s State) Clone() State { return s }

// label is a knob's name in the notes' language.
func (s *State) label(k *scenario.Knob) string { return T(s.Lang, k.Label()) }

// noteText is a scenario note in the state's language.
func (s *State) noteText(n *scenario.Note) string {
	if n == nil {
		return ""
	}
	args := make([]any, 0, len(n.Args)+1)
	if n.Knob != nil {
		if n.Key == scenario.NoteChoice {
			args = append(args, n.Knob.URL)
		} else {
			args = append(args, s.label(n.Knob))
		}
	}
	for _, a := range n.Args {
		args = append(args, a)
	}
	if n.Key == scenario.NoteNaN && len(args) == 3 {
		args[1] = n.Args[0] // "%v"
	}
	return Tf(s.Lang, "note."+n.Key, args...)
}

// pick resolves the keys whose values the page holds beside the
// catalogues (uploaded models and profiles) and the preset.
func (s *State) pick(x *scenario.Experiment, key, v string) (*scenario.Note, bool) {
	switch key {
	case "model":
		for _, n := range s.Sess.ModelNames() {
			if strings.EqualFold(n, strings.TrimSpace(v)) {
				x.Model = n
				return nil, true
			}
		}
		k, _ := scenario.KnobByURL("model")
		return &scenario.Note{Key: scenario.NoteChoice, Knob: k, Args: []string{v, strings.Join(s.Sess.ModelNames(), ", "), x.Model}}, true
	case "profile":
		for _, n := range s.Sess.ProfileChoices() {
			if strings.EqualFold(n, strings.TrimSpace(v)) {
				x.Profile = n
				x.Loaded = s.Sess.profileMap()[n]
				x.FillAssumptions()
				return nil, true
			}
		}
		return &scenario.Note{Key: "noprofile", Args: []string{v, strings.Join(s.Sess.ProfileChoices(), ", ")}}, true
	}
	return nil, false
}

// Set applies one key=value from the URL, a control or the JS API (values
// in the page's units), and returns a note when it could not keep the value
// as given.
func (s *State) Set(key, value string) string {
	switch key {
	case "preset":
		if p, ok := scenario.PresetByName(value); ok {
			s.Preset = p.Name
			return ""
		} else if value == "" {
			s.Preset = ""
			return ""
		}
		return Tf(s.Lang, "note.unknownpreset", value)
	case "gpu":
		n, _ := s.Experiment.SetURL(key, value)
		s.Experiment.FillAssumptions() // the profile's values are the GPU's
		return s.noteText(n)
	}
	if n, ok := s.pick(&s.Experiment, key, value); ok {
		if key == "profile" && n != nil && n.Key == "noprofile" {
			return Tf(s.Lang, "note.noprofile", n.Args[0], n.Args[1])
		}
		return s.noteText(n)
	}
	for _, vk := range viewKeys {
		if vk.key == key {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return Tf(s.Lang, "note.notnum", T(s.Lang, "param."+key), value, FormatNum(s.viewValue(vk)))
			}
			return s.setView(vk, v)
		}
	}
	n, ok := s.Experiment.SetURL(key, value)
	if !ok {
		return Tf(s.Lang, "note.unknown", key)
	}
	return s.noteText(n)
}

// SetNum sets a knob (or a view key) to v in the page's unit, clamped with a note.
func (s *State) SetNum(key string, v float64) string { return s.Set(key, FormatNum(v)) }

// viewValue is a view key's value.
func (s *State) viewValue(vk viewKey) float64 {
	if vk.field == nil {
		return float64(s.View.Sel)
	}
	return *vk.field(&s.View)
}

// setView stores a view key's value clamped into its range.
func (s *State) setView(vk viewKey, v float64) string {
	label := T(s.Lang, "param."+vk.key)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.storeView(vk, vk.d)
		return Tf(s.Lang, "note.nan", label, v, FormatNum(vk.d))
	}
	orig := v
	if vk.whole {
		v = math.Round(v)
	}
	c := math.Max(vk.min, math.Min(vk.max, v))
	s.storeView(vk, c)
	if c != v {
		return Tf(s.Lang, "note.range", label, FormatNum(orig), FormatNum(vk.min), FormatNum(vk.max), FormatNum(c))
	}
	return ""
}

func (s *State) storeView(vk viewKey, v float64) {
	if vk.field == nil {
		s.View.Sel = int(v)
		return
	}
	*vk.field(&s.View) = v
}

// pageKeys are URL keys of the page, not of the simulation (language,
// chapter, embed mode): ParseQuery leaves them to the page.
var pageKeys = map[string]bool{"lang": true, "chapter": true, "embed": true, "cmp": true, "proj": true, "speed": true}

// ParseQuery builds a state from a URL query: a preset first (if named),
// then every other key on top. It returns the notes about clamped or
// ignored values.
func ParseQuery(q string) (State, []string) { return ParseQueryIn(q, "") }

// ParseQueryIn is ParseQuery with its notes in lang.
func ParseQueryIn(q, lang string) (State, []string) {
	s := DefaultState()
	s.Lang = lang
	var notes []string
	vals, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil {
		notes = append(notes, Tf(lang, "note.badlink", err.Error()))
		return s, notes
	}
	// A chapter's link opens on the chapter's preset, with the link's own
	// settings on top (a hand-written ?chapter=demo4&rate=30 keeps its rate).
	if ch, _, ok := ChapterByID(vals.Get("chapter")); ok && vals.Get("preset") == "" {
		vals.Set("preset", ch.Preset)
	}
	if p := vals.Get("preset"); p != "" {
		if pr, ok := scenario.PresetByName(p); ok {
			s.applyWindow(pr)
		}
	}
	labAliases(vals)
	scenarioNotes, other, preset := s.Experiment.ParseQueryWith(vals, s.pick)
	s.Preset = preset
	for i := range scenarioNotes {
		n := &scenarioNotes[i]
		switch n.Key {
		case "nopreset":
			notes = append(notes, Tf(lang, "note.nopreset", n.Args[0]))
		case "noprofile":
			notes = append(notes, Tf(lang, "note.noprofile", n.Args[0], n.Args[1]))
		default:
			notes = append(notes, s.noteText(n))
		}
	}
	keys := make([]string, 0, len(other))
	for k := range other {
		if !pageKeys[k] && !strings.HasPrefix(k, PairPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if note := s.Set(k, other.Get(k)); note != "" {
			notes = append(notes, note)
		}
	}
	return s, notes
}

// applyWindow sets the view to the preset's window.
func (s *State) applyWindow(p scenario.Preset) {
	s.View.T0, s.View.Span = p.Window.T0, p.Window.Span
}

// ApplyPreset writes the preset's experiment and window over s.
func (s *State) ApplyPreset(p scenario.Preset) {
	p.Apply(&s.Experiment)
	s.Preset = p.Name
	s.applyWindow(p)
}

// Query is the URL query that reproduces s: the preset, the experiment
// (scenario's order), then the view.
func (s State) Query() string {
	var b strings.Builder
	if s.Preset != "" {
		b.WriteString("preset=" + url.QueryEscape(s.Preset) + "&")
	}
	b.WriteString(s.Experiment.Query())
	for _, vk := range viewKeys {
		b.WriteString("&" + vk.key + "=" + FormatNum(s.viewValue(vk)))
	}
	return b.String()
}

// FormatNum writes a number the shortest way that reads back the same.
func FormatNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Presets are the lecture's four demos, the lab's pair and DistServe's pair
// (scenario's: the CLI's settings for the same demos).
var Presets = scenario.Presets

// PresetByName finds a preset by its link name.
func PresetByName(name string) (scenario.Preset, bool) { return scenario.PresetByName(name) }

// Control is one numeric control of the form: a knob of the experiment,
// its element's id its URL key.
type Control struct{ *scenario.Knob }

// Controls are the form's numeric controls, in the knob table's order.
func Controls() []Control {
	var out []Control
	for i := range scenario.Knobs {
		k := &scenario.Knobs[i]
		if k.URL != "" && k.Kind != scenario.Choice {
			out = append(out, Control{k})
		}
	}
	return out
}

// ControlByKey finds a control by its URL key.
func ControlByKey(key string) (Control, bool) {
	k, ok := scenario.KnobByURL(key)
	if !ok || k.Kind == scenario.Choice {
		return Control{}, false
	}
	return Control{k}, true
}

// Value is the control's value in s, in the page's unit. The budget shows
// what the policy runs with (its default when the experiment leaves it 0).
func (c Control) Value(s State) float64 {
	if c.Name == "budget" {
		return float64(s.EffectiveBudget())
	}
	return roundPage(c.Get(&s.Experiment) * c.Scale())
}

// roundPage drops the float noise a unit's scale leaves (0.0015*1e3).
func roundPage(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// Picked reports whether s already has the settings of q (a table row's
// pick, "k=v&k2=v2"): applying them would change nothing.
func (s State) Picked(q string) bool {
	c := s.Clone()
	for _, kv := range strings.Split(q, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			c.Set(k, v)
		}
	}
	return c.Query() == s.Query()
}

// labAliases gives a lab link's short requests the lengths it names as
// prompt and output where it has no sin or sout: those were the lab's
// keys before it had its own, and such a link keeps its lengths.
func labAliases(vals url.Values) {
	if vals.Get("workload") != scenario.Lab {
		return
	}
	for old, key := range map[string]string{"prompt": "sin", "output": "sout"} {
		if _, has := vals[key]; !has && vals.Has(old) {
			vals.Set(key, vals.Get(old))
		}
	}
}
