package sim

// Profiles: the step model's modelling choices and constants as data. A
// profile is one JSON file; `lecture` and `vllm` ship embedded
// (sim/profiles/*.json), a user's file is parsed with ParseProfile. Every
// constant carries where its value came from, so the page and the CLI can
// show it beside the value.
//
// For a page: ProfileNames and BuiltinProfile (or ParseProfile on an
// upload) list and load profiles; Resolve(gpu) gives each constant with its
// value, unit, meaning and source, GPUNote whether the GPU was fitted;
// Apply / ApplyConfig set a profile on a step model or engine config;
// StepConstants reads the constants back off a step model. Calibration
// from an uploaded file is calibrate.Lab (package sim/calibrate).

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"servelab/hwspecs"
)

//go:embed profiles/*.json
var profileFiles embed.FS

// DefaultProfile is the profile of the lecture's presets and `servelab demo`.
const DefaultProfile = "lecture"

// Constant is one value of a profile and where it came from.
type Constant struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
}

// GPUFit is a profile's constants for one GPU, fitted to published points.
type GPUFit struct {
	Points    []string            `json:"points,omitempty"` // ids of the published points they were fitted to
	Note      string              `json:"note,omitempty"`
	Constants map[string]Constant `json:"constants"`
}

// Profile is a step model's modelling choices (Physics) and constants:
// profile-wide values, overridden per GPU where points were fitted.
type Profile struct {
	Name        string              `json:"name"`
	Title       string              `json:"title"`
	Description string              `json:"description,omitempty"`
	Physics     Physics             `json:"physics"`
	Constants   map[string]Constant `json:"constants"`
	GPUs        map[string]GPUFit   `json:"gpus,omitempty"`
	// Unfitted is said of a GPU without its own entry in GPUs.
	Unfitted string `json:"unfitted_note,omitempty"`
	// Calibrates names the constants `servelab calibrate` fits within this
	// profile (default eff_compute, eff_mem, overhead).
	Calibrates []string `json:"calibrates,omitempty"`
	// CrossValidated is how far the profile's predictions are from
	// published figures it was not fitted to (see Trust); written by the fit.
	CrossValidated *CrossValidated `json:"cross_validated,omitempty"`
}

// The regimes a prediction's error is stated for (CVError.Regime).
const (
	RegimeTTFT       = "ttft"       // a prompt's prefill: time to first token
	RegimeTPOT       = "tpot"       // a decode step: time per output token, inter-token latency
	RegimeThroughput = "throughput" // requests or tokens per second at load
)

// Regimes lists the regimes a profile's cross-validated error is kept for.
func Regimes() []string { return []string{RegimeTTFT, RegimeTPOT, RegimeThroughput} }

// CrossValidated is a profile's error on published points held out of its
// fit: each point predicted by a fit made without it (k-fold).
type CrossValidated struct {
	// Method says how the points were split and where they are.
	Method string    `json:"method"`
	Errors []CVError `json:"errors"`
}

// CVError is the held-out error of one regime on one GPU ("" for all GPUs).
type CVError struct {
	Regime string `json:"regime"`
	GPU    string `json:"gpu,omitempty"`
	Points int    `json:"points"`
	// Median is the median |predicted/published - 1| over the points.
	Median float64 `json:"median_abs_error"`
	// Within20 is the fraction of the points within 20%.
	Within20 float64 `json:"within_20pct"`
}

// minTrustPoints is the fewest held-out points a GPU's own error needs;
// with fewer, Trust states the error over all GPUs.
const minTrustPoints = 3

