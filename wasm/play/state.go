//go:build js && wasm

// Package play is the playground's model, apart from the page: the settings
// (State, the URL and presets), the simulation the view draws (Simulate) and
// the measured runs laid over it. It has no DOM and no canvas, so its tests
// run under node, the same wasm runtime as the browser.
package play

import (
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"servelab/hwspecs"
	"servelab/modelspecs"
)

// State is every setting the page shows: the workload, the scheduler, the
// hardware, the assumptions, the SLOs and the view. The URL holds all of it,
// so a shared link reproduces the view exactly.
type State struct {
	Preset   string
	Workload string // "poisson" or "lab"
	Policy   string // "prefill-first", "chunked", "disagg"
	Model    string
	GPU      string
	// Profile is the step model's profile (profile.go); "" is the lecture's.
	Profile string
	// Numbers, keyed by the param table below.
	Num map[string]float64
	// Lang is the language of the notes Set returns ("" is English); it
	// is the page's, not part of the simulation or its query.
	Lang string
}

// Param is one numeric setting: its URL key (also the control's id), label,
// range, step and default. Values outside the range are clamped with a note.
type Param struct {
	Key, Label string
	Min, Max   float64
	Step       float64
	Def        float64
	Unit       string
}

// Params is every numeric setting. Keep keys short: they are the URL.
var Params = []Param{
	{"prompt", "Prompt length", 1, 32768, 1, 512, "tokens"},
	{"output", "Output length", 1, 4096, 1, 64, "tokens"},
	{"rate", "Arrival rate", 0.1, 200, 0.1, 20, "req/s"},
	{"n", "Requests", 1, 20000, 1, 1500, ""},
	{"seed", "Seed", 0, 1e9, 1, 1, ""},
	{"batch", "Decode batch (demo 1)", 1, 512, 1, 32, ""},
	{"ctx", "Context per sequence (demo 1)", 1, 32768, 1, 700, "tokens"},
	{"budget", "Chunk budget", 16, 16384, 16, 2048, "tokens/step"},
	{"bdec", "Budget counts decode tokens", 0, 1, 1, 1, ""},
	{"streams", "Short streams", 1, 256, 1, 16, ""},
	{"long", "Long prompt", 1, 131072, 1, 32000, "tokens"},
	{"longout", "Long output", 1, 4096, 1, 16, "tokens"},
	{"inject", "Inject long prompt at", 0, 600, 0.5, 20, "s"},
	{"duration", "Lab duration", 1, 600, 1, 60, "s"},
	{"xp", "Prefill GPUs", 1, 8, 1, 2, ""},
	{"yd", "Decode GPUs", 1, 8, 1, 1, ""},
	{"tp", "Tensor parallel", 1, 8, 1, 1, ""},
	{"effc", "Compute efficiency", 0.05, 1, 0.01, 0.60, ""},
	{"effm", "Memory efficiency", 0.05, 1, 0.01, 0.85, ""},
	{"ovh", "Overhead per step", 0, 50, 0.1, 1, "ms"},
	{"slottft", "TTFT SLO", 1, 100000, 1, 100, "ms"},
	{"slotpot", "TPOT SLO", 0.1, 10000, 0.1, 15, "ms"},
	{"lendist", "Length distribution: fixed (0), uniform (1), lognormal (2)", 0, 2, 1, 0, ""},
	{"spread", "Length spread", 0, 2, 0.05, 0.5, ""},
	{"ideal", "Ideal engine (no memory or sequence limits)", 0, 1, 1, 1, ""},
	{"maxseqs", "Max sequences", 1, 4096, 1, 256, ""},
	{"gpumem", "GPU memory utilization", 0.05, 1, 0.01, 0.9, ""},
	{"block", "KV block size", 1, 1024, 1, 16, "tokens"},
	{"preempt", "KV cache full: preempt (1) or wait (0)", 0, 1, 1, 1, ""},
	{"t0", "View start", 0, 1e6, 0.001, 0, "s"},
	{"span", "View span", 0.001, 1e6, 0.001, 1, "s"},
	{"cursor", "Playback position", -1, 1e6, 0.001, -1, "s"},
	{"sel", "Selected step", -1, 1e8, 1, -1, ""},
}

var numIndex = func() map[string]*Param {
	m := map[string]*Param{}
	for i := range Params {
		m[Params[i].Key] = &Params[i]
	}
	return m
}()