// Trust returns the profile's cross-validated error for a prediction in
// regime (RegimeTTFT, RegimeTPOT, RegimeThroughput) on gpu: the GPU's own
// held-out error where it has at least three points in that regime, else
// the error over all GPUs; and a note saying it ("±6% (cross-validated,
// H100-SXM)"). ok is false when the profile states no error for the regime.
func (p *Profile) Trust(regime, gpu string) (e CVError, note Note, ok bool) {
	if p == nil || p.CrossValidated == nil {
		return CVError{}, Note{}, false
	}
	want := ""
	if g, err := hwspecs.Get(gpu); err == nil {
		want = g.Name
	}
	var all CVError
	haveAll := false
	for _, c := range p.CrossValidated.Errors {
		if c.Regime != regime || c.Points == 0 {
			continue
		}
		if c.GPU == "" {
			all, haveAll = c, true
			continue
		}
		if h, err := hwspecs.Get(c.GPU); err == nil && h.Name == want && c.Points >= minTrustPoints {
			return c, Say("trust.gpu", "±%.0f%% (cross-validated, %s)", 100*c.Median, h.Name), true
		}
	}
	if !haveAll {
		return CVError{}, Note{}, false
	}
	return all, Say("trust.all", "±%.0f%% (cross-validated, all GPUs)", 100*all.Median), true
}

// TrustFor is Trust for a prediction of step model s in regime, when s
// is this profile's as validated: its GPU, 2-byte weights (the published
// points are all FP16/BF16; FP8 was not validated). ok is false otherwise.
func (p *Profile) TrustFor(s StepModel, regime string) (note Note, ok bool) {
	if p == nil || s.Profile != p.Name || s.DtypeBytes != 2 {
		return Note{}, false
	}
	_, note, ok = p.Trust(regime, s.GPU.Name)
	return note, ok
}

// check returns an error naming the first entry with an unknown regime,
// a GPU not in the catalogue, or a value out of range.
func (cv *CrossValidated) check() error {
	for i, c := range cv.Errors {
		if !slices.Contains(Regimes(), c.Regime) {
			return fmt.Errorf("profile cross_validated.errors[%d]: unknown regime %q; valid: %s", i, c.Regime, strings.Join(Regimes(), ", "))
		}
		if c.GPU != "" {
			if _, err := hwspecs.Get(c.GPU); err != nil {
				return fmt.Errorf("profile cross_validated.errors[%d]: %w", i, err)
			}
		}
		if c.Points < 0 || !(c.Median >= 0 && c.Median < 100) || !(c.Within20 >= 0 && c.Within20 <= 1) {
			return fmt.Errorf("profile cross_validated.errors[%d]: points %d, median %g, within_20pct %g out of range", i, c.Points, c.Median, c.Within20)
		}
	}
	return nil
}

// ConstantInfo describes one constant a profile may set.
type ConstantInfo struct {
	Name    string  `json:"name"` // as in profiles, calibrate --json and the CLI flags (eff_compute = --eff-compute)
	Unit    string  `json:"unit"` // "" (a fraction or number) or "s"
	Meaning string  `json:"meaning"`
	Lo, Hi  float64 `json:"-"`
	get     func(*StepModel) float64
	set     func(*StepModel, float64)
}

// Constants is every constant a profile may set, in display order.
var constantInfos = []ConstantInfo{
	{"eff_compute", "", "fraction of peak FLOP/s the GEMMs reach", 0.01, 1,
		func(s *StepModel) float64 { return s.EffCompute }, func(s *StepModel, v float64) { s.EffCompute = v }},
	{"eff_mem", "", "fraction of peak bandwidth reading the weights", 0.01, 1,
		func(s *StepModel) float64 { return s.EffMem }, func(s *StepModel, v float64) { s.EffMem = v }},
	{"eff_kv", "", "fraction of peak bandwidth attention's KV-cache reads reach", 0.01, 1,
		func(s *StepModel) float64 { return s.Physics.EffKV }, func(s *StepModel, v float64) { s.Physics.EffKV = v }},
	{"roofline_p", "", "p of the smooth roofline (c^p + m^p)^(1/p); 0 is the hard max", 0, 64,
		func(s *StepModel) float64 { return s.Physics.RooflineP }, func(s *StepModel, v float64) { s.Physics.RooflineP = v }},
	{"overhead", "s", "fixed time per iteration (scheduling, launches)", 0, 1,
		func(s *StepModel) float64 { return s.Overhead }, func(s *StepModel, v float64) { s.Overhead = v }},
	{"seq_cost", "s", "CPU time per sequence in an iteration (sampling, detokenising, bookkeeping)", 0, 0.1,
		func(s *StepModel) float64 { return s.Physics.SeqCost }, func(s *StepModel, v float64) { s.Physics.SeqCost = v }},
	{"req_cost", "s", "CPU time per prompt starting its prefill (tokenising, admission)", 0, 1,
		func(s *StepModel) float64 { return s.Physics.ReqCost }, func(s *StepModel, v float64) { s.Physics.ReqCost = v }},
	{"req_latency", "s", "time a request spends outside the engine (HTTP, tokenising, detokenising): adds to TTFT and E2E, occupies no iteration", 0, 10,
		func(s *StepModel) float64 { return s.Physics.ReqLatency }, func(s *StepModel, v float64) { s.Physics.ReqLatency = v }},
	{"allreduce_eff", "", "fraction of the link bandwidth an all-reduce reaches (TP > 1)", 0.01, 1,
		func(s *StepModel) float64 { return s.AllReduceEff }, func(s *StepModel, v float64) { s.AllReduceEff = v }},
	{"collective_latency", "s", "fixed time per all-reduce, two per layer (TP > 1)", 0, 0.1,
		func(s *StepModel) float64 { return s.Physics.CollectiveLatency }, func(s *StepModel, v float64) { s.Physics.CollectiveLatency = v }},
}