var (
	workloads = []string{"poisson", "lab", "trace"}
	policies  = []string{"prefill-first", "chunked", "disagg", "prefill-only", "decode-only"}
)

// DefaultState is the page with no URL: the lecture's colocated setup.
func DefaultState() State {
	s := State{Workload: "poisson", Policy: "prefill-first", Model: modelspecs.Default, GPU: hwspecs.Default, Num: map[string]float64{}}
	for _, n := range Params {
		s.Num[n.Key] = n.Def
	}
	return s
}

// Clone copies s (the map too).
func (s State) Clone() State {
	c := s // Lang too
	c.Num = make(map[string]float64, len(s.Num))
	for k, v := range s.Num {
		c.Num[k] = v
	}
	return c
}

// I is a numeric setting as an int.
func (s State) I(key string) int { return int(math.Round(s.Num[key])) }

// F is a numeric setting.
func (s State) F(key string) float64 { return s.Num[key] }

// set stores v for key clamped into its range (and rounded to its step when
// the step is whole), and returns a note when it had to change the value.
func (s *State) set(key string, v float64) string {
	n, ok := numIndex[key]
	if !ok {
		return Tf(s.Lang, "note.unknown", key)
	}
	orig := v
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.Num[key] = n.Def
		return Tf(s.Lang, "note.nan", s.label(n), orig, FormatNum(n.Def))
	}
	if n.Step >= 1 {
		v = math.Round(v) // whole-number settings round silently
	}
	clamped := math.Max(n.Min, math.Min(n.Max, v))
	s.Num[key] = clamped
	if clamped != v {
		v = clamped
		return Tf(s.Lang, "note.range", s.label(n), FormatNum(orig), FormatNum(n.Min), FormatNum(n.Max), FormatNum(v))
	}
	return ""
}

// label is a setting's name in the notes' language.
func (s *State) label(n *Param) string {
	if l := T(s.Lang, "param."+n.Key); l != "param."+n.Key {
		return l
	}
	return n.Label
}

// setChoice stores a string setting if it is one of the valid values.
func (s *State) setChoice(key, v string) string {
	var valid []string
	var dst *string
	switch key {
	case "workload":
		valid, dst = workloads, &s.Workload
	case "policy":
		valid, dst = policies, &s.Policy
	case "model":
		valid, dst = ModelNames(), &s.Model
	case "gpu":
		valid, dst = hwspecs.Names(), &s.GPU
	case "profile":
		return s.setProfile(v)
	case "preset":
		if _, ok := PresetByName(v); ok || v == "" {
			s.Preset = v
			return ""
		}
		return Tf(s.Lang, "note.unknownpreset", v)
	default:
		return Tf(s.Lang, "note.unknown", key)
	}
	for _, x := range valid {
		if strings.EqualFold(x, v) {
			*dst = x
			return ""
		}
	}
	return Tf(s.Lang, "note.choice", key, v, strings.Join(valid, ", "), *dst)
}

// Set applies one key=value from the URL, a control or the JS API.
func (s *State) Set(key, value string) string {
	switch key {
	case "workload", "policy", "model", "gpu", "preset", "profile":
		return s.setChoice(key, value)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil {
		if n, ok := numIndex[key]; ok {
			return Tf(s.Lang, "note.notnum", s.label(n), value, FormatNum(s.Num[key]))
		}
	}
	return s.set(key, v)
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
	if p := vals.Get("preset"); p != "" {
		if pr, ok := PresetByName(p); ok {
			pr.Apply(&s)
		} else {
			notes = append(notes, Tf(lang, "note.nopreset", p))
		}
	}
	if p := vals.Get("profile"); p != "" {
		// The profile's values come first (for the link's GPU); the
		// link's own effc, effm and ovh then override them.
		if g := vals.Get("gpu"); g != "" {
			s.Set("gpu", g)
		}
		if note := s.Set("profile", p); note != "" {
			notes = append(notes, note)
		} else {
			ApplyProfile(&s)
		}
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		if k != "preset" && k != "profile" && !pageKeys[k] && !strings.HasPrefix(k, PairPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if note := s.Set(k, vals.Get(k)); note != "" {
			notes = append(notes, note)
		}
	}
	return s, notes
}

// Query is the URL query that reproduces s: every setting, in a fixed order.
func (s State) Query() string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	if s.Preset != "" {
		add("preset", s.Preset)
	}
	add("workload", s.Workload)
	add("policy", s.Policy)
	add("model", s.Model)
	add("gpu", s.GPU)
	if s.Profile != "" {
		add("profile", s.Profile)
	}
	for _, n := range Params {
		add(n.Key, FormatNum(s.Num[n.Key]))
	}
	return b.String()
}

// FormatNum writes a number the shortest way that reads back the same.
func FormatNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Preset is a named set of settings a lecture can open by link (?preset=NAME).
type Preset struct {
	Name, Title, About string
	Workload, Policy   string
	Num                map[string]float64
}

// Apply sets the preset's settings on s (the others keep their values).
func (p Preset) Apply(s *State) {
	s.Preset = p.Name
	if s.Profile != "" { // the lecture's presets run the lecture's profile
		s.Profile = ""
		ApplyProfile(s)
	}
	if p.Workload != "" {
		s.Workload = p.Workload
	}
	if p.Policy != "" {
		s.Policy = p.Policy
	}
	for k, v := range p.Num {
		s.set(k, v)
	}
}

// Presets are the lecture's four demos, the lab's pair and DistServe's pair.
var Presets = []Preset{
	{"demo1", "Lecture demo 1: one prefill inside a decode batch", "A 2048-token prompt lands in a step with running decodes: that step takes several times longer and every decoding user waits.",
		"poisson", "chunked", map[string]float64{"prompt": 2048, "output": 64, "rate": 4, "n": 300, "budget": 8192, "bdec": 1, "t0": 0, "span": 3}},
	{"demo2", "Lecture demo 2: P90 TTFT and TPOT vs rate (colocated)", "Prefill-first on one H100, 512/64 tokens: raise the rate and P90 TPOT climbs from ~7.7 ms to tens of ms.",
		"poisson", "prefill-first", map[string]float64{"prompt": 512, "output": 64, "rate": 20, "n": 1500, "t0": 0, "span": 1}},
	{"demo3", "Lecture demo 3: goodput under SLOs", "TTFT ≤ 100 ms and TPOT ≤ 15 ms at 90% attainment: the colocated GPU's goodput is capped by TPOT.",
		"poisson", "prefill-first", map[string]float64{"prompt": 512, "output": 64, "rate": 10, "n": 1500, "slottft": 100, "slotpot": 15, "t0": 0, "span": 2}},
	{"demo4", "Lecture demo 4: chunked prefill (Sarathi-Serve)", "Rate 40, a 512-token prefill budget per step (decodes ride along): TPOT falls, TTFT pays.",
		"poisson", "chunked", map[string]float64{"prompt": 512, "output": 64, "rate": 40, "n": 1500, "budget": 512, "bdec": 0, "t0": 0, "span": 0.5}},
	{"lab-unchunked", "Lab: one long prompt, chunking off", "16 short streams in a closed loop; a 32k-token prompt injected at 20 s stalls every stream for the whole prefill.",
		"lab", "prefill-first", map[string]float64{"prompt": 128, "output": 256, "streams": 16, "long": 32000, "longout": 16, "inject": 20, "duration": 60, "t0": 19.5, "span": 3}},
	{"lab-chunked", "Lab: one long prompt, chunked prefill", "The same lab run with a 2048-token budget: the long prompt is cut into chunks and the streams keep flowing.",
		"lab", "chunked", map[string]float64{"prompt": 128, "output": 256, "streams": 16, "long": 32000, "longout": 16, "inject": 20, "duration": 60, "budget": 2048, "bdec": 1, "t0": 19.5, "span": 3}},
	{"distserve-colocated", "DistServe: colocated baseline", "One GPU doing both phases, 512/64 tokens, SLOs 100 ms / 15 ms.",
		"poisson", "prefill-first", map[string]float64{"prompt": 512, "output": 64, "rate": 10, "n": 1500, "slottft": 100, "slotpot": 15, "t0": 0, "span": 2}},
	{"distserve-2p1d", "DistServe: 2 prefill + 1 decode GPUs", "Prefill and decode on separate GPUs, KV moved over the link: each phase meets its own SLO.",
		"poisson", "disagg", map[string]float64{"prompt": 512, "output": 64, "rate": 30, "n": 1500, "xp": 2, "yd": 1, "slottft": 100, "slotpot": 15, "t0": 0, "span": 2}},
}

// PresetByName finds a preset by its link name.
func PresetByName(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