// Get returns the constant's value in s.
func (c ConstantInfo) Get(s *StepModel) float64 { return c.get(s) }

// Set sets the constant to v in s.
func (c ConstantInfo) Set(s *StepModel, v float64) { c.set(s, v) }

// ConstantInfos lists the constants a profile may set, in display order.
func ConstantInfos() []ConstantInfo { return append([]ConstantInfo(nil), constantInfos...) }

func constantInfo(name string) (ConstantInfo, bool) {
	for _, c := range constantInfos {
		if c.Name == name {
			return c, true
		}
	}
	return ConstantInfo{}, false
}

func constantNames() string {
	n := make([]string, len(constantInfos))
	for i, c := range constantInfos {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}

// ProfileNames lists the embedded profiles, sorted.
func ProfileNames() []string {
	ents, _ := profileFiles.ReadDir("profiles")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(out)
	return out
}

// BuiltinProfile returns an embedded profile by name (lecture, vllm).
func BuiltinProfile(name string) (*Profile, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, n := range ProfileNames() {
		if n == key {
			data, err := profileFiles.ReadFile("profiles/" + n + ".json")
			if err != nil {
				return nil, err
			}
			p, err := ParseProfile(data)
			if err != nil {
				return nil, fmt.Errorf("embedded profile %s: %w", n, err)
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown profile %q; built in: %s (or a profile JSON file)", name, strings.Join(ProfileNames(), ", "))
}

// ParseProfile reads a profile JSON, refusing unknown keys, unknown
// constants, out-of-range values and GPUs not in the catalogue, naming each.
//
// It also refuses what follows the profile's object (trailing garbage),
// two GPU entries that name one GPU (hwspecs matches names in any case, so
// which applied would depend on map order), and control characters in its
// texts (an ANSI escape in a source would drive the terminal it is printed on).
func ParseProfile(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	p := &Profile{}
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("profile JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("profile JSON: something follows the profile's object at byte %d", dec.InputOffset())
	}
	if strings.TrimSpace(p.Name) == "" {
		return nil, fmt.Errorf("profile: name missing")
	}
	if err := p.checkTexts(); err != nil {
		return nil, err
	}
	if err := checkConstants("constants", p.Constants); err != nil {
		return nil, err
	}
	if p.CrossValidated != nil {
		if err := p.CrossValidated.check(); err != nil {
			return nil, err
		}
	}
	for _, n := range p.Calibrates {
		if _, ok := constantInfo(n); !ok {
			return nil, fmt.Errorf("profile calibrates: unknown constant %q; valid: %s", n, constantNames())
		}
	}
	names := make([]string, 0, len(p.GPUs))
	for g := range p.GPUs {
		names = append(names, g)
	}
	sort.Strings(names)
	seen := map[string]string{} // the catalogue's name -> the entry's
	for _, g := range names {
		h, err := hwspecs.Get(g)
		if err != nil {
			return nil, fmt.Errorf("profile gpus.%s: %w", g, err)
		}
		if other, ok := seen[h.Name]; ok {
			return nil, fmt.Errorf("profile gpus: %q and %q both name %s: keep one entry", other, g, h.Name)
		}
		seen[h.Name] = g
		if err := checkConstants("gpus."+g+".constants", p.GPUs[g].Constants); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkTexts returns an error naming the first text of the profile that
// holds a control character (tab and newline allowed), nil otherwise.
func (p *Profile) checkTexts() error {
	texts := [][2]string{{"name", p.Name}, {"title", p.Title}, {"description", p.Description}, {"unfitted_note", p.Unfitted}}
	if p.CrossValidated != nil {
		texts = append(texts, [2]string{"cross_validated.method", p.CrossValidated.Method})
	}
	for n, c := range p.Constants {
		texts = append(texts, [2]string{"constants." + n, n}, [2]string{"constants." + n + ".source", c.Source})
	}
	for g, fit := range p.GPUs {
		texts = append(texts, [2]string{"gpus", g}, [2]string{"gpus." + g + ".note", fit.Note})
		for i, pt := range fit.Points {
			texts = append(texts, [2]string{fmt.Sprintf("gpus.%s.points[%d]", g, i), pt})
		}
		for n, c := range fit.Constants {
			texts = append(texts, [2]string{"gpus." + g + ".constants." + n, n}, [2]string{"gpus." + g + ".constants." + n + ".source", c.Source})
		}
	}
	for _, t := range texts {
		for _, r := range t[1] {
			if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f) {
				return fmt.Errorf("profile %s: holds the control character %U (profile texts are printed on terminals)", strconv.Quote(t[0]), r)
			}
		}
	}
	return nil
}

func checkConstants(where string, cs map[string]Constant) error {
	for name, c := range cs {
		info, ok := constantInfo(name)
		if !ok {
			return fmt.Errorf("profile %s.%s: unknown constant; valid: %s", where, name, constantNames())
		}
		if !(c.Value >= info.Lo && c.Value <= info.Hi) {
			return fmt.Errorf("profile %s.%s: %g is outside [%g, %g]", where, name, c.Value, info.Lo, info.Hi)
		}
	}
	return nil
}

// gpuFit finds the GPU's own entry, matching names as hwspecs.Get does.
func (p *Profile) gpuFit(gpu string) (GPUFit, bool) {
	want, err := hwspecs.Get(gpu)
	if err != nil {
		return GPUFit{}, false
	}
	for g, fit := range p.GPUs {
		if h, err := hwspecs.Get(g); err == nil && h.Name == want.Name {
			return fit, true
		}
	}
	return GPUFit{}, false
}

// ResolvedConstant is one constant as a profile sets it for one GPU.
type ResolvedConstant struct {
	ConstantInfo
	Value  float64 `json:"value"`
	Source string  `json:"source"`
}

// Resolve is the profile's constants for gpu, in display order: the GPU's
// own values where it has them, else the profile-wide ones.
func (p *Profile) Resolve(gpu string) []ResolvedConstant {
	fit, _ := p.gpuFit(gpu)
	var out []ResolvedConstant
	for _, info := range constantInfos {
		c, ok := fit.Constants[info.Name]
		if !ok {
			c, ok = p.Constants[info.Name]
		}
		if ok {
			out = append(out, ResolvedConstant{ConstantInfo: info, Value: c.Value, Source: c.Source})
		}
	}
	return out
}

// GPUNote says whether gpu has constants of its own in this profile (and
// fitted to which points) or falls back to the profile-wide values.
func (p *Profile) GPUNote(gpu string) (fitted bool, note string) {
	fit, ok := p.gpuFit(gpu)
	if !ok {
		if p.Unfitted != "" {
			return false, p.Unfitted
		}
		return false, fmt.Sprintf("%s has no constants of its own in profile %s: the profile-wide values apply", gpu, p.Name)
	}
	note = fit.Note
	if note == "" && len(fit.Points) > 0 {
		note = fmt.Sprintf("fitted to %d published points on %s", len(fit.Points), gpu)
	}
	return true, note
}

// Apply sets the profile's physics and its constants for s.GPU on s (the
// model, GPU, dtype and TP stay), with the constants it does not set at
// their defaults, and prepares it.
func (p *Profile) Apply(s StepModel) (StepModel, error) {
	out := StepModel{Model: s.Model, GPU: s.GPU, DtypeBytes: s.DtypeBytes, TP: s.TP,
		Physics: p.Physics, Profile: p.Name, Overhead: DefaultOverhead}
	// Physics' constants come from Constants only.
	out.Physics.RooflineP, out.Physics.EffKV, out.Physics.CollectiveLatency, out.Physics.SeqCost, out.Physics.ReqCost, out.Physics.ReqLatency = 0, 0, 0, 0, 0, 0
	for _, c := range p.Resolve(s.GPU.Name) {
		c.set(&out, c.Value)
	}
	return out.Prepare()
}

// ApplyConfig is Apply on the configuration's step model.
func (p *Profile) ApplyConfig(c Config) (Config, error) {
	s, err := p.Apply(c.Step)
	c.Step = s
	return c, err
}

// With returns a copy of the profile whose constant name, for gpu, is v
// from source (a flag the user typed, a calibration). The copy states no
// cross-validated error: its constants are not the ones validated.
func (p *Profile) With(gpu, name string, v float64, source string) (*Profile, error) {
	info, ok := constantInfo(name)
	if !ok {
		return nil, fmt.Errorf("unknown constant %q; valid: %s", name, constantNames())
	}
	if !(v >= info.Lo && v <= info.Hi) || math.IsNaN(v) {
		return nil, fmt.Errorf("%s: %g is outside [%g, %g]", name, v, info.Lo, info.Hi)
	}
	g, err := hwspecs.Get(gpu)
	if err != nil {
		return nil, err
	}
	q := p.Clone()
	q.CrossValidated = nil
	fit, _ := q.gpuFit(g.Name)
	for k := range q.GPUs { // one key per GPU, the catalogue's spelling
		if h, err := hwspecs.Get(k); err == nil && h.Name == g.Name {
			delete(q.GPUs, k)
		}
	}
	cs := map[string]Constant{}
	for k, c := range fit.Constants {
		cs[k] = c
	}
	cs[name] = Constant{Value: v, Source: source}
	fit.Constants = cs
	if q.GPUs == nil {
		q.GPUs = map[string]GPUFit{}
	}
	q.GPUs[g.Name] = fit
	return q, nil
}

// Clone returns a deep copy of p: its constants and GPU fits are its own.
func (p *Profile) Clone() *Profile {
	q := *p
	q.Constants = map[string]Constant{}
	for k, c := range p.Constants {
		q.Constants[k] = c
	}
	q.GPUs = map[string]GPUFit{}
	for k, f := range p.GPUs {
		f.Points = append([]string(nil), f.Points...)
		cs := map[string]Constant{}
		for n, c := range f.Constants {
			cs[n] = c
		}
		f.Constants = cs
		q.GPUs[k] = f
	}
	if p.CrossValidated != nil {
		cv := *p.CrossValidated
		cv.Errors = slices.Clone(cv.Errors)
		q.CrossValidated = &cv
	}
	return &q
}

// Marshal writes the profile as indented JSON (map keys sorted, so the same
// profile always gives the same bytes).
func (p *Profile) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// StepConstants reads the constants a profile may set off a step model, in
// display order, with sources from prof where it sets them (nil: none).
func StepConstants(s StepModel, prof *Profile) []ResolvedConstant {
	src := map[string]string{}
	if prof != nil {
		for _, c := range prof.Resolve(s.GPU.Name) {
			src[c.Name] = c.Source
		}
	}
	var out []ResolvedConstant
	for _, info := range constantInfos {
		v := info.get(&s)
		if _, ok := src[info.Name]; !ok && v == 0 {
			continue // a refinement that is off
		}
		out = append(out, ResolvedConstant{ConstantInfo: info, Value: v, Source: src[info.Name]})
	}
	return out
}
